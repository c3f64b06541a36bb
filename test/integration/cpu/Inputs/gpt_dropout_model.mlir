// gpt_model.mlir with dropout as GPT-2 places it (embd_pdrop, resid_pdrop):
// on the embeddings' sum (p = 0.1, stream 0), on the attention's output
// projection (p = 0.2, stream 1) and on the MLP's output (p = 0.1, stream 2).
// The rest as gpt_model.mlir: a one-block GPT with token and learned
// position embeddings, a pre-LN block of causal two-head
// self-attention (one fused q/k/v projection split with extract_slice, the
// heads by expand_shape and transpose) and a tanh-GELU MLP with residual
// additions, a final layer norm and an output head tied to the token
// embedding; token-mean cross-entropy. 3 micro-batches of 2 sequences of
// 5 positions over 11 symbols, fed from the `seq` tensors file.
gacc.param @wte : tensor<11x8xf32> = #gacc.normal<mean = 0.0, std = 0.02>
gacc.param @wpe : tensor<5x8xf32> = #gacc.normal<mean = 0.0, std = 0.02>
gacc.param @ln1_w : tensor<8xf32> = #gacc.constant<value = 1.0>
gacc.param @ln1_b : tensor<8xf32> = #gacc.zeros
gacc.param @attn_w : tensor<24x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @attn_b : tensor<24xf32> = #gacc.zeros
gacc.param @proj_w : tensor<8x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @proj_b : tensor<8xf32> = #gacc.zeros
gacc.param @ln2_w : tensor<8xf32> = #gacc.constant<value = 1.0>
gacc.param @ln2_b : tensor<8xf32> = #gacc.zeros
gacc.param @fc_w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @fc_b : tensor<16xf32> = #gacc.zeros
gacc.param @out_w : tensor<8x16xf32> = #gacc.kaiming_uniform<fan_in = 16>
gacc.param @out_b : tensor<8xf32> = #gacc.zeros
gacc.param @lnf_w : tensor<8xf32> = #gacc.constant<value = 1.0>
gacc.param @lnf_b : tensor<8xf32> = #gacc.zeros

