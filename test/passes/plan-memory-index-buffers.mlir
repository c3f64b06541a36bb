// RUN: gacc-opt %s -gacc-plan-memory -o /dev/null | FileCheck %s
// RUN: gacc-opt %s -gacc-plan-memory="target=cuda" -o /dev/null | FileCheck %s --check-prefix=CUDA

// A step with loss scaling and a moving average of the weights holds a
// buffer of indices (memref<2xindex>, one per parameter) after bufferization: its elements are
// sized by the data layout (8 bytes for index), not by a bit width that
// only integers and floats have (this used to crash the plan).
// CHECK-LABEL: memory plan of @ema_scaled on cpu: micro-batch 2 × 4 accumulation steps
// CHECK:       peak
// CUDA-LABEL:  memory plan of @ema_scaled on cuda: micro-batch 2 × 4 accumulation steps
// CUDA:        peak

gacc.param @w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @b : tensor<16xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.train_step @ema_scaled params [@w, @b] attributes {
    accum_steps = 4 : i64, micro_batch = 2 : i64, effective_batch = 8 : i64,
    ema_decay = 0.99 : f64,
    loss_scaling = #gacc.loss_scaling<init_scale = 1024.0>,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<2x8xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x16xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
