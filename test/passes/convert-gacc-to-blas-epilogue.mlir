// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublaslt_sgemm | FileCheck %s
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas=callee=gacc_cublas_sgemm | FileCheck %s --check-prefix=CUBLAS
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas | FileCheck %s --check-prefix=CPU

// A linear layer's forward on the cuda target with cuBLASLt: the GEMM onto
// zeros, the bias add and the ReLU (one generic, as gacc-fuse-elementwise
// leaves them) are one call with the RELU_BIAS epilogue (1), which writes
// the ReLU's output; the pre-activation's buffer goes (relu's adjoint reads
// the output). cuBLAS and OpenBLAS have no epilogue: a GEMM and the generic.

// CHECK: func.func private @gacc_cublaslt_sgemm_epilogue(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, i32, i32, f32, i32, i32)
// CHECK-LABEL: func.func @relu_bias(
// CHECK-SAME: %[[X:[^:]+]]: memref<4x3xf32>, %[[W:[^:]+]]: memref<5x3xf32>, %[[B:[^:]+]]: memref<5xf32>)
// CHECK-NOT: memref.alloc() {{.*}} : memref<4x5xf32>
// CHECK: %[[Y:.+]] = memref.alloc() : memref<8x5xf32>
// CHECK: %[[ROWS:.+]] = memref.subview %[[Y]][0, 0] [4, 5] [1, 1]
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CX:.+]] = memref.cast %[[X]]
// CHECK-NEXT: %[[CW:.+]] = memref.cast %[[W]]
// CHECK-NEXT: %[[CY:.+]] = memref.cast %[[ROWS]]
// CHECK-NEXT: %[[NT:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[T:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[FP32:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[CB:.+]] = memref.cast %[[B]] : memref<5xf32> to memref<?xf32, strided<[?], offset: ?>>
// CHECK-NEXT: %[[RELU:.+]] = arith.constant 1 : i32
// CHECK-NEXT: call @gacc_cublaslt_sgemm_epilogue(%[[CX]], %[[CW]], %[[CY]], %[[CB]], %[[NT]], %[[T]], %[[ZERO]], %[[FP32]], %[[RELU]])
// CHECK-NOT: linalg.
// CHECK-NOT: memref.dealloc
// CHECK: return %[[Y]]
// CUBLAS-LABEL: func.func @relu_bias(
// CUBLAS-NOT: epilogue
// CUBLAS: call @gacc_cublas_sgemm(
// CUBLAS: linalg.generic
// CPU-LABEL: func.func @relu_bias(
// CPU: call @gacc_sgemm(
// CPU: linalg.generic
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @relu_bias(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>) -> memref<8x5xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  %y = memref.alloc() : memref<8x5xf32>
  %rows = memref.subview %y[0, 0] [4, 5] [1, 1] : memref<8x5xf32> to memref<4x5xf32, strided<[5, 1]>>
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %rows : memref<4x5xf32>, memref<4x5xf32, strided<[5, 1]>>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<8x5xf32>
}

// -----

// The bias add alone (the logits, read by the loss): the BIAS epilogue (0)
// in place, beta 0 where zeros start C and 1 where C holds other values.

// CHECK-LABEL: func.func @bias(
// CHECK-SAME: %[[X:[^:]+]]: memref<4x3xf32>, %[[W:[^:]+]]: memref<5x3xf32>, %[[B:[^:]+]]: memref<5xf32>
// CHECK: %[[C:.+]] = memref.alloc() : memref<4x5xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[CC:.+]] = memref.cast %[[C]]
// CHECK: memref.cast %[[B]]
// CHECK-NEXT: %[[BIAS:.+]] = arith.constant 0 : i32
// CHECK-NEXT: call @gacc_cublaslt_sgemm_epilogue(%{{.+}}, %{{.+}}, %[[CC]], %{{.+}}, %{{.+}}, %{{.+}}, %[[ZERO]], %{{.+}}, %[[BIAS]])
// CHECK-NEXT: memref.copy %[[C]]
// CHECK-LABEL: func.func @bias_accumulating(
// CHECK: linalg.fill
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @gacc_cublaslt_sgemm_epilogue(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]], %{{.+}}, %{{.+}})
// CHECK-NOT: linalg.
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @bias(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %out: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %bias, %sum : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %out : memref<4x5xf32> to memref<4x5xf32>
  memref.dealloc %c : memref<4x5xf32>
  return
}
func.func @bias_accumulating(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>) {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return
}

