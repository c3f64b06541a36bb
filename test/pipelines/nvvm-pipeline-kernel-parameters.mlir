// A kernel's parameters stay within PTX's 4352 bytes (before ISA 8.1):
// kjv_gpt's graph step, whose clipping once merged one rank-0 buffer per
// parameter into a one-thread kernel of 6120 bytes that ptxas refused,
// compiles; the pipeline's gacc-check-kernel-parameters sums every
// outlined kernel's parameters and would stop it with an error naming the
// kernel (format=isa: no ptxas needed).
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true cublas=true cublaslt=true format=isa" -o /dev/null
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true arena-update=true format=isa" -o /dev/null
// From PTX ISA 8.1 on a kernel may take 32764 bytes, and the limit
// follows the features: the passes then fuse up to it.
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true format=isa" --mlir-print-ir-after=gacc-async-launches -o /dev/null 2>&1 | %python %S/Inputs/kernel_parameter_bytes.py | FileCheck %s --check-prefix=PTX80
// PTX80: over 4352: False
// RUN: gacc-opt %gacc_src/examples/kjv_gpt.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true features=+ptx81 format=isa" --mlir-print-ir-after=gacc-async-launches -o /dev/null 2>&1 | %python %S/Inputs/kernel_parameter_bytes.py | FileCheck %s --check-prefix=PTX81
// PTX81: over 4352: True

// Constants are in the kernels (gpu-launch-sink-index-computations), not
// their parameters: fashion_mlp's kernels take one index (the grid's
// offset arithmetic, computed on the host; two for a two-dimensional
// kernel) and their buffers.
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cuda-graph=true format=isa" --mlir-print-ir-after=gacc-async-launches -o /dev/null 2>&1 | FileCheck %s
// CHECK: gpu.func @fashion_mlp_kernel(%arg0: index, %arg1: memref<f32>, %arg2: memref<f32>)
// CHECK: gpu.func @fashion_mlp_kernel_0(%arg0: index, %arg1: memref<32x784xf32, strided<[784, 1], offset: ?>>, %arg2: memref<256x784xf32>, %arg3: memref<65536xf32>)
// CHECK-NOT: gpu.func @{{.*}}(%arg0: index, %arg1: index, %arg2: index
