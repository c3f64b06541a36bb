// The loss targets also index the embedding's table: their ignore_index,
// which pads a ragged micro-batch, would read outside it.
gacc.param @wte : tensor<7x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.param @head : tensor<7x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @targets_as_indices params [@wte, @head] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%wte: tensor<7x4xf32>, %head: tensor<7x4xf32>, %targets: tensor<2x4xi32>):
  %e = gacc.embedding %targets, %wte : tensor<2x4xi32>, tensor<7x4xf32> -> tensor<2x4x4xf32>
  %z = gacc.linear %e, %head : tensor<2x4x4xf32>, tensor<7x4xf32> -> tensor<2x4x7xf32>
  %l = gacc.cross_entropy %z, %targets : tensor<2x4x7xf32>, tensor<2x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
