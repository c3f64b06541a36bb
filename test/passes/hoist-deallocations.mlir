// RUN: gacc-opt %s -split-input-file -gacc-hoist-deallocations | FileCheck %s

// A dealloc at the end of the block moves up to just after the last use of
// its buffer; the buffer used later keeps its place.
// CHECK-LABEL: func.func @early
// CHECK:      %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: linalg.copy ins(%[[A]] {{.*}} outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.copy ins(%[[B]] {{.*}} outs(%arg0
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @early(%out: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  linalg.copy ins(%b : memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A use through a view counts; a use inside a loop counts as the loop.
// CHECK-LABEL: func.func @views_and_loops
// CHECK:      scf.for
// CHECK:        linalg.copy
// CHECK:      }
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: arith.constant
func.func @views_and_loops(%out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.copy ins(%v : memref<2xf32, strided<[1]>>) outs(%out : memref<2xf32>)
  }
  %unrelated = arith.constant 0 : index
  memref.dealloc %a : memref<4xf32>
  return
}
