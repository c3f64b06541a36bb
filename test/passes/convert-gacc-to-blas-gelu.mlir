// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublaslt_sgemm | FileCheck %s
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas="callee=gacc_cublaslt_sgemm gelu-epilogues=false" | FileCheck %s --check-prefix=OFF
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublas_sgemm | FileCheck %s --check-prefix=OFF

// A linear layer into a tanh GELU on the cuda target with cuBLASLt: the
// GEMM onto zeros, the bias add into C and the GELU of C (through the
// reshape that a [m, T, d] layer makes) are one call with GELU_AUX_BIAS
// (gacc_cublaslt_sgemm_gelu_bias): the GELU into the generic's output,
// seen as rows of C's shape, and the sum into C, which the GELU's adjoint
// reads. Off (gelu-epilogues=false) and with cuBLAS: the BIAS epilogue or
// a GEMM call, and the GELU's generic stays.

// CHECK: func.func private @gacc_cublaslt_sgemm_gelu_bias(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32, i32)
// CHECK-LABEL: func.func @gelu_of_sum(
// CHECK-SAME: %[[X:[^:]+]]: memref<6x3xf32>, %[[W:[^:]+]]: memref<8x3xf32>, %[[B:[^:]+]]: memref<8xf32>)
// CHECK: %[[C:.+]] = memref.alloc() : memref<6x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[Y:.+]] = memref.alloc() : memref<2x3x8xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ROWS:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK-DAG: %[[CX:.+]] = memref.cast %[[X]]
// CHECK-DAG: %[[CW:.+]] = memref.cast %[[W]]
// CHECK-DAG: %[[CY:.+]] = memref.cast %[[ROWS]]
// CHECK-DAG: %[[CB:.+]] = memref.cast %[[B]]
// CHECK-DAG: %[[CC:.+]] = memref.cast %[[C]]
// CHECK: call @gacc_cublaslt_sgemm_gelu_bias(%[[CX]], %[[CW]], %[[CY]], %[[CB]], %[[CC]], %{{.+}}, %{{.+}}, %[[ZERO]], %{{.+}})
// CHECK-NOT: linalg.
// CHECK: return %[[C]], %[[Y]]
// OFF-LABEL: func.func @gelu_of_sum(
// OFF-NOT: gelu_bias
// OFF: call @gacc_cublas
// OFF: linalg.generic
// OFF: math.tanh
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mm = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @gelu_of_sum(%x: memref<6x3xf32>, %w: memref<8x3xf32>, %b: memref<8xf32>) -> (memref<6x8xf32>, memref<2x3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %c = memref.alloc() : memref<6x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x8xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<6x3xf32>, memref<8x3xf32>) outs(%c : memref<6x8xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<6x8xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 3, 8] : memref<6x8xf32> into memref<2x3x8xf32>
  %y = memref.alloc() : memref<2x3x8xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : memref<2x3x8xf32>) outs(%y : memref<2x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %t, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c, %y : memref<6x8xf32>, memref<2x3x8xf32>
}

// -----

// The 2-D form, where gacc-fuse-elementwise has joined the bias add and
// the GELU into one generic that writes the sum to C and the GELU to Y
// (operands of the payload's products in the other order): one call.

// CHECK-LABEL: func.func @fused_gelu(
// CHECK: %[[Y:.+]] = memref.alloc() : memref<4x16xf32>
// CHECK: %[[C:.+]] = memref.alloc() : memref<4x16xf32>
// CHECK-DAG: %[[CY:.+]] = memref.cast %[[Y]]
// CHECK-DAG: %[[CC:.+]] = memref.cast %[[C]]
// CHECK: call @gacc_cublaslt_sgemm_gelu_bias(%{{.+}}, %{{.+}}, %[[CY]], %{{.+}}, %[[CC]],
// CHECK-NOT: linalg.
// CHECK: return %[[C]], %[[Y]]
// OFF-LABEL: func.func @fused_gelu(
// OFF-NOT: gelu_bias
// OFF: math.tanh
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#mm = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @fused_gelu(%x: memref<4x3xf32>, %w: memref<16x3xf32>, %b: memref<16xf32>) -> (memref<4x16xf32>, memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x16xf32>
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<16x3xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<16xf32>) outs(%c, %y : memref<4x16xf32>, memref<4x16xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %bias, %sum : f32
    %sq = arith.mulf %s, %s : f32
    %cu = arith.mulf %sq, %s : f32
    %t0 = arith.mulf %cubic, %cu : f32
    %t1 = arith.addf %t0, %s : f32
    %t2 = arith.mulf %k, %t1 : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %half, %s : f32
    %p = arith.addf %one, %t : f32
    %g = arith.mulf %p, %h : f32
    linalg.yield %s, %g : f32, f32
  }
  return %c, %y : memref<4x16xf32>, memref<4x16xf32>
}

// -----

