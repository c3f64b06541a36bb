// REQUIRES: ptxas
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-kernels=false format=isa" 2>/dev/null > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: grep gpu.binary %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-kernels=false format=bin" 2>/dev/null > %t.bin.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.bin.mlir | FileCheck %s --check-prefix=LLVM
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true cublaslt=true arena-kernels=false format=isa" 2>/dev/null | FileCheck %s --check-prefix=LT
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true format=isa" --mlir-print-ir-after=convert-gacc-to-blas 2>&1 >/dev/null | FileCheck %s --check-prefix=NOCOPY
// RUN: gacc-opt %gacc_src/examples/fashion_mlp_adamw.mlir -gacc-lower-to-nvvm-pipeline="cublas=true cublaslt=true format=isa" --mlir-print-ir-after=convert-gacc-to-blas 2>&1 >/dev/null | FileCheck %s --check-prefix=BF16
// RUN: sed 's/seed = 0 : i64}/seed = 0 : i64, precision = #gacc.precision<bf16>}/' %gacc_src/examples/kjv_gpt.mlir > %t.kjv_gpt_bf16.mlir
// RUN: gacc-opt %t.kjv_gpt_bf16.mlir -gacc-lower-to-nvvm-pipeline="cublas=true cublaslt=true format=isa" --mlir-print-ir-after=convert-gacc-to-blas 2>&1 >/dev/null | FileCheck %s --check-prefix=ATTN
// RUN: gacc-opt %t.kjv_gpt_bf16.mlir -gacc-lower-to-nvvm-pipeline="cublas=true cublaslt=true cudnn-attention=true format=isa" --mlir-print-ir-after=convert-gacc-to-cudnn 2>&1 >/dev/null | FileCheck %s --check-prefix=CUDNN

// The host code of the cuda target: the GEMMs are cuBLAS calls made by the
// host code (gacc_cublas_sgemm), so no weight-gradient kernel remains. On
// the GPU a launch counts in gacc-defer-weight-gradients' cost model, so
// both weight gradients are computed once per window (the last two calls,
// after the micro-batch loop, with beta 0) and the biases' gradients are
// column sums of the same windows after the loop: no accumulate kernel is
// left. The module
// (with a cubin, what gacc-run --target cuda JIT-compiles) translates to
// LLVM IR, which loads the cubin in a global constructor through the mgpu*
// ABI of runtime/CudaRuntime.cpp.

// CHECK: llvm.func @gacc_cublas_sgemm(
// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK-COUNT-3: llvm.call @gacc_cublas_sgemm(
// CHECK-NOT: llvm.call @gacc_cublas_sgemm(
// CHECK: llvm.br
// CHECK-COUNT-2: llvm.call @gacc_cublas_sgemm(
// CHECK-NOT: llvm.call @gacc_cublas_sgemm(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @fashion_mlp_predict(
// CHECK-COUNT-2: llvm.call @gacc_cublas_sgemm(

// With cublaslt=true the same GEMMs call cuBLASLt (gacc_cublaslt_sgemm,
// the same arguments and what the operands hold: fp32 here), and no cuBLAS
// call remains. The two forward GEMMs of a micro-batch take their layers'
// bias adds, and the hidden layer's ReLU, into cuBLASLt's epilogue
// (gacc_cublaslt_sgemm_epilogue); the input gradient's GEMM and the two
// weight gradients after the loop are plain GEMMs.
// LT: llvm.func @gacc_cublaslt_sgemm(
// LT: llvm.func @gacc_cublaslt_sgemm_epilogue(
// LT-LABEL: llvm.func @fashion_mlp(
// LT-COUNT-2: llvm.call @gacc_cublaslt_sgemm_epilogue(
// LT: llvm.call @gacc_cublaslt_sgemm(
// LT: llvm.br
// LT-COUNT-2: llvm.call @gacc_cublaslt_sgemm(
// LT-NOT: @gacc_cublas_sgemm(

// PTX-NOT: .entry accumulate_

