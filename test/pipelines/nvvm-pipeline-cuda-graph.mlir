// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-update=true cuda-graph=true format=isa" 2>/dev/null | FileCheck %s
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="cublas=true arena-update=true format=isa" 2>/dev/null | FileCheck %s --check-prefix=EAGER
// With fp16 loss scaling the update is skipped on a non-finite gradient:
// in the graph form its kernels are guarded by the device's flag, and the
// step still waits once and loads nothing; its five results leave through
// the trailing buffer.
// RUN: sed 's/#gacc.sgd<lr = 0.05, momentum = 0.9>/#gacc.sgd<lr = 0.05, momentum = 0.9>, precision = #gacc.precision<fp16>, loss_scaling = #gacc.loss_scaling<init_scale = 1024.0>/' %gacc_src/examples/fashion_mlp.mlir > %t.fp16.mlir
// RUN: gacc-opt %t.fp16.mlir -gacc-lower-to-nvvm-pipeline="cublas=true cuda-graph=true format=isa" 2>/dev/null | FileCheck %s --check-prefix=FP16
// FP16-LABEL: llvm.func @fashion_mlp(
// FP16-NOT: llvm.load
// FP16-NOT: gacc_cuda_synchronize
// FP16: llvm.call @gacc_cuda_synchronize()
// FP16-NEXT: llvm.return
// FP16-NEXT: }

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
