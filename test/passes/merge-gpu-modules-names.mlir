// RUN: gacc-opt %s -gacc-merge-gpu-modules | FileCheck %s

// A kernel's location name becomes its name only when it makes an
// identifier: an empty one is skipped (it wrote an empty symbol), one that
// starts with a digit gets '_' before it (ptxas refused it).

// CHECK-LABEL: gpu.module @gacc_kernels
// CHECK-DAG: gpu.func @a() kernel
// CHECK-DAG: gpu.func @_1st_update(%{{.+}}: memref<4xf32>) kernel
// CHECK-LABEL: func.func @f(
// CHECK: gpu.launch_func @gacc_kernels::@a
// CHECK: gpu.launch_func @gacc_kernels::@_1st_update
module attributes {gpu.container_module} {
  gpu.module @a {
    gpu.func @k() kernel { gpu.return } loc(""("x.mlir":1:1))
  }
  gpu.module @b {
    gpu.func @k(%x: memref<4xf32>) kernel { gpu.return } loc("1st update"("x.mlir":2:1))
  }
  func.func @f(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
}
