// The tanh GELU through the whole NVVM pipeline with cuBLASLt and
// cublaslt-gelu (gacc-run --cuda-gelu-epilogue): the MLP of every block,
// as gacc-autodiff and bufferization leave it, meets convert-gacc-to-blas's
// matchers. kjv_gpt's graph step has four blocks, each with one
// GELU_AUX_BIAS call (the first MLP layer, its bias add and the GELU; the
// [m, T, 512] GELU reads the [m·T, 512] sum through a reshape) and one
// DGELU call (the second layer's data-gradient GEMM times the GELU's
// derivative); no tanh is left in the training step, and C of each GEMM is
// the GELU's input that the adjoint reads. Off by default, the calls are
// plain GEMMs and the GELU's kernels stay (format=isa: no ptxas needed).
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true cublas=true cublaslt=true cublaslt-gelu=true format=isa" --mlir-print-ir-after=convert-gacc-to-blas -o /dev/null 2>&1 | FileCheck %s
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true cublas=true cublaslt=true format=isa" --mlir-print-ir-after=convert-gacc-to-blas -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// CHECK-LABEL: func.func @kjv_gpt(
// CHECK-COUNT-4: call @gacc_cublaslt_sgemm_gelu_bias(
// CHECK-COUNT-4: call @gacc_cublaslt_sgemm_gelu_grad(
// CHECK-NOT: math.tanh
// CHECK-LABEL: func.func @kjv_gpt_predict(
// OFF-LABEL: func.func @kjv_gpt(
// OFF-NOT: sgemm_gelu
// OFF: math.tanh
// OFF-LABEL: func.func @kjv_gpt_predict(
