// RUN: gacc-opt %s -gacc-merge-single-thread-loops | FileCheck %s
// RUN: gacc-opt %s -gacc-merge-single-thread-loops=max-parameter-bytes=200 | FileCheck %s --check-prefix=PARAMS

// Three one-thread loops that an allocation, a free and a constant
// separate: one loop, the bodies in their order (the first one's
// induction variable replaced by its value). The free is of an argument,
// which may overlap the arguments the first loop reads: it moves after
// the merged loop.
// CHECK-LABEL: func.func @run
// CHECK: %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK-NOT: memref.dealloc
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[X:.*]] = memref.load %arg0[%[[ZERO]]]
// CHECK-NEXT: memref.store %[[X]], %arg1[]
// CHECK-NEXT: %[[Y:.*]] = memref.load %arg1[]
// CHECK-NEXT: memref.store %[[Y]], %[[B]][]
// CHECK-NEXT: %[[Z:.*]] = memref.load %[[B]][]
// CHECK-NEXT: memref.store %[[Z]], %arg0[%[[I]]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %arg2
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @run(%a: memref<4xf32>, %s: memref<f32>, %other: memref<8xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %s[] : memref<f32>
    scf.reduce
  }
  %b = memref.alloc() : memref<f32>
  memref.dealloc %other : memref<8xf32>
  scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
    %y = memref.load %s[] : memref<f32>
    memref.store %y, %b[] : memref<f32>
    scf.reduce
  }
  %two = arith.constant 2 : index
  scf.parallel (%k) = (%c0) to (%c1) step (%c1) {
    %z = memref.load %b[] : memref<f32>
    memref.store %z, %a[%k] : memref<4xf32>
    scf.reduce
  }
  return %b : memref<f32>
}

// What ends a run: a host read, a call, a loop of more than one
// iteration; and loops that are not one thread (two iterations, two
// dimensions, a reduction) are never merged.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-7: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func private @use(memref<f32>)
func.func @kept(%a: memref<4xf32>, %s: memref<f32>, %t: memref<f32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %s[] : memref<f32>
    scf.reduce
  }
  %h = memref.load %s[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %t[] : memref<f32>
    scf.reduce
  }
  func.call @use(%s) : (memref<f32>) -> ()
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %s[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    memref.store %zero, %a[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c1) step (%c1, %c1) {
    memref.store %zero, %a[%i] : memref<4xf32>
    scf.reduce
  }
  %r = scf.parallel (%i) = (%c0) to (%c1) step (%c1) init (%zero) -> f32 {
    scf.reduce(%zero : f32) {
    ^bb0(%l: f32, %m: f32):
      %n = arith.addf %l, %m : f32
      scf.reduce.return %n : f32
    }
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %s[] : memref<f32>
    scf.reduce
  }
  %sum = arith.addf %h, %r : f32
  return %sum : f32
}

// A free of a buffer the first loop reads, between two one-thread loops:
// the loops merge and the free follows the merged loop (and the one after
// it, which reads another freed buffer, both in their order).
// CHECK-LABEL: func.func @delayed_free
// CHECK: %[[A:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: scf.parallel
// CHECK: memref.load %[[A]][]
// CHECK: memref.load %[[B]][]
// CHECK: memref.store %{{.*}}, %[[C]][]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return %[[C]]
func.func @delayed_free(%x: f32) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<f32>
  memref.store %x, %a[] : memref<f32>
  %b = memref.alloc() : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %a[] : memref<f32>
    memref.store %v, %b[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %a : memref<f32>
  %c = memref.alloc() : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %w = memref.load %b[] : memref<f32>
    memref.store %w, %c[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %b : memref<f32>
  return %c : memref<f32>
}

// A run ends where the merged loop would take more than
// max-parameter-bytes of kernel parameters: each rank-0 memref it uses
// is a descriptor of 24 bytes, and 128 bytes are kept for the kernel's
// index arguments. The first two loops take %x, %a and %y (72 + 128 =
// 200 bytes); with the third (%z and %w too, 248) the default limit
// (4352) merges all three, max-parameter-bytes=200 only the first two,
// and the free of %a stays before the third loop, after the two it
// follows.
// CHECK-LABEL: func.func @parameter_limit
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %arg3[]
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc
// CHECK-NEXT: return
// PARAMS-LABEL: func.func @parameter_limit
// PARAMS: %[[A:.*]] = memref.alloc
// PARAMS: scf.parallel
// PARAMS: memref.load %arg0[]
// PARAMS: memref.load %[[A]][]
// PARAMS: }
// PARAMS-NEXT: memref.dealloc %[[A]]
// PARAMS-NEXT: scf.parallel
// PARAMS: memref.load %arg2[]
// PARAMS: }
// PARAMS-NEXT: return
func.func @parameter_limit(%x: memref<f32>, %y: memref<f32>, %z: memref<f32>, %w: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %x[] : memref<f32>
    memref.store %v, %a[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %a[] : memref<f32>
    memref.store %v, %y[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %a : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %z[] : memref<f32>
    memref.store %v, %w[] : memref<f32>
    scf.reduce
  }
  return
}