// The GELU's gradient: a data-gradient GEMM onto zeros whose product dy
// the next generic multiplies by the tanh GELU's derivative at the
// pre-activation X is one call with DGELU (gacc_cublaslt_sgemm_gelu_grad)
// into the generic's output, X read as the auxiliary matrix; C and its
// reshape go.

// CHECK: func.func private @gacc_cublaslt_sgemm_gelu_grad(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32, i32)
// CHECK-LABEL: func.func @gelu_grad(
// CHECK-SAME: %[[DZ:[^:]+]]: memref<6x4xf32>, %[[W:[^:]+]]: memref<4x8xf32>, %[[X:[^:]+]]: memref<2x3x8xf32>)
// CHECK-NOT: memref.alloc() : memref<6x8xf32>
// CHECK: %[[Y:.+]] = memref.alloc() : memref<2x3x8xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[XR:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]]
// CHECK-DAG: %[[YR:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]]
// CHECK-DAG: %[[CYR:.+]] = memref.cast %[[YR]]
// CHECK-DAG: %[[CXR:.+]] = memref.cast %[[XR]]
// CHECK-DAG: %[[NT:.+]] = arith.constant 0 : i32
// CHECK: call @gacc_cublaslt_sgemm_gelu_grad(%{{.+}}, %{{.+}}, %[[CYR]], %[[CXR]], %{{.+}}, %{{.+}}, %[[ZERO]], %{{.+}})
// CHECK-NOT: linalg.
// CHECK-NOT: memref.dealloc
// CHECK: return %[[Y]]
// OFF-LABEL: func.func @gelu_grad(
// OFF-NOT: gelu_grad(
// OFF: call @gacc_cublas
// OFF: math.tanh
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @gelu_grad(%dz: memref<6x4xf32>, %w: memref<4x8xf32>, %x: memref<2x3x8xf32>) -> memref<2x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.134145 : f32
  %k = arith.constant 0.797884583 : f32
  %c = memref.alloc() : memref<6x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x8xf32>)
  linalg.matmul ins(%dz, %w : memref<6x4xf32>, memref<4x8xf32>) outs(%c : memref<6x8xf32>)
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 3, 8] : memref<6x8xf32> into memref<2x3x8xf32>
  %y = memref.alloc() : memref<2x3x8xf32>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %e : memref<2x3x8xf32>, memref<2x3x8xf32>) outs(%y : memref<2x3x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %tt : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.mulf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<6x8xf32>
  return %y : memref<2x3x8xf32>
}

// -----

// No GELU epilogue: rows of 5 columns (not a multiple of 8); C not started
// by zeros; the exact (erf) GELU; a GELU whose output is C's own memory;
// a gradient whose C is read after the generic; a gradient generic that
// adds instead of multiplying. Each keeps its GEMM call (or the BIAS
// epilogue) and the GELU's generic.

// CHECK-LABEL: func.func @five_columns(
// CHECK-NOT: gelu_bias
// CHECK: call @gacc_cublaslt_sgemm_epilogue(
// CHECK: math.tanh
// CHECK-LABEL: func.func @c_not_zeros(
// CHECK-NOT: gelu_bias
// CHECK: call @gacc_cublaslt_sgemm_epilogue(
// CHECK: math.tanh
// CHECK-LABEL: func.func @erf_gelu(
// CHECK-NOT: gelu_bias
// CHECK: call @gacc_cublaslt_sgemm_epilogue(
// CHECK: math.erf
// CHECK-LABEL: func.func @gelu_in_place(
// CHECK-NOT: gelu_bias
// CHECK: call @gacc_cublaslt_sgemm_epilogue(
// CHECK: math.tanh
// CHECK-LABEL: func.func @grad_c_read_later(
// CHECK-NOT: gelu_grad(
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: math.tanh
// CHECK-LABEL: func.func @grad_added(
// CHECK-NOT: gelu_grad(
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: math.tanh
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#mm = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @five_columns(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %y: memref<4x5xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x5xf32>) outs(%y : memref<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %t, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c : memref<4x5xf32>
}
func.func @c_not_zeros(%x: memref<4x3xf32>, %w: memref<8x3xf32>, %b: memref<8xf32>, %y: memref<4x8xf32>) -> memref<4x8xf32> {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<8x3xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %t, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c : memref<4x8xf32>
}
func.func @erf_gelu(%x: memref<4x3xf32>, %w: memref<8x3xf32>, %b: memref<8xf32>, %y: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %r = arith.constant 0.707106769 : f32
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<8x3xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %r : f32
    %e = math.erf %a : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %e, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c : memref<4x8xf32>
}
func.func @gelu_in_place(%x: memref<4x3xf32>, %w: memref<8x3xf32>, %b: memref<8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<8x3xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %t, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c : memref<4x8xf32>
}
func.func @grad_c_read_later(%dz: memref<4x4xf32>, %w: memref<4x8xf32>, %x: memref<4x8xf32>, %keep: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.134145 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%dz, %w : memref<4x4xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %tt : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.mulf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.copy %c, %keep : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %c : memref<4x8xf32>
  return %y : memref<4x8xf32>
}
func.func @grad_added(%dz: memref<4x4xf32>, %w: memref<4x8xf32>, %x: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.134145 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%dz, %w : memref<4x4xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %tt : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.addf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<4x8xf32>
  return %y : memref<4x8xf32>
}

