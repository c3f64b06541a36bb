// REQUIRES: ptxas
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-kernels=false format=isa" 2>/dev/null > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: grep gpu.binary %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-kernels=false format=bin" 2>/dev/null > %t.bin.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.bin.mlir | FileCheck %s --check-prefix=LLVM
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true cublaslt=true arena-kernels=false format=isa" 2>/dev/null | FileCheck %s --check-prefix=LT

// The host code of the cuda target: the GEMMs are cuBLAS calls made by the
// host code (gacc_cublas_sgemm; beta = first ? 0 : 1 for the two weight
// gradients, which land in their accumulators), so no weight-gradient
// kernel remains: the accumulate kernels left are the biases'. The module
// (with a cubin, what gacc-run --target cuda JIT-compiles) translates to
// LLVM IR, which loads the cubin in a global constructor through the mgpu*
// ABI of runtime/CudaRuntime.cpp.

// CHECK: llvm.func @gacc_cublas_sgemm(
// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK-COUNT-5: llvm.call @gacc_cublas_sgemm(
// CHECK-NOT: llvm.call @gacc_cublas_sgemm(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @fashion_mlp_predict(
// CHECK-COUNT-2: llvm.call @gacc_cublas_sgemm(

// With cublaslt=true the same GEMMs call cuBLASLt (gacc_cublaslt_sgemm, the
// same arguments), and no cuBLAS call remains.
// LT: llvm.func @gacc_cublaslt_sgemm(
// LT-LABEL: llvm.func @fashion_mlp(
// LT-COUNT-5: llvm.call @gacc_cublaslt_sgemm(
// LT-NOT: @gacc_cublas_sgemm(

// PTX-NOT: .entry accumulate_fc1_weight
// PTX-NOT: .entry accumulate_fc2_weight
// PTX: .entry accumulate_fc1_bias

// LLVM: @llvm.global_ctors
// LLVM-DAG: call ptr @mgpuModuleLoad(
// LLVM-DAG: call void @mgpuLaunchKernel(
// LLVM-DAG: call void @gacc_cublas_sgemm(
