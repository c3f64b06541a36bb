// RUN: gacc-opt %s -split-input-file -convert-gacc-to-runtime | FileCheck %s

// The memref all-reduce becomes one call of the runtime's collective, with
// the buffer cast to a dynamic strided memref (the runtime reads its
// offset, size and stride). One op, one call.

// CHECK: func.func private @gacc_all_reduce_sum_f32(memref<?xf32, strided<[?], offset: ?>>)
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: %[[BUF:[^:]+]]: memref<11xf32>
// CHECK: %[[CAST:.+]] = memref.cast %[[BUF]] : memref<11xf32> to memref<?xf32, strided<[?], offset: ?>>
// CHECK: call @gacc_all_reduce_sum_f32(%[[CAST]])
// CHECK-NOT: call @gacc_all_reduce_sum_f32
// CHECK-NOT: gacc.all_reduce
func.func @reduce(%buf: memref<11xf32>) {
  gacc.all_reduce %buf : memref<11xf32>
  return
}

// -----

// The tensor form (before bufferization) is left alone.
// CHECK-LABEL: func.func @tensor_form(
// CHECK: gacc.all_reduce %{{.+}} : tensor<11xf32> -> tensor<11xf32>
// CHECK-NOT: call
func.func @tensor_form(%t: tensor<11xf32>) -> tensor<11xf32> {
  %r = gacc.all_reduce %t : tensor<11xf32> -> tensor<11xf32>
  return %r : tensor<11xf32>
}
