// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-update=true cuda-graph=true format=isa" 2>/dev/null | FileCheck %s
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-update=true format=isa" 2>/dev/null | FileCheck %s --check-prefix=EAGER

// cuda-graph: the graph form of every public function
// (gacc-device-resident-scalars). The step's host code queues its kernels
// and GEMMs and never reads device memory: no load, one wait (before it
// returns), where the eager step waits after every micro-batch to add up
// its loss and count on the host. lr, step and first_sample arrive as
// pointers (rank-0 buffers), and the four results leave through a
// trailing memref<4xf32>: its descriptor is the last five arguments.

// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64) {
// CHECK-NOT: llvm.load
// CHECK-NOT: gacc_cuda_synchronize
// CHECK: llvm.call @gacc_cuda_synchronize()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }

// The arena update reads lr, step and the loss scale from buffers too
// (the host loads only a size from its own stack).
// CHECK-LABEL: llvm.func @fashion_mlp_update_arena(
// CHECK-NOT: llvm.load {{.*}} -> {{f32|f64|i32|i1}}
// CHECK: llvm.call @gacc_cuda_synchronize()
// CHECK-NEXT: llvm.return

// EAGER-LABEL: llvm.func @fashion_mlp(
// EAGER: llvm.call @gacc_cuda_synchronize()
// EAGER-NEXT: llvm.load
// EAGER: llvm.return %{{.*}} : !llvm.struct<(f32, f32, f32, f32)>
