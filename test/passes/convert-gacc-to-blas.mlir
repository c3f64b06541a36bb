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

// The cuda target's callees: the same call to gacc_cublas_sgemm, or to
// gacc_cublaslt_sgemm.
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublas_sgemm | FileCheck %s --check-prefix=CUBLAS
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublaslt_sgemm | FileCheck %s --check-prefix=CUBLASLT
// RUN: not gacc-opt %s -convert-gacc-to-blas=callee=foo 2>&1 | FileCheck %s --check-prefix=BADCALLEE
// CUBLAS: func.func private @gacc_cublas_sgemm(
// CUBLAS: call @gacc_cublas_sgemm(
// CUBLASLT: func.func private @gacc_cublaslt_sgemm(
// CUBLASLT: call @gacc_cublaslt_sgemm(
// BADCALLEE: error: convert-gacc-to-blas: callee must be gacc_sgemm, gacc_cublas_sgemm or gacc_cublaslt_sgemm, got 'foo'
func.func @cublas(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}

// -----

// A memref linalg.batch_matmul with the default maps becomes one
// gacc_sgemm_batched call (rank-3 dynamic strided operands, no transposes,
// beta = 1); one whose B is indexed transposed ([b, j, k], as attention's
// adjoint dQ = dS·K reads K) passes transB = 1.

// CHECK: func.func private @gacc_sgemm_batched(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i32, i32, f32)
// CHECK-LABEL: func.func @batched(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x8x2xf32>, %[[B:[^:]+]]: memref<4x2x8xf32>, %[[C:[^:]+]]: memref<4x8x8xf32>, %[[BT:[^:]+]]: memref<4x8x2xf32>)
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[CA:.+]] = memref.cast %[[A]]
// CHECK: %[[CB:.+]] = memref.cast %[[B]]
// CHECK: %[[CC:.+]] = memref.cast %[[C]]
// CHECK: %[[NT:.+]] = arith.constant 0 : i32
// CHECK: %[[NT2:.+]] = arith.constant 0 : i32
// CHECK: call @gacc_sgemm_batched(%[[CA]], %[[CB]], %[[CC]], %[[NT]], %[[NT2]], %[[ONE]])
// CHECK: %[[CBT:.+]] = memref.cast %[[BT]]
// CHECK: %[[T:.+]] = arith.constant 1 : i32
// CHECK: call @gacc_sgemm_batched(%{{.+}}, %[[CBT]], %{{.+}}, %{{.+}}, %[[T]], %{{.+}})
// CHECK-NOT: linalg.batch_matmul
func.func @batched(%a: memref<4x8x2xf32>, %b: memref<4x2x8xf32>, %c: memref<4x8x8xf32>, %bt: memref<4x8x2xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x2xf32>, memref<4x2x8xf32>) outs(%c : memref<4x8x8xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %bt : memref<4x8x2xf32>, memref<4x8x2xf32>) outs(%c : memref<4x8x8xf32>)
  return
}

// -----

// A batch product whose B is shared by the batch (broadcast over b) is not a
// per-batch GEMM of the runtime's: it stays a linalg op (lowered to loops).
// With cuBLAS (not cuBLASLt) batch products stay linalg ops.
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublas_sgemm | FileCheck %s --check-prefix=CUBLAS-BATCH

// CHECK-LABEL: func.func @shared_b(
// CHECK-NEXT: linalg.batch_matmul
// CHECK-NEXT: return
// CUBLAS-BATCH-LABEL: func.func @shared_b(
// CUBLAS-BATCH: linalg.batch_matmul
// CUBLAS-BATCH-LABEL: func.func @cuda_batch(
// CUBLAS-BATCH: linalg.batch_matmul
// CUBLAS-BATCH-NOT: gacc_sgemm_batched
func.func @shared_b(%a: memref<4x8x2xf32>, %b: memref<2x8xf32>, %c: memref<4x8x8xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : memref<4x8x2xf32>, memref<2x8xf32>) outs(%c : memref<4x8x8xf32>)
  return
}
func.func @cuda_batch(%a: memref<4x8x2xf32>, %b: memref<4x2x8xf32>, %c: memref<4x8x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x2xf32>, memref<4x2x8xf32>) outs(%c : memref<4x8x8xf32>)
  return
}