// -----

// No epilogue: the ReLU form where C does not start from zeros, where the
// sum is read after the generic, where Y may share memory with an operand,
// where another op with memory effects comes first, where the bias runs
// along the rows, or where it is not packed; where C has another fill,
// where the payload has an op with effects, where the second output is not
// a ReLU, and where the ReLU's zero is -0.0. Each keeps its GEMM call and
// its generic.

// CHECK-LABEL: func.func @relu_onto_c(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @sum_read_later(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @relu_into_argument(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @not_next(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @bias_by_row(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @strided_bias(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @second_fill(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @impure_payload(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @not_a_relu(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @negative_zero(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm(
// CHECK: linalg.generic
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#by_row = affine_map<(d0, d1) -> (d0)>
#mm = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @relu_onto_c(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<4x5xf32>
  %c = memref.alloc() : memref<4x5xf32>
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf32>
}
func.func @sum_read_later(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %keep: memref<4x5xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<4x5xf32>
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.copy %c, %keep : memref<4x5xf32> to memref<4x5xf32>
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf32>
}
func.func @relu_into_argument(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %y: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return
}
func.func @not_next(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %other: memref<5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<5xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return
}
func.func @bias_by_row(%x: memref<4x3xf32>, %w: memref<4x3xf32>, %b: memref<4xf32>) {
  %c = memref.alloc() : memref<4x4xf32>
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<4x3xf32>) outs(%c : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#by_row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x4xf32>
  return
}
func.func @strided_bias(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32, strided<[2]>>) {
  %c = memref.alloc() : memref<4x5xf32>
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32, strided<[2]>>) outs(%c : memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32):
    %s = arith.addf %sum, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return
}
func.func @second_fill(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %flag: memref<f32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<4x5xf32>
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf32>
}
func.func @impure_payload(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %flag: memref<f32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<4x5xf32>
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    memref.store %s, %flag[] : memref<f32>
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf32>
}
func.func @not_a_relu(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %flag: memref<f32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<4x5xf32>
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.mulf %s, %s : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf32>
}
func.func @negative_zero(%x: memref<4x3xf32>, %w: memref<5x3xf32>, %b: memref<5xf32>, %flag: memref<f32>) -> memref<4x5xf32> {
  %zero = arith.constant -0.0 : f32
  %y = memref.alloc() : memref<4x5xf32>
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf32>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf32>) {
  ^bb0(%bias: f32, %sum: f32, %out: f32):
    %s = arith.addf %sum, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %s, %r : f32, f32
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf32>
}

// -----

// A bf16 step's linear layer (gacc-narrow-stored-values has stored its
// rounded values in bf16): bf16 operands and bias, C fp32 and dead after
// the generic, which writes the sum rounded to bf16, or the ReLU of the
// rounded sum, into Y (bf16). One call of the bf16 epilogue's entry point
// writes Y: RELU_BIAS (1) or BIAS (0), no `inputs`, C's buffer gone. A
// generic that keeps no rounded output (only C) has no epilogue: cuBLASLt
// would add a bf16 bias to an fp32 C. Nor has an fp16 step's layer, whose
// loss scaling must see the NaN an overflow makes (cuBLASLt's ReLU may
// turn it into 0), nor a rounding other than to nearest even (cuBLASLt's).

