// RUN: gacc-opt %s -gacc-strided-copies-to-linalg | FileCheck %s

// A copy into a strided view (the bufferized insert_slice of a pad or a
// strided slice's adjoint) becomes linalg.copy, which the pipelines lower
// like any linalg op; a copy between contiguous buffers stays a memcpy.

// CHECK-LABEL: func.func @copies(
// CHECK-SAME: %[[A:[^:]+]]: memref<2x2xf32>, %[[B:[^:]+]]: memref<4x3xf32>, %[[C:[^:]+]]: memref<2x2xf32>)
// CHECK: %[[S:.+]] = memref.subview %[[B]]
// CHECK: linalg.copy ins(%[[A]] : memref<2x2xf32>) outs(%[[S]] : memref<2x2xf32, strided<[3, 1], offset: 4>>)
// CHECK: memref.copy %[[A]], %[[C]] : memref<2x2xf32> to memref<2x2xf32>
func.func @copies(%a: memref<2x2xf32>, %b: memref<4x3xf32>, %c: memref<2x2xf32>) {
  %s = memref.subview %b[1, 1] [2, 2] [1, 1] : memref<4x3xf32> to memref<2x2xf32, strided<[3, 1], offset: 4>>
  memref.copy %a, %s : memref<2x2xf32> to memref<2x2xf32, strided<[3, 1], offset: 4>>
  memref.copy %a, %c : memref<2x2xf32> to memref<2x2xf32>
  return
}
