// RUN: gacc-opt %s -split-input-file -gacc-device-resident-scalars -verify-diagnostics
// RUN: not gacc-opt %s -split-input-file -gacc-device-resident-scalars="functions=trip_count,nosuch" 2>&1 | FileCheck %s --check-prefix=NAMES
// A name in `functions` that no function has is an error, not a step left
// as it was.
// NAMES: error: gacc-device-resident-scalars: functions names @nosuch, which is not a func.func of this module

// A loop whose trip count is an argument: the graph would bake it.
func.func @trip_count(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'scf.for' op cannot run on the device's scalars (trip_count): its trip count depends on a value the device computes}}
  scf.for %i = %c0 to %n step %c1 {
  }
  return
}

// -----

// A call under a branch on a value read from device memory: its kernels
// could be guarded, the host's call cannot.
func.func private @gemm(memref<4xf32>)
func.func @branch(%flag: memref<i1>, %x: memref<4xf32>) {
  %c = memref.load %flag[] : memref<i1>
  scf.if %c {
    // expected-error @below {{'func.call' op cannot run on the device's scalars (branch): it is called under a branch on a value the device computes}}
    func.call @gemm(%x) : (memref<4xf32>) -> ()
  }
  return
}

// -----

// A call that would need the host to read a per-call argument.
func.func private @host(f32)
func.func @call(%lr: f32) {
  // expected-error @below {{'func.call' op cannot run on the device's scalars (call): operand 0 is a value the device computes or the caller passes per call, which the host never sees}}
  func.call @host(%lr) : (f32) -> ()
  return
}

// -----

// An allocation sized by device data.
func.func @alloc_size(%sizes: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %n = memref.load %sizes[%c0] : memref<1xindex>
  // expected-error @below {{'memref.alloc' op cannot run on the device's scalars (alloc_size): operand 0 is a value}}
  %a = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return
}

// -----

// expected-error @below {{'func.func' op gacc-device-resident-scalars: results must be scalars of one type, got '(f32) -> (f32, i64)'}}
func.func @mixed(%x: f32) -> (f32, i64) {
  %c = arith.constant 0 : i64
  return %x, %c : f32, i64
}

// -----

// A parallel loop whose reduced result the host would read.
func.func @reduced(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'scf.parallel' op cannot run on the device's scalars (reduced): the host would read its reduced results}}
  %s = scf.parallel (%i) = (%c0) to (%c4) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      scf.reduce.return %t : f32
    }
  }
  return %s : f32
}

// -----

// A loop the rewrite does not know (scf.while) carrying a device value.
func.func @while(%x: memref<f32>) {
  %v = memref.load %x[] : memref<f32>
  // expected-error @below {{'scf.while' op cannot run on the device's scalars (while): operand 0 is a value}}
  %r = scf.while (%a = %v) : (f32) -> f32 {
    %c = arith.constant false
    scf.condition(%c) %a : f32
  } do {
  ^bb0(%b: f32):
    scf.yield %b : f32
  }
  return
}
