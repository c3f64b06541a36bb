// RUN: gacc-opt %s -split-input-file -verify-diagnostics -gacc-mask-batch-statistics

// Statistics over samples: the input's dimension 0 must be the micro-batch.
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.statistic @mean : tensor<3xf32> = #gacc.zeros
gacc.statistic @var : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %w: tensor<4x3xf32>, %x: tensor<2x3xf32>, %y: tensor<2xi32>):
  // expected-error @below {{'gacc.batch_norm' op computes statistics over the samples of the micro-batch, so its input's dimension 0 must be the micro-batch size 2, got 'tensor<4x3xf32>'}}
  %n = gacc.batch_norm %w, %g, %g running(@mean, @var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %z = gacc.linear %x, %n : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x4xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The samples that count are read from the loss op's targets: a term added
// after the loss op is refused (by the verifier) at the yield, naming the
// op.
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.statistic @mean : tensor<3xf32> = #gacc.zeros
gacc.statistic @var : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %w: tensor<4x3xf32>, %x: tensor<2x3xf32>, %y: tensor<2xi32>):
  %n = gacc.batch_norm %x, %g, %g running(@mean, @var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
  %z = gacc.linear %n, %w : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x4xf32>, tensor<2xi32> -> tensor<f32>
  %r = arith.addf %l, %l : tensor<f32>
  // expected-error @below {{'gacc.yield' op the yielded loss must be produced by a loss op (an op implementing LossOpInterface, such as gacc.cross_entropy), which defines the step's prediction, targets and padding; it is the result of 'arith.addf' (nothing is computed on the loss op's result: a term added is not supported, weight decay is the optimizer's; the loss's normalization is the step's `normalization`, its scale the learning rate's)}}
  gacc.yield %r : tensor<f32>
}
