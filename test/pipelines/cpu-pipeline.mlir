// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline | FileCheck %s --implicit-check-not="memref." --implicit-check-not="linalg." --implicit-check-not="gacc." --implicit-check-not="tensor." --implicit-check-not="scf."
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline=blas=false | FileCheck %s --check-prefix=LOOPS
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline=unroll | FileCheck %s --check-prefix=UNROLL

// The CPU pipeline ends in the LLVM dialect: the step function (each
// memref argument expanded into its descriptor), the predict function and
// the OpenBLAS GEMMs through gacc_sgemm. Per micro-batch: two forward
// GEMMs, one dx GEMM and the two weight gradients written into their
// accumulators; the first micro-batch of a window passes beta = 0.

// Nothing of the higher levels is left anywhere (the implicit checks).
// CHECK: llvm.func @gacc_sgemm(
// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-5: llvm.call @gacc_sgemm(
// CHECK-NOT: llvm.call @gacc_sgemm(
// CHECK: llvm.fdiv
// CHECK: llvm.return %{{.+}} : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: llvm.func @fashion_mlp_predict(
// CHECK-COUNT-2: llvm.call @gacc_sgemm(
// CHECK-NOT: llvm.call @gacc_sgemm(

// LOOPS-NOT: gacc_sgemm
// LOOPS-LABEL: llvm.func @fashion_mlp(
// LOOPS: llvm.intr.fma

// With the loop unrolled, each of the 8 micro-batches has its own body.
// UNROLL-LABEL: llvm.func @fashion_mlp(
// UNROLL-COUNT-40: llvm.call @gacc_sgemm(
// UNROLL-NOT: llvm.call @gacc_sgemm(
// UNROLL-LABEL: llvm.func @fashion_mlp_predict(