// -----

// cuBLASLt's calls say what their operands hold (abi::GemmInputs, the last
// argument): fp32 values (0) for an unmarked product, bf16 (1) or fp16 (2)
// values for one that gacc-mark-gemm-inputs marks gacc.gemm_inputs; a batch
// product becomes one strided batched call with the same argument.
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublaslt_sgemm | FileCheck %s --check-prefix=LT

// LT-DAG: func.func private @gacc_cublaslt_sgemm(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32, i32)
// LT-DAG: func.func private @gacc_cublaslt_sgemm_batched(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i32, i32, f32, i32)
// LT-LABEL: func.func @fp32_values(
// LT: arith.constant 1 : i32
// LT-NEXT: arith.constant 0 : i32
// LT-NEXT: %[[F32:.+]] = arith.constant 0 : i32
// LT-NEXT: call @gacc_cublaslt_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F32]])
// LT-LABEL: func.func @bf16_values(
// LT: arith.constant 1 : i32
// LT-NEXT: arith.constant 0 : i32
// LT-NEXT: %[[BF16:.+]] = arith.constant 1 : i32
// LT-NEXT: call @gacc_cublaslt_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BF16]])
// LT: arith.constant 0 : i32
// LT-NEXT: arith.constant 0 : i32
// LT-NEXT: %[[BF16B:.+]] = arith.constant 1 : i32
// LT-NEXT: call @gacc_cublaslt_sgemm_batched(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BF16B]])
// LT-NOT: linalg.batch_matmul
// LT-LABEL: func.func @fp16_values(
// LT: arith.constant 1 : i32
// LT-NEXT: arith.constant 0 : i32
// LT-NEXT: %[[F16:.+]] = arith.constant 2 : i32
// LT-NEXT: call @gacc_cublaslt_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[F16]])
func.func @fp32_values(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}
func.func @bf16_values(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1,
                       %q: memref<4x8x2xf32>, %k: memref<4x2x8xf32>, %s: memref<4x8x8xf32>) {
  gacc.matmul_accumulate %a, %b into %c first %first {gacc.gemm_inputs = #gacc.precision<bf16>, transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  linalg.batch_matmul {gacc.gemm_inputs = #gacc.precision<bf16>} ins(%q, %k : memref<4x8x2xf32>, memref<4x2x8xf32>) outs(%s : memref<4x8x8xf32>)
  return
}
func.func @fp16_values(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  gacc.matmul_accumulate %a, %b into %c first %first {gacc.gemm_inputs = #gacc.precision<fp16>, transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}

// -----

// cuBLAS and cuBLASLt read rows of consecutive elements: a product with an
// operand whose innermost stride is not 1 stays as it is (a loop nest
// later), where OpenBLAS's call takes any strides.
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublaslt_sgemm | FileCheck %s --check-prefix=LT-STRIDED

// CHECK-LABEL: func.func @strided_inner(
// CHECK: call @gacc_sgemm(
// CHECK: call @gacc_sgemm_batched(
// LT-STRIDED-LABEL: func.func @strided_inner(
// LT-STRIDED-NOT: call
// LT-STRIDED: gacc.matmul_accumulate
// LT-STRIDED: linalg.batch_matmul
// LT-STRIDED-NOT: call
func.func @strided_inner(%a: memref<4x3xf32, strided<[1, 4]>>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1,
                         %q: memref<4x8x2xf32, strided<[16, 1, 8]>>, %k: memref<4x2x8xf32>, %s: memref<4x8x8xf32>) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32, strided<[1, 4]>>, memref<4x2xf32> into memref<3x2xf32>
  linalg.batch_matmul ins(%q, %k : memref<4x8x2xf32, strided<[16, 1, 8]>>, memref<4x2x8xf32>) outs(%s : memref<4x8x8xf32>)
  return
}

// -----

// A product into a fresh buffer that a fill of zeros set for it alone: the
// call has beta = 0 and the fill is gone (no zero-fill before the GEMM),
// for a plain and a batched product, with views and other buffers' fills
// between them. A fill of another value, a fill read by something else
// before the product, a fill of a function argument (the caller's memory)
// and a buffer the product also reads stay, with beta = 1.

// CHECK-LABEL: func.func @zero_fill_folded(
// LT-STRIDED-LABEL: func.func @zero_fill_folded(
// CHECK: %[[C:.+]] = memref.alloc() : memref<4x3xf32>
// CHECK: %[[S:.+]] = memref.alloc() : memref<2x4x4xf32>
// CHECK-NOT: outs(%[[S]]
// CHECK-NOT: outs(%[[C]]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg4 : memref<8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[B1:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: call @gacc_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B1]])
// CHECK: %[[B2:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: call @gacc_sgemm_batched(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B2]])
// CHECK: memref.dealloc %[[C]]
func.func @zero_fill_folded(%a: memref<4x2xf32>, %b: memref<2x3xf32>, %q: memref<2x4x2xf32>, %k: memref<2x2x4xf32>,
                            %other: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x3xf32>
  %s = memref.alloc() : memref<2x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<2x4x4xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<8xf32>)
  %view = memref.cast %c : memref<4x3xf32> to memref<4x3xf32, strided<[3, 1]>>
  linalg.matmul ins(%a, %b : memref<4x2xf32>, memref<2x3xf32>) outs(%view : memref<4x3xf32, strided<[3, 1]>>)
  linalg.batch_matmul ins(%q, %k : memref<2x4x2xf32>, memref<2x2x4xf32>) outs(%s : memref<2x4x4xf32>)
  memref.dealloc %c : memref<4x3xf32>
  memref.dealloc %s : memref<2x4x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @fills_kept(
// CHECK-COUNT-4: linalg.fill
// CHECK: %[[B1:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @gacc_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B1]])
// CHECK: memref.load
// CHECK: %[[B2:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @gacc_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B2]])
// CHECK: %[[B3:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @gacc_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B3]])
// CHECK: %[[B4:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @gacc_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[B4]])
func.func @fills_kept(%a: memref<4x4xf32>, %arg: memref<4x4xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %c1 = memref.alloc() : memref<4x4xf32>
  %c2 = memref.alloc() : memref<4x4xf32>
  %c3 = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%half : f32) outs(%c1 : memref<4x4xf32>)
  linalg.fill ins(%zero : f32) outs(%c2 : memref<4x4xf32>)
  linalg.fill ins(%zero : f32) outs(%arg : memref<4x4xf32>)
  linalg.fill ins(%zero : f32) outs(%c3 : memref<4x4xf32>)
  // Not zeros.
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%c1 : memref<4x4xf32>)
  // Read before the product.
  %x = memref.load %c2[%c0, %c0] : memref<4x4xf32>
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%c2 : memref<4x4xf32>)
  // The caller's buffer.
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%arg : memref<4x4xf32>)
  // The product reads its own output.
  linalg.matmul ins(%c3, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%c3 : memref<4x4xf32>)
  return %x : f32
}

// -----

// Operands no entry point addresses (memory space 1, a layout that is not
// strided) stay for the loop lowering: no call, no invalid memref.cast.

// CHECK-LABEL: func.func @unaddressable(
// CHECK-NOT: call @gacc_sgemm
// CHECK-NOT: memref.cast
// CHECK: gacc.matmul_accumulate %{{.+}} : memref<4x3xf32, 1>, memref<3x2xf32, 1> into memref<4x2xf32, 1>
// CHECK: linalg.matmul ins(%{{.+}} : memref<4x4xf32, #{{.+}}>, memref<4x4xf32>)
func.func @unaddressable(%a: memref<4x3xf32, 1>, %b: memref<3x2xf32, 1>, %c: memref<4x2xf32, 1>, %first: i1,
                         %d: memref<4x4xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>, %e: memref<4x4xf32>, %f: memref<4x4xf32>) {
  gacc.matmul_accumulate %a, %b into %c first %first : memref<4x3xf32, 1>, memref<3x2xf32, 1> into memref<4x2xf32, 1>
  linalg.matmul ins(%d, %e : memref<4x4xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>, memref<4x4xf32>) outs(%f : memref<4x4xf32>)
  return
}
