// A log of the inputs before a linear layer: finite on positive samples,
// infinite on zeros (the derivative 1/x at 0). Used by padding-inputs.test.
gacc.param @w : tensor<3x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.train_step @log_model params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64, effective_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %h = math.log %x : tensor<2x4xf32>
  %z = gacc.linear %h, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
