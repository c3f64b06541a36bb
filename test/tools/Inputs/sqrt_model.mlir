// |z| = sqrt(z · z) after a linear layer initialized to zeros: the loss is
// finite, its derivative 0 · 1/(2·0) is not. And a parameter that does not
// reach the loss. Used by nonfinite-gradients.test.
gacc.param @w1 : tensor<4x4xf32> = #gacc.zeros
gacc.param @w2 : tensor<3x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.param @unused : tensor<3xf32> = #gacc.zeros
gacc.train_step @sqrt_model params [@w1, @w2, @unused] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64, effective_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w1: tensor<4x4xf32>, %w2: tensor<3x4xf32>, %u: tensor<3xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %sq = arith.mulf %z, %z : tensor<2x4xf32>
  %h = math.sqrt %sq : tensor<2x4xf32>
  %dead = arith.addf %u, %u : tensor<3xf32>
  %o = gacc.linear %h, %w2 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
