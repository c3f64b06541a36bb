// A small sequence model exercising every sequence op and its adjoint:
// embedding, linear on [m, S, D], exact GELU, layer_norm, and the
// [m, S, C] cross-entropy with ignore_index, normalized by token_mean.
// 3 micro-batches of 2 sequences of 5 positions; targets past each
// sequence's length are ignore_index, so micro-batches hold very different
// numbers of tokens.
gacc.param @embedding : tensor<11x6xf32> = #gacc.normal<mean = 0.0, std = 1.0>
gacc.param @w1 : tensor<7x6xf32> = #gacc.kaiming_uniform<fan_in = 6>
gacc.param @b1 : tensor<7xf32> = #gacc.kaiming_uniform<fan_in = 6>
gacc.param @ln_w : tensor<7xf32> = #gacc.constant<value = 1.0>
gacc.param @ln_b : tensor<7xf32> = #gacc.zeros
gacc.param @w2 : tensor<11x7xf32> = #gacc.kaiming_uniform<fan_in = 7>
gacc.param @b2 : tensor<11xf32> = #gacc.kaiming_uniform<fan_in = 7>

gacc.train_step @seq params [@embedding, @w1, @b1, @ln_w, @ln_b, @w2, @b2] attributes {
    accum_steps = 3 : i64, micro_batch = 2 : i64, effective_batch = 6 : i64,
    normalization = #gacc.normalization<token_mean>,
    optimizer = #gacc.sgd<lr = 0.3, momentum = 0.9>} {
^bb0(%emb: tensor<11x6xf32>, %w1: tensor<7x6xf32>, %b1: tensor<7xf32>,
     %g: tensor<7xf32>, %beta: tensor<7xf32>, %w2: tensor<11x7xf32>, %b2: tensor<11xf32>,
     %tokens: tensor<2x5xi32>, %targets: tensor<2x5xi32>):
  %e = gacc.embedding %tokens, %emb : tensor<2x5xi32>, tensor<11x6xf32> -> tensor<2x5x6xf32>
  %h = gacc.linear %e, %w1 bias %b1 : tensor<2x5x6xf32>, tensor<7x6xf32>, tensor<7xf32> -> tensor<2x5x7xf32>
  %a = gacc.gelu %h : tensor<2x5x7xf32>
  %n = gacc.layer_norm %a, %g, %beta : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
  %z = gacc.linear %n, %w2 bias %b2 : tensor<2x5x7xf32>, tensor<11x7xf32>, tensor<11xf32> -> tensor<2x5x11xf32>
  %loss = gacc.cross_entropy %z, %targets : tensor<2x5x11xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
