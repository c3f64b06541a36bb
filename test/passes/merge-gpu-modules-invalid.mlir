// RUN: gacc-opt %s -split-input-file -gacc-merge-gpu-modules -verify-diagnostics

// Modules compiled for different targets cannot become one module.
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target<chip = "sm_90">] {
    gpu.func @k() kernel { gpu.return }
  }
  // expected-error @below {{gpu.module @b has other targets than @a: they cannot be merged}}
  gpu.module @b [#nvvm.target<chip = "sm_80">] {
    gpu.func @k() kernel { gpu.return }
  }
  func.func @f() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// Device functions keep their names (calls name them): two of one name in
// two modules are an error.
module attributes {gpu.container_module} {
  gpu.module @a {
    gpu.func @helper() { gpu.return }
    gpu.func @k() kernel { gpu.return }
  }
  gpu.module @b {
    // expected-error @below {{symbol @helper is defined in two gpu.modules}}
    gpu.func @helper() { gpu.return }
    gpu.func @k2() kernel { gpu.return }
  }
  func.func @f() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

