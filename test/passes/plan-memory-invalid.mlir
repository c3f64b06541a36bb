// RUN: not gacc-opt %s -gacc-plan-memory="target=tpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not gacc-opt %s -gacc-plan-memory="micro-batch=100000000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: not gacc-opt %s -gacc-plan-memory="fused-attention=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUSED

// An unknown target is named.
// TARGET: error: gacc-plan-memory: target must be cpu or cuda, got 'tpu'

// Fused attention is the cuda target's.
// FUSED: error: gacc-plan-memory: fused-attention plans the cuda target's step (cuDNN); give target=cuda

// A micro-batch beyond the window limit is the schedule's error.
// LIMIT: error: 'gacc.train_step' op a micro-batch size of 100000000 would hold more than 16777216 samples per optimizer step, the limit

gacc.param @w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.train_step @small params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
