// RUN: not gacc-opt %s -gacc-async-launches=synchronize-callee= 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: gacc-opt %s -gacc-async-launches=synchronize-callee=taken -verify-diagnostics

// An empty synchronize-callee is an error (it wrote a call of an empty
// symbol), and one that names a function of another type is one error at
// that function (the calls failed to verify at a memref.load).
// EMPTY: error: gacc-async-launches: option synchronize-callee needs a name

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<4xf32>) kernel { gpu.return }
  }
  // expected-error @below {{'func.func' op is named by synchronize-callee 'taken', which must be a func.func of type () -> ()}}
  func.func private @taken(i32)
  func.func @step(%x: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %v = memref.load %x[%c0] : memref<4xf32>
    return %v : f32
  }
}
