// RUN: gacc-opt %s -gacc-merge-gpu-modules | FileCheck %s
// RUN: gacc-opt %s -gacc-merge-gpu-modules=name=step_kernels | FileCheck %s --check-prefix=NAMED
// The printer flags of the command line do not change which kernels are
// alike: constants elided in the output are compared whole.
// RUN: gacc-opt %s -gacc-merge-gpu-modules --mlir-elide-elementsattrs-if-larger=2 | FileCheck %s

// Two outlined kernels that share a function name but not their ops move
// into one gpu.module, each renamed after its old module, and the
// launches follow them. A third kernel computes what the first does (the
// same ops on the same types, at another location): it is not kept, and
// its launch launches the first. Two kernels that differ only in a
// constant's elements are both kept. A device function (not a kernel)
// keeps its name, so the calls to it still find it.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @host
// CHECK: gpu.launch_func @gacc_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @gacc_kernels::@f_kernel_0 blocks
// CHECK: gpu.launch_func @gacc_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @gacc_kernels::@c_kernel blocks
// CHECK: gpu.launch_func @gacc_kernels::@c_kernel_0 blocks
// CHECK: gpu.launch_func @gacc_kernels::@calls blocks
// CHECK: gpu.module @gacc_kernels {
// CHECK: gpu.func @f_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @f_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @c_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @c_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK: func.func @helper(
// CHECK: gpu.func @calls(%{{.*}}: memref<4xf32>) kernel
// CHECK: func.call @helper(
// CHECK-NOT: gpu.func
// CHECK-NOT: gpu.module
// NAMED: gpu.launch_func @step_kernels::@f_kernel blocks
// NAMED: gpu.module @step_kernels
module attributes {gpu.container_module} {
  func.func @host(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @f_kernel_1::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @c_kernel::@c_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @c_kernel_0::@c_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @calls::@calls blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %two = arith.constant 2.0 : f32
      memref.store %two, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_1 {
    gpu.func @f_kernel(%b: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %b[%c0] : memref<4xf32> loc("elsewhere")
      gpu.return
    }
  }
  gpu.module @c_kernel {
    gpu.func @c_kernel(%a: memref<4xf32>) kernel {
      %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %m = bufferization.to_buffer %c : tensor<4xf32> to memref<4xf32>
      memref.copy %m, %a : memref<4xf32> to memref<4xf32>
      gpu.return
    }
  }
  gpu.module @c_kernel_0 {
    gpu.func @c_kernel(%a: memref<4xf32>) kernel {
      %c = arith.constant dense<[1.0, 2.0, 3.0, 5.0]> : tensor<4xf32>
      %m = bufferization.to_buffer %c : tensor<4xf32> to memref<4xf32>
      memref.copy %m, %a : memref<4xf32> to memref<4xf32>
      gpu.return
    }
  }
  gpu.module @calls {
    func.func @helper(%a: memref<4xf32>) {
      return
    }
    gpu.func @calls(%a: memref<4xf32>) kernel {
      func.call @helper(%a) : (memref<4xf32>) -> ()
      gpu.return
    }
  }
}

// An empty name is an error.
// RUN: not gacc-opt %s -gacc-merge-gpu-modules="name=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: gacc-merge-gpu-modules: option name must be a symbol name, got ''
