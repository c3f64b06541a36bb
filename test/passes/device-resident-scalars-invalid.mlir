// RUN: gacc-opt %s -split-input-file -gacc-device-resident-scalars -verify-diagnostics

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

// A branch on a value read from device memory.
func.func @branch(%flag: memref<i1>) {
  %c = memref.load %flag[] : memref<i1>
  // expected-error @below {{'scf.if' op cannot run on the device's scalars (branch): it branches on a value the device computes}}
  scf.if %c {
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
