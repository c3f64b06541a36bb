// RUN: gacc-opt %s -gacc-set-accumulation-schedule | FileCheck %s --check-prefix=KEEP

// Without options the model's own schedule stays, a ragged effective batch
// included (10 = 4 + 4 + 2).
// KEEP-LABEL: gacc.train_step @ragged
// KEEP-SAME: accum_steps = 3 : i64
// KEEP-SAME: effective_batch = 10 : i64
// KEEP-SAME: micro_batch = 4 : i64
gacc.param @w : tensor<10x784xf32> = #gacc.zeros
gacc.train_step @ragged params [@w] attributes {
    accum_steps = 3 : i64, micro_batch = 4 : i64, effective_batch = 10 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<4x784xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x784xf32>, tensor<10x784xf32> -> tensor<4x10xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x10xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
