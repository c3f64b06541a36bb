// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas | FileCheck %s

// The fused weight-gradient GEMM becomes a gacc_sgemm call with
// beta = first ? 0 : 1 and transA = 1; operands are cast to dynamic strided
// memrefs (the runtime reads their strides).

// CHECK: func.func private @gacc_sgemm(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32)
// CHECK-LABEL: func.func @fused(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x3xf32>, %[[B:[^:]+]]: memref<4x2xf32>, %[[C:[^:]+]]: memref<3x2xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BETA:.+]] = arith.select %[[FIRST]], %[[ZERO]], %[[ONE]] : f32
// CHECK: %[[CA:.+]] = memref.cast %[[A]]
// CHECK: %[[CB:.+]] = memref.cast %[[B]]
// CHECK: %[[CC:.+]] = memref.cast %[[C]]
// CHECK-DAG: %[[T:.+]] = arith.constant 1 : i32
// CHECK-DAG: %[[NT:.+]] = arith.constant 0 : i32
// CHECK: call @gacc_sgemm(%[[CA]], %[[CB]], %[[CC]], %[[T]], %[[NT]], %[[BETA]])
// CHECK-NOT: gacc.matmul_accumulate
func.func @fused(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}

// -----

// A plain memref linalg.matmul (C += A·Bᵀ here) becomes a call with
// beta = 1 and transB = 1; tensor matmuls are left alone.

// CHECK-LABEL: func.func @plain(
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @gacc_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]])
// CHECK-NOT: linalg.matmul ins({{.+}} : memref
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>)
func.func @plain(%a: memref<4x2xf32>, %b: memref<3x2xf32>, %c: memref<4x3xf32>, %t: tensor<2x2xf32>) -> tensor<2x2xf32> {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<4x2xf32>, memref<3x2xf32>) outs(%c : memref<4x3xf32>)
  %r = linalg.matmul ins(%t, %t : tensor<2x2xf32>, tensor<2x2xf32>) outs(%t : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// The cuda target's callee: the same call to gacc_cublas_sgemm.
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublas_sgemm | FileCheck %s --check-prefix=CUBLAS
// RUN: not gacc-opt %s -convert-gacc-to-blas=callee=foo 2>&1 | FileCheck %s --check-prefix=BADCALLEE
// CUBLAS: func.func private @gacc_cublas_sgemm(
// CUBLAS: call @gacc_cublas_sgemm(
// BADCALLEE: error: convert-gacc-to-blas: callee must be gacc_sgemm or gacc_cublas_sgemm, got 'foo'
func.func @cublas(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}