gacc.train_step @gpt_dropout params [@wte, @wpe, @ln1_w, @ln1_b, @attn_w, @attn_b, @proj_w, @proj_b, @ln2_w, @ln2_b, @fc_w, @fc_b, @out_w, @out_b, @lnf_w, @lnf_b] attributes {
    accum_steps = 3 : i64, micro_batch = 2 : i64, effective_batch = 6 : i64,
    normalization = #gacc.normalization<token_mean>,
    optimizer = #gacc.sgd<lr = 0.3, momentum = 0.9>, seed = 7 : i64} {
^bb0(%wte: tensor<11x8xf32>, %wpe: tensor<5x8xf32>, %ln1_w: tensor<8xf32>, %ln1_b: tensor<8xf32>,
     %attn_w: tensor<24x8xf32>, %attn_b: tensor<24xf32>, %proj_w: tensor<8x8xf32>, %proj_b: tensor<8xf32>,
     %ln2_w: tensor<8xf32>, %ln2_b: tensor<8xf32>, %fc_w: tensor<16x8xf32>, %fc_b: tensor<16xf32>,
     %out_w: tensor<8x16xf32>, %out_b: tensor<8xf32>, %lnf_w: tensor<8xf32>, %lnf_b: tensor<8xf32>,
     %tokens: tensor<2x5xi32>, %targets: tensor<2x5xi32>):
  // Embeddings: tokens plus positions (broadcast over the micro-batch).
  %tok = gacc.embedding %tokens, %wte : tensor<2x5xi32>, tensor<11x8xf32> -> tensor<2x5x8xf32>
  %e0 = tensor.empty() : tensor<2x5x8xf32>
  %pos = linalg.broadcast ins(%wpe : tensor<5x8xf32>) outs(%e0 : tensor<2x5x8xf32>) dimensions = [0]
  %x0a = arith.addf %tok, %pos : tensor<2x5x8xf32>
  %x0 = gacc.dropout %x0a {p = 0.1 : f64} : tensor<2x5x8xf32>
  // Attention: q, k, v from one projection, two heads of 4.
  %h1 = gacc.layer_norm %x0, %ln1_w, %ln1_b : tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>
  %qkv = gacc.linear %h1, %attn_w bias %attn_b : tensor<2x5x8xf32>, tensor<24x8xf32>, tensor<24xf32> -> tensor<2x5x24xf32>
  %q0 = tensor.extract_slice %qkv[0, 0, 0] [2, 5, 8] [1, 1, 1] : tensor<2x5x24xf32> to tensor<2x5x8xf32>
  %k0 = tensor.extract_slice %qkv[0, 0, 8] [2, 5, 8] [1, 1, 1] : tensor<2x5x24xf32> to tensor<2x5x8xf32>
  %v0 = tensor.extract_slice %qkv[0, 0, 16] [2, 5, 8] [1, 1, 1] : tensor<2x5x24xf32> to tensor<2x5x8xf32>
  %q1 = tensor.expand_shape %q0 [[0], [1], [2, 3]] output_shape [2, 5, 2, 4] : tensor<2x5x8xf32> into tensor<2x5x2x4xf32>
  %k1 = tensor.expand_shape %k0 [[0], [1], [2, 3]] output_shape [2, 5, 2, 4] : tensor<2x5x8xf32> into tensor<2x5x2x4xf32>
  %v1 = tensor.expand_shape %v0 [[0], [1], [2, 3]] output_shape [2, 5, 2, 4] : tensor<2x5x8xf32> into tensor<2x5x2x4xf32>
  %eh = tensor.empty() : tensor<2x2x5x4xf32>
  %q = linalg.transpose ins(%q1 : tensor<2x5x2x4xf32>) outs(%eh : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %ek = tensor.empty() : tensor<2x2x5x4xf32>
  %k = linalg.transpose ins(%k1 : tensor<2x5x2x4xf32>) outs(%ek : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %ev = tensor.empty() : tensor<2x2x5x4xf32>
  %v = linalg.transpose ins(%v1 : tensor<2x5x2x4xf32>) outs(%ev : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
  %att = gacc.attention %q, %k, %v {causal} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  %eo = tensor.empty() : tensor<2x5x2x4xf32>
  %o1 = linalg.transpose ins(%att : tensor<2x2x5x4xf32>) outs(%eo : tensor<2x5x2x4xf32>) permutation = [0, 2, 1, 3]
  %o = tensor.collapse_shape %o1 [[0], [1], [2, 3]] : tensor<2x5x2x4xf32> into tensor<2x5x8xf32>
  %proj = gacc.linear %o, %proj_w bias %proj_b : tensor<2x5x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<2x5x8xf32>
  %projd = gacc.dropout %proj {p = 0.2 : f64, stream = 1 : i64} : tensor<2x5x8xf32>
  %x1 = arith.addf %x0, %projd : tensor<2x5x8xf32>
  // MLP.
  %h2 = gacc.layer_norm %x1, %ln2_w, %ln2_b : tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>
  %fc = gacc.linear %h2, %fc_w bias %fc_b : tensor<2x5x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x5x16xf32>
  %act = gacc.gelu %fc {approximate = "tanh"} : tensor<2x5x16xf32>
  %mlp = gacc.linear %act, %out_w bias %out_b : tensor<2x5x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x5x8xf32>
  %mlpd = gacc.dropout %mlp {p = 0.1 : f64, stream = 2 : i64} : tensor<2x5x8xf32>
  %x2 = arith.addf %x1, %mlpd : tensor<2x5x8xf32>
  // Final norm, head tied to the token embedding.
  %hf = gacc.layer_norm %x2, %lnf_w, %lnf_b : tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>
  %logits = gacc.linear %hf, %wte : tensor<2x5x8xf32>, tensor<11x8xf32> -> tensor<2x5x11xf32>
  %loss = gacc.cross_entropy %logits, %targets : tensor<2x5x11xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