// The kept operands are built in their window rows (empty-tensor
// elimination): no copy into the windows, which on the GPU path would be a
// host memcpy of device memory (and in a captured graph would not replay).
// NOCOPY-LABEL: func.func @fashion_mlp(
// NOCOPY: memref.subview
// NOCOPY-NOT: memref.copy
// NOCOPY: return

// LLVM: @llvm.global_ctors
// LLVM-DAG: call ptr @mgpuModuleLoad(
// LLVM-DAG: call void @mgpuLaunchKernel(
// LLVM-DAG: call void @gacc_cublas_sgemm(

// A bf16 step through cuBLASLt (fashion_mlp_adamw): its five GEMMs read
// rounded values only, which gacc-narrow-stored-values stores as bf16, so
// each is a product of bf16 operands (tensor cores) with no `inputs`
// argument. The two forward GEMMs write their layers' rounded outputs in
// bf16 with the bias (and the hidden layer's ReLU) in the epilogue
// (gacc_cublaslt_sgemm_epilogue_bf16: RELU_BIAS 1, BIAS 0); the three
// gradient GEMMs write fp32. The predict function computes in fp32 (0),
// its hidden layer's bias and ReLU in the GEMM's epilogue.
// BF16-LABEL: func.func @fashion_mlp_adamw(
// BF16-NOT: func.call @gacc_cublaslt_sgemm(
// BF16: func.call @gacc_cublaslt_sgemm_epilogue_bf16({{[^)]+}}, %c1_i32{{(_[0-9]+)?}}) : (memref<?x?xbf16, {{.+}}>, memref<?x?xbf16, {{.+}}>, memref<?x?xbf16, {{.+}}>, memref<?xbf16, {{.+}}>, i32, i32, f32, i32) -> ()
// BF16: func.call @gacc_cublaslt_sgemm_epilogue_bf16({{[^)]+}}, %c0_i32{{(_[0-9]+)?}}) :
// BF16-COUNT-3: func.call @gacc_cublaslt_sgemm_bf16({{[^)]+}}) : (memref<?x?xbf16, {{.+}}>, memref<?x?xbf16, {{.+}}>, memref<?x?xf32, {{.+}}>, i32, i32, f32) -> ()
// BF16-NOT: func.call @gacc_cublaslt_sgemm(
// BF16-LABEL: func.func @fashion_mlp_adamw_predict(
// BF16: call @gacc_cublaslt_sgemm_epilogue({{.+}}, %c0_i32{{(_[0-9]+)?}}, %c1_i32{{(_[0-9]+)?}}) :
// BF16: call @gacc_cublaslt_sgemm({{.+}}, %c0_i32{{(_[0-9]+)?}}) :

// A bf16 transformer (kjv_gpt at bf16): attention's batch products are
// strided batched cuBLASLt calls. In the forward, the scores q·kᵀ read
// rounded values (stored as bf16), the product of the probabilities with
// the values does not (the probabilities inside the attention's
// decomposition are not rounded: fp32 operands, fp32 compute).
// ATTN-LABEL: func.func @kjv_gpt(
// ATTN: func.call @gacc_cublaslt_sgemm_batched_bf16(
// ATTN-NOT: func.call @gacc_cublaslt_sgemm
// ATTN: func.call @gacc_cublaslt_sgemm_batched({{.+}}, %c0_i32{{(_[0-9]+)?}}) :

// With cudnn-attention=true each of its 4 layers' attention is one cuDNN
// fused forward (the statistics kept for the backward) and one fused
// backward: no batch product is left to cuBLASLt in the step. Evaluation
// (the predict function, fp32) keeps the decomposition.
// CUDNN-LABEL: func.func @kjv_gpt(
// CUDNN-NOT: gacc_cublaslt_sgemm_batched
// CUDNN-COUNT-4: call @gacc_cudnn_attention_forward_bf16(
// CUDNN-NOT: gacc_cublaslt_sgemm_batched
// CUDNN-COUNT-4: call @gacc_cudnn_attention_backward_bf16(
// CUDNN-NOT: gacc_cublaslt_sgemm_batched
// CUDNN-LABEL: func.func @kjv_gpt_predict(
// CUDNN-NOT: gacc_cudnn_attention
// CUDNN: gacc_cublaslt_sgemm_batched
