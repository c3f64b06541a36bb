// A character-level model of the King James Bible: each character's
// embedding goes through position-wise layers (linear, tanh-GELU,
// layer_norm, linear) to logits over the next character. The loss is the
// next-character cross-entropy with a token mean over every target of the
// effective batch (padding targets are ignore_index and count for nothing).
// 16 verses per micro-batch × 4 accumulation steps = 64 verses per
// optimizer step; verses are padded to the longest KJV verse (528
// characters, so 527 targets).
//
//   build/bin/gacc-run examples/kjv_char.mlir --dataset kjv --epochs 1

gacc.param @embedding : tensor<64x64xf32> = #gacc.normal<mean = 0.0, std = 1.0>
gacc.param @fc1_weight : tensor<128x64xf32> = #gacc.kaiming_uniform<fan_in = 64>
gacc.param @fc1_bias : tensor<128xf32> = #gacc.kaiming_uniform<fan_in = 64>
gacc.param @ln_weight : tensor<128xf32> = #gacc.constant<value = 1.0>
gacc.param @ln_bias : tensor<128xf32> = #gacc.zeros
gacc.param @fc2_weight : tensor<64x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @fc2_bias : tensor<64xf32> = #gacc.kaiming_uniform<fan_in = 128>

gacc.train_step @kjv_char params [@embedding, @fc1_weight, @fc1_bias, @ln_weight, @ln_bias, @fc2_weight, @fc2_bias] attributes {
    accum_steps = 4 : i64, micro_batch = 16 : i64, effective_batch = 64 : i64,
    normalization = #gacc.normalization<token_mean>,
    optimizer = #gacc.sgd<lr = 0.5, momentum = 0.9>,
    seed = 0 : i64} {
^bb0(%emb: tensor<64x64xf32>, %w1: tensor<128x64xf32>, %b1: tensor<128xf32>,
     %g: tensor<128xf32>, %beta: tensor<128xf32>,
     %w2: tensor<64x128xf32>, %b2: tensor<64xf32>,
     %tokens: tensor<16x527xi32>, %targets: tensor<16x527xi32>):
  %e = gacc.embedding %tokens, %emb : tensor<16x527xi32>, tensor<64x64xf32> -> tensor<16x527x64xf32>
  %h = gacc.linear %e, %w1 bias %b1 : tensor<16x527x64xf32>, tensor<128x64xf32>, tensor<128xf32> -> tensor<16x527x128xf32>
  %a = gacc.gelu %h {approximate = "tanh"} : tensor<16x527x128xf32>
  %n = gacc.layer_norm %a, %g, %beta : tensor<16x527x128xf32>, tensor<128xf32>, tensor<128xf32>
  %z = gacc.linear %n, %w2 bias %b2 : tensor<16x527x128xf32>, tensor<64x128xf32>, tensor<64xf32> -> tensor<16x527x64xf32>
  %loss = gacc.cross_entropy %z, %targets : tensor<16x527x64xf32>, tensor<16x527xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
