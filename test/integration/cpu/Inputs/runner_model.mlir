// Two schedules of one tiny linear classifier on the same parameters:
// @n2 = 2 micro-batches of 2 samples, @n1 = 1 micro-batch of 4 samples.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @b : tensor<3xf32> = #gacc.zeros

gacc.train_step @n2 params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.5, momentum = 0.9>} {
^bb0(%w: tensor<3x2xf32>, %b: tensor<3xf32>, %x: tensor<2x2xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<2x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

gacc.train_step @n1 params [@w, @b] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.5, momentum = 0.9>} {
^bb0(%w: tensor<3x2xf32>, %b: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
