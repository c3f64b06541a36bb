// RUN: gacc-opt %s -gacc-async-launches="stream-ordered-callees=gemm" | FileCheck %s

// Launches queue on one stream made at the function's entry; the host
// waits (gacc_cuda_synchronize) only before it touches memory with work
// pending, and before returning.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: memref<4xf32>) kernel { gpu.return }
  }
  func.func private @gemm(memref<4xf32>)
  func.func private @host(memref<4xf32>)

  // CHECK: func.func private @gacc_cuda_synchronize()
  // CHECK-LABEL: func.func @step
  // CHECK-NEXT: %[[S:.*]] = gpu.wait async
  // CHECK: scf.for
  // A load at the top of the loop body waits for the last iteration's work.
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: memref.load %arg0
  // Allocation and the stream-ordered GEMM do not wait.
  // CHECK-NEXT: memref.alloc
  // CHECK-NEXT: gpu.launch_func async [%[[S]]] @kernels::@k
  // CHECK-NEXT: call @gemm
  // CHECK-NEXT: gpu.launch_func async [%[[S]]] @kernels::@k
  // CHECK-NEXT: memref.dealloc
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: memref.store
  // Nothing pending: the second store does not wait.
  // CHECK-NEXT: memref.store
  // CHECK-NEXT: }
  // After the loop: one wait before a host loop that only reads.
  // CHECK: call @gacc_cuda_synchronize()
  // CHECK-NEXT: scf.for
  // CHECK-NOT: gacc_cuda_synchronize
  // CHECK: gpu.launch_func async [%[[S]]] @kernels::@k
  // Any other call may touch memory.
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: call @host
  // CHECK-NEXT: gpu.launch_func async [%[[S]]] @kernels::@k
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: return
  func.func @step(%x: memref<4xf32>, %y: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 1.0 : f32
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %x[%c0] : memref<4xf32>
      %t = memref.alloc() : memref<4xf32>
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%t : memref<4xf32>)
      func.call @gemm(%t) : (memref<4xf32>) -> ()
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
      memref.dealloc %t : memref<4xf32>
      memref.store %v, %y[%c0] : memref<4xf32>
      memref.store %v, %y[%c1] : memref<4xf32>
    }
    %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %f) -> f32 {
      %v = memref.load %x[%i] : memref<4xf32>
      %n = arith.addf %a, %v : f32
      scf.yield %n : f32
    }
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    func.call @host(%x) : (memref<4xf32>) -> ()
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    return %s : f32
  }

  // Device work only through a stream-ordered call: still waited for.
  // CHECK-LABEL: func.func @gemm_only
  // CHECK-NOT: gpu.wait
  // CHECK: call @gemm
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: memref.load
  func.func @gemm_only(%x: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    func.call @gemm(%x) : (memref<4xf32>) -> ()
    %v = memref.load %x[%c0] : memref<4xf32>
    return %v : f32
  }

  // Blocks after the entry are entered with work pending.
  // CHECK-LABEL: func.func @blocks
  // CHECK: gpu.launch_func async
  // CHECK-NEXT: cf.cond_br
  // CHECK: ^bb1:
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: memref.load
  // CHECK: ^bb2:
  // CHECK-NEXT: call @gacc_cuda_synchronize()
  // CHECK-NEXT: return
  func.func @blocks(%x: memref<4xf32>, %p: i1) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 0.0 : f32
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    cf.cond_br %p, ^bb1, ^bb2
  ^bb1:
    %v = memref.load %x[%c0] : memref<4xf32>
    return %v : f32
  ^bb2:
    return %f : f32
  }

  // A function without launches is left as it is.
  // CHECK-LABEL: func.func @no_launch
  // CHECK-NOT: gpu.wait
  // CHECK-NOT: gacc_cuda_synchronize
  // CHECK: return
  func.func @no_launch(%x: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<4xf32>
    return %v : f32
  }
}
