// Token indices cut out of a longer sequence input before the embedding
// (input0 [m, 5], the first 4 columns): gacc-run bounds input0 by the
// table's 7 rows all the same.
gacc.param @wte : tensor<7x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.param @head : tensor<7x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @sliced params [@wte, @head] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%wte: tensor<7x4xf32>, %head: tensor<7x4xf32>, %seq: tensor<2x5xi32>, %targets: tensor<2x4xi32>):
  %tokens = tensor.extract_slice %seq[0, 0] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
  %e = gacc.embedding %tokens, %wte : tensor<2x4xi32>, tensor<7x4xf32> -> tensor<2x4x4xf32>
  %z = gacc.linear %e, %head : tensor<2x4x4xf32>, tensor<7x4xf32> -> tensor<2x4x7xf32>
  %l = gacc.cross_entropy %z, %targets : tensor<2x4x7xf32>, tensor<2x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
