// RUN: gacc-opt %s -split-input-file -gacc-merge-gpu-modules | FileCheck %s

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

// -----

// A kernel named from its location ("a") takes the name a later module's
// kernel would fall back to: that one is made unique (@a_1), not reported
// as a symbol defined in two gpu.modules.

// CHECK-LABEL: gpu.module @gacc_kernels
// CHECK-DAG: gpu.func @a() kernel
// CHECK-DAG: gpu.func @a_1(%{{.+}}: memref<4xf32>) kernel
// CHECK-LABEL: func.func @f(
// CHECK: gpu.launch_func @gacc_kernels::@a_1
// CHECK: gpu.launch_func @gacc_kernels::@a blocks
module attributes {gpu.container_module} {
  gpu.module @b {
    gpu.func @k() kernel { gpu.return } loc("a"("x.mlir":1:1))
  }
  gpu.module @a {
    gpu.func @k(%x: memref<4xf32>) kernel { gpu.return }
  }
  func.func @f(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// The merged module keeps the modules' targets.

// CHECK-LABEL: gpu.module @gacc_kernels [#nvvm.target<chip = "sm_90">]
// CHECK-DAG: gpu.func @a() kernel
// CHECK-DAG: gpu.func @b() kernel
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target<chip = "sm_90">] {
    gpu.func @k() kernel { gpu.return }
  }
  gpu.module @b [#nvvm.target<chip = "sm_90">] {
    gpu.func @k() kernel { %c = arith.constant 0 : index gpu.return }
  }
  func.func @f() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// A device function keeps its name (calls name it): a kernel that would
// take the same name, from its module (@helper's only kernel), is made
// unique instead of clashing with it.

// CHECK-LABEL: gpu.module @gacc_kernels
// CHECK-DAG: gpu.func @helper_1() kernel
// CHECK-DAG: gpu.func @helper(%{{.+}}: f32)
// CHECK-LABEL: func.func @f(
// CHECK: gpu.launch_func @gacc_kernels::@helper_1
module attributes {gpu.container_module} {
  gpu.module @helper {
    gpu.func @k() kernel { gpu.return }
  }
  gpu.module @b {
    gpu.func @helper(%x: f32) { gpu.return }
    gpu.func @k2(%x: memref<4xf32>) kernel { gpu.return }
  }
  func.func @f(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @helper::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
}
