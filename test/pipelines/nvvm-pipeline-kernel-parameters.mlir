// REQUIRES: ptxas
// A kernel's parameters stay within PTX's 4352 bytes (before ISA 8.1):
// kjv_gpt's graph step, whose clipping once merged one rank-0 buffer per
// parameter into a one-thread kernel of 6120 bytes, assembles with ptxas.
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true cublaslt=true" -o /dev/null
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true arena-update=true" -o /dev/null

// Constants and the index arithmetic on them are in the kernels
// (gpu-launch-sink-index-computations), not their parameters: each of
// fashion_mlp's kernels takes one index (its grid's offset arithmetic)
// and its buffers.
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true" --mlir-print-ir-after=gacc-async-launches -o /dev/null 2>&1 | FileCheck %s
// CHECK: gpu.func @fashion_mlp_kernel(%arg0: index, %arg1: memref<f32>, %arg2: memref<f32>)
// CHECK: gpu.func @fashion_mlp_kernel_0(%arg0: index, %arg1: memref<32x784xf32, strided<[784, 1], offset: ?>>, %arg2: memref<256x784xf32>, %arg3: memref<65536xf32>)
// CHECK-NOT: gpu.func @{{.*}}(%arg0: index, %arg1: index, %arg2: index
