// RUN: gacc-opt %s -convert-gacc-to-blas | FileCheck %s --check-prefix=LOW
// RUN: gacc-opt %s -convert-gacc-to-blas=callee=gacc_cublaslt_sgemm | FileCheck %s --check-prefix=LOW-LT
// RUN: gacc-opt %s -convert-gacc-to-blas=callee=gacc_cublas_sgemm | FileCheck %s --check-prefix=LOW-CUBLAS

// Products of bf16 (fp16) factors, a narrowed step's, call the entry
// points for those operand types: A and B cast to dynamic strided memrefs
// of their type, C fp32; cuBLASLt's take no `inputs` (the type says it).
// A product that mixes fp32 and bf16 factors stays a loop nest.


// LOW-DAG: func.func private @gacc_sgemm_bf16(memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32)
// LOW-DAG: func.func private @gacc_sgemm_f16(memref<?x?xf16, strided<[?, ?], offset: ?>>, memref<?x?xf16, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32)
// LOW-DAG: func.func private @gacc_sgemm_batched_bf16(memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i32, i32, f32)
// LOW-LABEL: func.func @low(
// LOW: call @gacc_sgemm_bf16(
// LOW: call @gacc_sgemm_f16(
// LOW: call @gacc_sgemm_batched_bf16(
// LOW: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x2xbf16>, memref<2x3xf32>)
// LOW-LT-DAG: func.func private @gacc_cublaslt_sgemm_bf16({{.*}}, i32, i32, f32)
// LOW-LT-DAG: func.func private @gacc_cublaslt_sgemm_batched_bf16({{.*}}, i32, i32, f32)
// LOW-LT: call @gacc_cublaslt_sgemm_bf16(
// LOW-LT: call @gacc_cublaslt_sgemm_f16(
// LOW-LT: call @gacc_cublaslt_sgemm_batched_bf16(
// LOW-CUBLAS: call @gacc_cublas_sgemm_bf16(
// LOW-CUBLAS: call @gacc_cublas_sgemm_f16(
// LOW-CUBLAS: linalg.batch_matmul
func.func @low(%a: memref<4x3xbf16>, %b: memref<4x2xbf16>, %c: memref<3x2xf32>, %first: i1,
               %h: memref<4x2xf16>, %g: memref<2x3xf16>, %d: memref<4x3xf32>,
               %ba: memref<2x4x2xbf16>, %bb: memref<2x2x3xbf16>, %bc: memref<2x4x3xf32>,
               %x: memref<4x2xbf16>, %y: memref<2x3xf32>) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xbf16>, memref<4x2xbf16> into memref<3x2xf32>
  linalg.matmul ins(%h, %g : memref<4x2xf16>, memref<2x3xf16>) outs(%d : memref<4x3xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x2xbf16>, memref<2x2x3xbf16>) outs(%bc : memref<2x4x3xf32>)
  linalg.matmul ins(%x, %y : memref<4x2xbf16>, memref<2x3xf32>) outs(%d : memref<4x3xf32>)
  return
}
