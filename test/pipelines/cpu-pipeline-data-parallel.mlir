// RUN: sed 's/seed = 0 : i64}/seed = 0 : i64, data_parallel}/' %gacc_src/examples/fashion_mlp.mlir > %t.mlir
// RUN: gacc-opt %t.mlir -gacc-lower-to-cpu-pipeline | FileCheck %s
// RUN: gacc-opt %t.mlir -gacc-lower-to-cpu-pipeline=unroll | FileCheck %s --check-prefix=UNROLL
// RUN: gacc-opt %t.mlir -gacc-lower-to-nvvm-pipeline 2>/dev/null | FileCheck %s --check-prefix=NVVM

// fashion_mlp as a data_parallel step (N = 8): the compiled step calls the
// runtime's collective exactly once, after the micro-batch loop's last
// fused GEMM and before the update. Unrolled, the 8 micro-batches' 40
// GEMMs still share one collective. On the NVVM path the call stays in the
// host code (not in a kernel).

// CHECK: llvm.func @gacc_all_reduce_sum_f32(
// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK-NOT: llvm.call @gacc_all_reduce_sum_f32
// CHECK: llvm.call @gacc_sgemm(
// CHECK: llvm.call @gacc_all_reduce_sum_f32(
// CHECK-NOT: llvm.call @gacc_sgemm(
// CHECK-NOT: llvm.call @gacc_all_reduce_sum_f32
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @fashion_mlp_predict(
// CHECK-NOT: gacc_all_reduce_sum_f32

// UNROLL-LABEL: llvm.func @fashion_mlp(
// UNROLL-COUNT-40: llvm.call @gacc_sgemm(
// UNROLL-NOT: llvm.call @gacc_sgemm(
// UNROLL: llvm.call @gacc_all_reduce_sum_f32(
// UNROLL-NOT: llvm.call @gacc_all_reduce_sum_f32(
// UNROLL-LABEL: llvm.func @fashion_mlp_predict(

// NVVM-LABEL: llvm.func @fashion_mlp(
// NVVM-NOT: llvm.call @gacc_all_reduce_sum_f32
// NVVM: gpu.launch_func
// NVVM: llvm.call @gacc_all_reduce_sum_f32(
// NVVM-NOT: llvm.call @gacc_all_reduce_sum_f32(
