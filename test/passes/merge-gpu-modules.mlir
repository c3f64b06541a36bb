// RUN: gacc-opt %s -gacc-merge-gpu-modules | FileCheck %s
// RUN: gacc-opt %s -gacc-merge-gpu-modules=name=step_kernels | FileCheck %s --check-prefix=NAMED

// Two outlined kernels that share a function name move into one gpu.module,
// each renamed after its old module, and the launches follow them.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @host
// CHECK: gpu.launch_func @gacc_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @gacc_kernels::@f_kernel_0 blocks
// CHECK: gpu.module @gacc_kernels {
// CHECK: gpu.func @f_kernel() kernel
// CHECK: gpu.func @f_kernel_0() kernel
// CHECK-NOT: gpu.module
// NAMED: gpu.launch_func @step_kernels::@f_kernel blocks
// NAMED: gpu.module @step_kernels
module attributes {gpu.container_module} {
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
}