// -----

// The gradient's payload op by op: the 2-D form is taken (control); a
// wrong constant, 1 - t·t with its operands swapped, and t + 1 in place of
// 1 - t·t are not. A GELU that an op with memory effects separates from
// its bias add, and a GELU whose 0.5 is 0.4, keep the BIAS epilogue and
// their generic.

// CHECK-LABEL: func.func @grad_2d(
// CHECK: call @gacc_cublaslt_sgemm_gelu_grad(
// CHECK-NOT: math.tanh
// CHECK-LABEL: func.func @grad_wrong_constant(
// CHECK-NOT: gelu_grad(
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: math.tanh
// CHECK-LABEL: func.func @grad_sub_swapped(
// CHECK-NOT: gelu_grad(
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: math.tanh
// CHECK-LABEL: func.func @grad_tanh_plus_one(
// CHECK-NOT: gelu_grad(
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: math.tanh
// CHECK-LABEL: func.func @gelu_not_next(
// CHECK-NOT: gelu_bias
// CHECK: call @gacc_cublaslt_sgemm_epilogue(
// CHECK: memref.copy
// CHECK: math.tanh
// CHECK-LABEL: func.func @gelu_wrong_half(
// CHECK-NOT: gelu_bias
// CHECK: call @gacc_cublaslt_sgemm_epilogue(
// CHECK: math.tanh
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#mm = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @grad_2d(%dz: memref<4x4xf32>, %w: memref<4x8xf32>, %x: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.134145 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%dz, %w : memref<4x4xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %tt : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.mulf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<4x8xf32>
  return %y : memref<4x8xf32>
}
func.func @grad_wrong_constant(%dz: memref<4x4xf32>, %w: memref<4x8xf32>, %x: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.13 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%dz, %w : memref<4x4xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %tt : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.mulf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<4x8xf32>
  return %y : memref<4x8xf32>
}
func.func @grad_sub_swapped(%dz: memref<4x4xf32>, %w: memref<4x8xf32>, %x: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.134145 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%dz, %w : memref<4x4xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.subf %tt, %one : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.mulf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<4x8xf32>
  return %y : memref<4x8xf32>
}
func.func @grad_tanh_plus_one(%dz: memref<4x4xf32>, %w: memref<4x8xf32>, %x: memref<4x8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %cubic3 = arith.constant 0.134145 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%dz, %w : memref<4x4xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %dy: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %l0 = arith.addf %t, %one : f32
    %left = arith.mulf %l0, %half : f32
    %tt = arith.mulf %t, %t : f32
    %sech2 = arith.addf %t, %one : f32
    %d0 = arith.mulf %sq, %cubic3 : f32
    %d1 = arith.addf %d0, %one : f32
    %darg = arith.mulf %d1, %k : f32
    %r0 = arith.mulf %sech2, %darg : f32
    %hx = arith.mulf %in, %half : f32
    %right = arith.mulf %hx, %r0 : f32
    %d = arith.addf %left, %right : f32
    %g = arith.mulf %dy, %d : f32
    linalg.yield %g : f32
  }
  memref.dealloc %c : memref<4x8xf32>
  return %y : memref<4x8xf32>
}
func.func @gelu_not_next(%x: memref<4x3xf32>, %w: memref<8x3xf32>, %b: memref<8xf32>, %keep: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<8x3xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %keep : memref<4x8xf32> to memref<4x8xf32>
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %t, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c, %y : memref<4x8xf32>, memref<4x8xf32>
}
func.func @gelu_wrong_half(%x: memref<4x3xf32>, %w: memref<8x3xf32>, %b: memref<8xf32>, %keep: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.4 : f32
  %one = arith.constant 1.0 : f32
  %cubic = arith.constant 0.044715 : f32
  %k = arith.constant 0.797884583 : f32
  %y = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<8x3xf32>) outs(%c : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %in, %sq : f32
    %t0 = arith.mulf %cu, %cubic : f32
    %t1 = arith.addf %in, %t0 : f32
    %t2 = arith.mulf %t1, %k : f32
    %t = math.tanh %t2 : f32
    %h = arith.mulf %in, %half : f32
    %p = arith.addf %t, %one : f32
    %g = arith.mulf %h, %p : f32
    linalg.yield %g : f32
  }
  return %c, %y : memref<4x8xf32>, memref<4x8xf32>
}