// CHECK-DAG: func.func private @gacc_cublaslt_sgemm_epilogue_bf16(memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?xbf16, strided<[?], offset: ?>>, i32, i32, f32, i32)
// CHECK-LABEL: func.func @bf16_relu_bias(
// CHECK-NOT: memref<4x5xf32>
// CHECK: memref.cast %{{.+}} : memref<5xbf16> to memref<?xbf16, strided<[?], offset: ?>>
// CHECK-NEXT: %[[RELU:.+]] = arith.constant 1 : i32
// CHECK-NEXT: call @gacc_cublaslt_sgemm_epilogue_bf16({{.+}}, %[[RELU]])
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @bf16_bias(
// CHECK: memref.cast %{{.+}} : memref<5xbf16> to memref<?xbf16, strided<[?], offset: ?>>
// CHECK-NEXT: %[[BIAS:.+]] = arith.constant 0 : i32
// CHECK-NEXT: call @gacc_cublaslt_sgemm_epilogue_bf16({{.+}}, %[[BIAS]])
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @bf16_sum_only(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm_bf16(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @f16_relu_bias(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm_f16(
// CHECK: linalg.generic
// CHECK-LABEL: func.func @bf16_toward_zero(
// CHECK-NOT: epilogue
// CHECK: call @gacc_cublaslt_sgemm_bf16(
// CHECK: linalg.generic
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#mm = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @bf16_relu_bias(%x: memref<4x3xbf16>, %w: memref<5x3xbf16>, %b: memref<5xbf16>) -> memref<4x5xbf16> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xbf16>, memref<5x3xbf16>) outs(%c : memref<4x5xf32>)
  %y = memref.alloc() : memref<4x5xbf16>
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xbf16>) outs(%c, %y : memref<4x5xf32>, memref<4x5xbf16>) {
  ^bb0(%bias: bf16, %sum: f32, %out: bf16):
    %e = arith.extf %bias : bf16 to f32
    %s = arith.addf %sum, %e : f32
    %t = arith.truncf %s : f32 to bf16
    %u = arith.extf %t : bf16 to f32
    %r = arith.maximumf %u, %zero : f32
    %v = arith.truncf %r : f32 to bf16
    linalg.yield %s, %v : f32, bf16
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xbf16>
}
func.func @bf16_bias(%x: memref<4x3xbf16>, %w: memref<5x3xbf16>, %b: memref<5xbf16>) -> memref<4x5xbf16> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xbf16>, memref<5x3xbf16>) outs(%c : memref<4x5xf32>)
  %y = memref.alloc() : memref<4x5xbf16>
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xbf16>) outs(%c, %y : memref<4x5xf32>, memref<4x5xbf16>) {
  ^bb0(%bias: bf16, %sum: f32, %out: bf16):
    %e = arith.extf %bias : bf16 to f32
    %s = arith.addf %e, %sum : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %s, %t : f32, bf16
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xbf16>
}
func.func @bf16_sum_only(%x: memref<4x3xbf16>, %w: memref<5x3xbf16>, %b: memref<5xbf16>, %out: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xbf16>, memref<5x3xbf16>) outs(%c : memref<4x5xf32>)
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xbf16>) outs(%c : memref<4x5xf32>) {
  ^bb0(%bias: bf16, %sum: f32):
    %e = arith.extf %bias : bf16 to f32
    %s = arith.addf %sum, %e : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %out : memref<4x5xf32> to memref<4x5xf32>
  memref.dealloc %c : memref<4x5xf32>
  return
}
func.func @f16_relu_bias(%x: memref<4x3xf16>, %w: memref<5x3xf16>, %b: memref<5xf16>) -> memref<4x5xf16> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xf16>, memref<5x3xf16>) outs(%c : memref<4x5xf32>)
  %y = memref.alloc() : memref<4x5xf16>
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xf16>) outs(%c, %y : memref<4x5xf32>, memref<4x5xf16>) {
  ^bb0(%bias: f16, %sum: f32, %out: f16):
    %e = arith.extf %bias : f16 to f32
    %s = arith.addf %sum, %e : f32
    %t = arith.truncf %s : f32 to f16
    %u = arith.extf %t : f16 to f32
    %r = arith.maximumf %u, %zero : f32
    %v = arith.truncf %r : f32 to f16
    linalg.yield %s, %v : f32, f16
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xf16>
}
func.func @bf16_toward_zero(%x: memref<4x3xbf16>, %w: memref<5x3xbf16>, %b: memref<5xbf16>) -> memref<4x5xbf16> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = #mm ins(%x, %w : memref<4x3xbf16>, memref<5x3xbf16>) outs(%c : memref<4x5xf32>)
  %y = memref.alloc() : memref<4x5xbf16>
  linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<5xbf16>) outs(%c, %y : memref<4x5xf32>, memref<4x5xbf16>) {
  ^bb0(%bias: bf16, %sum: f32, %out: bf16):
    %e = arith.extf %bias : bf16 to f32
    %s = arith.addf %sum, %e : f32
    %t = arith.truncf %s toward_zero : f32 to bf16
    linalg.yield %s, %t : f32, bf16
  }
  memref.dealloc %c : memref<4x5xf32>
  return %y : memref<4x5xbf16>
}
