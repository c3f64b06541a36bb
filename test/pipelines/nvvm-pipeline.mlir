// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="format=isa defer-window-bytes=0" | FileCheck %s
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-nvvm-pipeline="format=isa chip=sm_80 features=+ptx70 defer-window-bytes=0" | FileCheck %s --check-prefix=SM80

// The NVVM pipeline: every loop becomes a kernel in one gpu.module,
// serialized to PTX for sm_90 by default; the host launches one accumulate
// kernel per parameter per micro-batch (inside the loop) and one update
// kernel per parameter per optimizer step (after it), a buffer freed after
// its last launch (stream-ordered reuse). (defer-window-bytes=0: every
// gradient accumulates per micro-batch; nvvm-pipeline-cublas.mlir shows
// the weight and bias gradients computed once per window instead.) All launches queue
// on one stream without waiting (gacc-async-launches); the host waits
// before it reads the micro-batch's loss and count, and before returning.

// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@accumulate_fc1_weight
// CHECK-NOT: gacc_cuda_synchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@accumulate_fc1_bias
// CHECK-NOT: gacc_cuda_synchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@accumulate_fc2_weight
// CHECK-NOT: gacc_cuda_synchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@accumulate_fc2_bias
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @gacc_cuda_synchronize()
// CHECK-NEXT: llvm.load
// CHECK: llvm.br
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@update_fc1_weight
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@update_fc1_bias
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@update_fc2_weight
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @gacc_kernels::@update_fc2_bias
// CHECK: llvm.call @gacc_cuda_synchronize()
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
// CHECK: gpu.binary @gacc_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.+}}, assembly = "
// CHECK-NOT: gpu.binary

// SM80: gpu.binary @gacc_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">
