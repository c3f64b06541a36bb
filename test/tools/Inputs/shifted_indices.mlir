// Embedding indices computed in the body (a token id shifted by one):
// gacc-run cannot bound them against the table before they are read.
// Used by index-bounds.test; the constant case by its sed.
gacc.param @emb : tensor<5x4xf32> = #gacc.normal<mean = 0.0, std = 1.0>
gacc.param @w : tensor<3x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.train_step @shifted params [@emb, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64, effective_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%emb: tensor<5x4xf32>, %w: tensor<3x4xf32>, %t: tensor<2x3xi32>, %y: tensor<2xi32>):
  %e0 = gacc.embedding %t, %emb : tensor<2x3xi32>, tensor<5x4xf32> -> tensor<2x3x4xf32>
  %one = arith.constant dense<1> : tensor<2x3xi32>
  %i = arith.addi %t, %one : tensor<2x3xi32>
  %e1 = gacc.embedding %i, %emb : tensor<2x3xi32>, tensor<5x4xf32> -> tensor<2x3x4xf32>
  %e = arith.addf %e0, %e1 : tensor<2x3x4xf32>
  %z3 = gacc.linear %e, %w : tensor<2x3x4xf32>, tensor<3x4xf32> -> tensor<2x3x3xf32>
  %s = tensor.extract_slice %z3[0, 0, 0] [2, 1, 3] [1, 1, 1] : tensor<2x3x3xf32> to tensor<2x3xf32>
  %l = gacc.cross_entropy %s, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
