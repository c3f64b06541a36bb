// RUN: gacc-opt %s -split-input-file -gacc-merge-single-thread-loops="gemm-callees=gemm" | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-merge-single-thread-loops="gemm-callees=gemm distinct-arguments=true" | FileCheck %s --check-prefix=DISTINCT

// A loss sum and the micro-batch loop's carried values (fashion_mlp's
// graph step): between the two one-thread loops lie a kernel of 320
// threads and a GEMM call, which neither write what the first loop reads
// or writes nor read what it writes. The first loop's work runs after
// them, in one one-thread loop with the second's: the kernel and the call
// keep their places, and the free of a buffer the first loop reads moves
// after the merged loop.
// CHECK-LABEL: func.func @across
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK: memref.store {{.*}} : memref<320xf32>
// CHECK: call @gemm(
// CHECK: scf.parallel
// CHECK: memref.load %[[ROWS:.*]][%{{.*}}] : memref<32xf32>
// CHECK: memref.store %{{.*}}, %[[SUM:.*]][] : memref<f32>
// CHECK: memref.load %[[SUM]][] : memref<f32>
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[ROWS]]
// CHECK-NOT: scf.parallel
// CHECK: return
func.func private @gemm(memref<32x10xf32>, memref<10x256xf32>, memref<32x256xf32>)
func.func @across(%x: memref<320xf32>, %w: memref<10x256xf32>, %total: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c320 = arith.constant 320 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.alloc() : memref<32xf32>
  %sum = memref.alloc() : memref<f32>
  %grad = memref.alloc() : memref<32x10xf32>
  %dh = memref.alloc() : memref<32x256xf32>
  %y = memref.alloc() : memref<320xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %s = scf.for %r = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %rows[%r] : memref<32xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %sum[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c320) step (%c1) {
    %v = memref.load %x[%i] : memref<320xf32>
    memref.store %v, %y[%i] : memref<320xf32>
    scf.reduce
  }
  func.call @gemm(%grad, %w, %dh) : (memref<32x10xf32>, memref<10x256xf32>, memref<32x256xf32>) -> ()
  memref.dealloc %rows : memref<32xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %t = memref.load %sum[] : memref<f32>
    %o = memref.load %total[] : memref<f32>
    %n = arith.addf %o, %t : f32
    memref.store %n, %total[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %sum : memref<f32>
  memref.dealloc %grad : memref<32x10xf32>
  memref.dealloc %dh : memref<32x256xf32>
  memref.dealloc %y : memref<320xf32>
  return
}

// -----

// What the first loop's work may not move past: a kernel that reads what
// it writes (%sum), a GEMM call that writes what it reads (%rows as C),
// and a kernel that writes an argument, which may share memory with the
// argument the first loop writes. The runs stay apart: four one-thread
// loops and the two kernels.
// CHECK-LABEL: func.func @conflicts
// CHECK-COUNT-6: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func private @gemm(memref<32x10xf32>, memref<10x256xf32>, memref<32xf32>)
func.func @conflicts(%out: memref<f32>, %other: memref<4xf32>, %a: memref<32x10xf32>, %b: memref<10x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.alloc() : memref<32xf32>
  %sum = memref.alloc() : memref<f32>
  %y = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %sum[] : memref<f32>
    scf.reduce
  }
  // Reads %sum: the store above must come first.
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %sum[] : memref<f32>
    memref.store %v, %y[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %rows[%c0] : memref<32xf32>
    memref.store %v, %sum[] : memref<f32>
    scf.reduce
  }
  // Writes %rows (C), which the loop above reads.
  func.call @gemm(%a, %b, %rows) : (memref<32x10xf32>, memref<10x256xf32>, memref<32xf32>) -> ()
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %out[] : memref<f32>
    scf.reduce
  }
  // Writes an argument, which may be %out's memory.
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %other[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %sum[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %rows : memref<32xf32>
  memref.dealloc %sum : memref<f32>
  memref.dealloc %y : memref<4xf32>
  return
}

// -----

// A weight gradient's GEMM into its accumulator (an argument) between two
// one-thread loops that read and write other arguments (a bf16 step's loss
// sum and carried values): two arguments may share memory, so the run
// ends, unless the caller binds each argument to memory of its own
// (distinct-arguments, the step ABI's promise), when the loops merge.
// CHECK-LABEL: func.func @argument_gemm
// CHECK-COUNT-2: scf.parallel
// DISTINCT-LABEL: func.func @argument_gemm
// DISTINCT: call @gemm(
// DISTINCT: scf.parallel
// DISTINCT-NOT: scf.parallel
// DISTINCT: return
func.func private @gemm(memref<32x10xf32>, memref<32x256xf32>, memref<10x256xf32>)
func.func @argument_gemm(%dy: memref<32x10xf32>, %x: memref<32x256xf32>, %acc: memref<10x256xf32>, %rows: memref<32xf32>, %total: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sum = memref.alloc() : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %rows[%c0] : memref<32xf32>
    memref.store %v, %sum[] : memref<f32>
    scf.reduce
  }
  func.call @gemm(%dy, %x, %acc) : (memref<32x10xf32>, memref<32x256xf32>, memref<10x256xf32>) -> ()
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %t = memref.load %sum[] : memref<f32>
    memref.store %t, %total[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %sum : memref<f32>
  return
}
