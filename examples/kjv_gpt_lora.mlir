// LoRA fine-tuning of the character GPT of kjv_gpt.mlir (Hu et al. 2021):
// every weight of that model frozen, loaded from a trained run, and rank-8
// adapters (alpha = 16) on each block's q/k/v and output projections,
// y = x·Wᵀ + b + 2·(x·Aᵀ)·Bᵀ, B starting at zero. Only the adapters
// have gradients, accumulators and AdamW state (lr 1e-3, no weight decay,
// 20 warmup steps then cosine to 1e-4); clipping at 1.0; N x m = 4 x 16.
// Written by scripts/make-kjv-gpt-lora.py from kjv_gpt.mlir.
//
//   build/bin/gacc-run examples/kjv_gpt.mlir --dataset kjv-text --save-params gpt.safetensors
//   build/bin/gacc-run examples/kjv_gpt_lora.mlir --dataset kjv-text --load-params gpt.safetensors
//
gacc.param @wte : tensor<64x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @wpe : tensor<128x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h0_ln1_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h0_ln1_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h0_attn_w : tensor<384x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h0_attn_b : tensor<384xf32> = #gacc.zeros {frozen}
gacc.param @h0_proj_w : tensor<128x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h0_proj_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h0_ln2_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h0_ln2_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h0_fc_w : tensor<512x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h0_fc_b : tensor<512xf32> = #gacc.zeros {frozen}
gacc.param @h0_out_w : tensor<128x512xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h0_out_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h1_ln1_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h1_ln1_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h1_attn_w : tensor<384x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h1_attn_b : tensor<384xf32> = #gacc.zeros {frozen}
gacc.param @h1_proj_w : tensor<128x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h1_proj_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h1_ln2_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h1_ln2_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h1_fc_w : tensor<512x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h1_fc_b : tensor<512xf32> = #gacc.zeros {frozen}
gacc.param @h1_out_w : tensor<128x512xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h1_out_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h2_ln1_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h2_ln1_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h2_attn_w : tensor<384x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h2_attn_b : tensor<384xf32> = #gacc.zeros {frozen}
gacc.param @h2_proj_w : tensor<128x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h2_proj_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h2_ln2_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h2_ln2_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h2_fc_w : tensor<512x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h2_fc_b : tensor<512xf32> = #gacc.zeros {frozen}
gacc.param @h2_out_w : tensor<128x512xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h2_out_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h3_ln1_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h3_ln1_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h3_attn_w : tensor<384x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h3_attn_b : tensor<384xf32> = #gacc.zeros {frozen}
gacc.param @h3_proj_w : tensor<128x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h3_proj_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h3_ln2_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @h3_ln2_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @h3_fc_w : tensor<512x128xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h3_fc_b : tensor<512xf32> = #gacc.zeros {frozen}
gacc.param @h3_out_w : tensor<128x512xf32> = #gacc.normal<mean = 0.0, std = 0.02> {frozen}
gacc.param @h3_out_b : tensor<128xf32> = #gacc.zeros {frozen}
gacc.param @lnf_w : tensor<128xf32> = #gacc.constant<value = 1.0> {frozen}
gacc.param @lnf_b : tensor<128xf32> = #gacc.zeros {frozen}

gacc.param @h0_lora_attn_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h0_lora_attn_b : tensor<384x8xf32> = #gacc.zeros
gacc.param @h0_lora_proj_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h0_lora_proj_b : tensor<128x8xf32> = #gacc.zeros
gacc.param @h1_lora_attn_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h1_lora_attn_b : tensor<384x8xf32> = #gacc.zeros
gacc.param @h1_lora_proj_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h1_lora_proj_b : tensor<128x8xf32> = #gacc.zeros
gacc.param @h2_lora_attn_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h2_lora_attn_b : tensor<384x8xf32> = #gacc.zeros
gacc.param @h2_lora_proj_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h2_lora_proj_b : tensor<128x8xf32> = #gacc.zeros
gacc.param @h3_lora_attn_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h3_lora_attn_b : tensor<384x8xf32> = #gacc.zeros
gacc.param @h3_lora_proj_a : tensor<8x128xf32> = #gacc.kaiming_uniform<fan_in = 128>
gacc.param @h3_lora_proj_b : tensor<128x8xf32> = #gacc.zeros

gacc.train_step @kjv_gpt_lora params [@wte, @wpe, @h0_ln1_w, @h0_ln1_b, @h0_attn_w, @h0_attn_b, @h0_proj_w, @h0_proj_b, @h0_ln2_w, @h0_ln2_b, @h0_fc_w, @h0_fc_b, @h0_out_w, @h0_out_b, @h1_ln1_w, @h1_ln1_b, @h1_attn_w, @h1_attn_b, @h1_proj_w, @h1_proj_b, @h1_ln2_w, @h1_ln2_b, @h1_fc_w, @h1_fc_b, @h1_out_w, @h1_out_b, @h2_ln1_w, @h2_ln1_b, @h2_attn_w, @h2_attn_b, @h2_proj_w, @h2_proj_b, @h2_ln2_w, @h2_ln2_b, @h2_fc_w, @h2_fc_b, @h2_out_w, @h2_out_b, @h3_ln1_w, @h3_ln1_b, @h3_attn_w, @h3_attn_b, @h3_proj_w, @h3_proj_b, @h3_ln2_w, @h3_ln2_b, @h3_fc_w, @h3_fc_b, @h3_out_w, @h3_out_b, @lnf_w, @lnf_b, @h0_lora_attn_a, @h0_lora_attn_b, @h0_lora_proj_a, @h0_lora_proj_b, @h1_lora_attn_a, @h1_lora_attn_b, @h1_lora_proj_a, @h1_lora_proj_b, @h2_lora_attn_a, @h2_lora_attn_b, @h2_lora_proj_a, @h2_lora_proj_b, @h3_lora_attn_a, @h3_lora_attn_b, @h3_lora_proj_a, @h3_lora_proj_b] attributes {
    accum_steps = 4 : i64, micro_batch = 16 : i64, effective_batch = 64 : i64,
    normalization = #gacc.normalization<token_mean>,
    optimizer = #gacc.adamw<lr = 1.0e-3, beta2 = 0.95, weight_decay = 0.0>,
    lr_schedule = #gacc.lr_schedule<warmup_steps = 20, decay = "cosine", decay_steps = 457, min_lr = 1.0e-4>,
    max_grad_norm = 1.0 : f64, seed = 0 : i64} {
^bb0(%wte: tensor<64x128xf32>,
     %wpe: tensor<128x128xf32>,
     %h0_ln1_w: tensor<128xf32>,
     %h0_ln1_b: tensor<128xf32>,
     %h0_attn_w: tensor<384x128xf32>,
     %h0_attn_b: tensor<384xf32>,
     %h0_proj_w: tensor<128x128xf32>,
     %h0_proj_b: tensor<128xf32>,
     %h0_ln2_w: tensor<128xf32>,
     %h0_ln2_b: tensor<128xf32>,
     %h0_fc_w: tensor<512x128xf32>,
     %h0_fc_b: tensor<512xf32>,
     %h0_out_w: tensor<128x512xf32>,
     %h0_out_b: tensor<128xf32>,
     %h1_ln1_w: tensor<128xf32>,
     %h1_ln1_b: tensor<128xf32>,
     %h1_attn_w: tensor<384x128xf32>,
     %h1_attn_b: tensor<384xf32>,
     %h1_proj_w: tensor<128x128xf32>,
     %h1_proj_b: tensor<128xf32>,
     %h1_ln2_w: tensor<128xf32>,
     %h1_ln2_b: tensor<128xf32>,
     %h1_fc_w: tensor<512x128xf32>,
     %h1_fc_b: tensor<512xf32>,
     %h1_out_w: tensor<128x512xf32>,
     %h1_out_b: tensor<128xf32>,
     %h2_ln1_w: tensor<128xf32>,
     %h2_ln1_b: tensor<128xf32>,
     %h2_attn_w: tensor<384x128xf32>,
     %h2_attn_b: tensor<384xf32>,
     %h2_proj_w: tensor<128x128xf32>,
     %h2_proj_b: tensor<128xf32>,
     %h2_ln2_w: tensor<128xf32>,
     %h2_ln2_b: tensor<128xf32>,
     %h2_fc_w: tensor<512x128xf32>,
     %h2_fc_b: tensor<512xf32>,
     %h2_out_w: tensor<128x512xf32>,
     %h2_out_b: tensor<128xf32>,
     %h3_ln1_w: tensor<128xf32>,
     %h3_ln1_b: tensor<128xf32>,
     %h3_attn_w: tensor<384x128xf32>,
     %h3_attn_b: tensor<384xf32>,
     %h3_proj_w: tensor<128x128xf32>,
     %h3_proj_b: tensor<128xf32>,
     %h3_ln2_w: tensor<128xf32>,
     %h3_ln2_b: tensor<128xf32>,
     %h3_fc_w: tensor<512x128xf32>,
     %h3_fc_b: tensor<512xf32>,
     %h3_out_w: tensor<128x512xf32>,
     %h3_out_b: tensor<128xf32>,
     %lnf_w: tensor<128xf32>,
     %lnf_b: tensor<128xf32>,
     %h0_lora_attn_a: tensor<8x128xf32>,
     %h0_lora_attn_b: tensor<384x8xf32>,
     %h0_lora_proj_a: tensor<8x128xf32>,
     %h0_lora_proj_b: tensor<128x8xf32>,
     %h1_lora_attn_a: tensor<8x128xf32>,
     %h1_lora_attn_b: tensor<384x8xf32>,
     %h1_lora_proj_a: tensor<8x128xf32>,
     %h1_lora_proj_b: tensor<128x8xf32>,
     %h2_lora_attn_a: tensor<8x128xf32>,
     %h2_lora_attn_b: tensor<384x8xf32>,
     %h2_lora_proj_a: tensor<8x128xf32>,
     %h2_lora_proj_b: tensor<128x8xf32>,
     %h3_lora_attn_a: tensor<8x128xf32>,
     %h3_lora_attn_b: tensor<384x8xf32>,
     %h3_lora_proj_a: tensor<8x128xf32>,
     %h3_lora_proj_b: tensor<128x8xf32>,
     %tokens: tensor<16x128xi32>,
     %targets: tensor<16x128xi32>):
  %tok = gacc.embedding %tokens, %wte : tensor<16x128xi32>, tensor<64x128xf32> -> tensor<16x128x128xf32>
  %pe = tensor.empty() : tensor<16x128x128xf32>
  %pos = linalg.broadcast ins(%wpe : tensor<128x128xf32>) outs(%pe : tensor<16x128x128xf32>) dimensions = [0]
  %x0 = arith.addf %tok, %pos : tensor<16x128x128xf32>
  // Block 0: attention.
  %h0_a = gacc.layer_norm %x0, %h0_ln1_w, %h0_ln1_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h0_qkv_base = gacc.linear %h0_a, %h0_attn_w bias %h0_attn_b : tensor<16x128x128xf32>, tensor<384x128xf32>, tensor<384xf32> -> tensor<16x128x384xf32>
  %h0_qkv_la = gacc.linear %h0_a, %h0_lora_attn_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h0_qkv_lb = gacc.linear %h0_qkv_la, %h0_lora_attn_b : tensor<16x128x8xf32>, tensor<384x8xf32> -> tensor<16x128x384xf32>
  %h0_qkv_le = tensor.empty() : tensor<16x128x384xf32>
  %h0_qkv_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h0_qkv_lb : tensor<16x128x384xf32>) outs(%h0_qkv_le : tensor<16x128x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x384xf32>
  %h0_qkv = arith.addf %h0_qkv_base, %h0_qkv_ls : tensor<16x128x384xf32>
  %h0_q0 = tensor.extract_slice %h0_qkv[0, 0, 0] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h0_q1 = tensor.expand_shape %h0_q0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h0_qe = tensor.empty() : tensor<16x4x128x32xf32>
  %h0_q = linalg.transpose ins(%h0_q1 : tensor<16x128x4x32xf32>) outs(%h0_qe : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h0_k0 = tensor.extract_slice %h0_qkv[0, 0, 128] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h0_k1 = tensor.expand_shape %h0_k0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h0_ke = tensor.empty() : tensor<16x4x128x32xf32>
  %h0_k = linalg.transpose ins(%h0_k1 : tensor<16x128x4x32xf32>) outs(%h0_ke : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h0_v0 = tensor.extract_slice %h0_qkv[0, 0, 256] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h0_v1 = tensor.expand_shape %h0_v0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h0_ve = tensor.empty() : tensor<16x4x128x32xf32>
  %h0_v = linalg.transpose ins(%h0_v1 : tensor<16x128x4x32xf32>) outs(%h0_ve : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h0_att = gacc.attention %h0_q, %h0_k, %h0_v {causal} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
  %h0_oe = tensor.empty() : tensor<16x128x4x32xf32>
  %h0_o1 = linalg.transpose ins(%h0_att : tensor<16x4x128x32xf32>) outs(%h0_oe : tensor<16x128x4x32xf32>) permutation = [0, 2, 1, 3]
  %h0_o = tensor.collapse_shape %h0_o1 [[0], [1], [2, 3]] : tensor<16x128x4x32xf32> into tensor<16x128x128xf32>
  %h0_proj_base = gacc.linear %h0_o, %h0_proj_w bias %h0_proj_b : tensor<16x128x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %h0_proj_la = gacc.linear %h0_o, %h0_lora_proj_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h0_proj_lb = gacc.linear %h0_proj_la, %h0_lora_proj_b : tensor<16x128x8xf32>, tensor<128x8xf32> -> tensor<16x128x128xf32>
  %h0_proj_le = tensor.empty() : tensor<16x128x128xf32>
  %h0_proj_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h0_proj_lb : tensor<16x128x128xf32>) outs(%h0_proj_le : tensor<16x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x128xf32>
  %h0_proj = arith.addf %h0_proj_base, %h0_proj_ls : tensor<16x128x128xf32>
  %h0_r = arith.addf %x0, %h0_proj : tensor<16x128x128xf32>
  // Block 0: MLP.
  %h0_m = gacc.layer_norm %h0_r, %h0_ln2_w, %h0_ln2_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h0_fc = gacc.linear %h0_m, %h0_fc_w bias %h0_fc_b : tensor<16x128x128xf32>, tensor<512x128xf32>, tensor<512xf32> -> tensor<16x128x512xf32>
  %h0_g = gacc.gelu %h0_fc {approximate = "tanh"} : tensor<16x128x512xf32>
  %h0_mlp = gacc.linear %h0_g, %h0_out_w bias %h0_out_b : tensor<16x128x512xf32>, tensor<128x512xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %x1 = arith.addf %h0_r, %h0_mlp : tensor<16x128x128xf32>
  // Block 1: attention.
  %h1_a = gacc.layer_norm %x1, %h1_ln1_w, %h1_ln1_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h1_qkv_base = gacc.linear %h1_a, %h1_attn_w bias %h1_attn_b : tensor<16x128x128xf32>, tensor<384x128xf32>, tensor<384xf32> -> tensor<16x128x384xf32>
  %h1_qkv_la = gacc.linear %h1_a, %h1_lora_attn_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h1_qkv_lb = gacc.linear %h1_qkv_la, %h1_lora_attn_b : tensor<16x128x8xf32>, tensor<384x8xf32> -> tensor<16x128x384xf32>
  %h1_qkv_le = tensor.empty() : tensor<16x128x384xf32>
  %h1_qkv_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h1_qkv_lb : tensor<16x128x384xf32>) outs(%h1_qkv_le : tensor<16x128x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x384xf32>
  %h1_qkv = arith.addf %h1_qkv_base, %h1_qkv_ls : tensor<16x128x384xf32>
  %h1_q0 = tensor.extract_slice %h1_qkv[0, 0, 0] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h1_q1 = tensor.expand_shape %h1_q0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h1_qe = tensor.empty() : tensor<16x4x128x32xf32>
  %h1_q = linalg.transpose ins(%h1_q1 : tensor<16x128x4x32xf32>) outs(%h1_qe : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h1_k0 = tensor.extract_slice %h1_qkv[0, 0, 128] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h1_k1 = tensor.expand_shape %h1_k0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h1_ke = tensor.empty() : tensor<16x4x128x32xf32>
  %h1_k = linalg.transpose ins(%h1_k1 : tensor<16x128x4x32xf32>) outs(%h1_ke : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h1_v0 = tensor.extract_slice %h1_qkv[0, 0, 256] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h1_v1 = tensor.expand_shape %h1_v0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h1_ve = tensor.empty() : tensor<16x4x128x32xf32>
  %h1_v = linalg.transpose ins(%h1_v1 : tensor<16x128x4x32xf32>) outs(%h1_ve : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h1_att = gacc.attention %h1_q, %h1_k, %h1_v {causal} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
  %h1_oe = tensor.empty() : tensor<16x128x4x32xf32>
  %h1_o1 = linalg.transpose ins(%h1_att : tensor<16x4x128x32xf32>) outs(%h1_oe : tensor<16x128x4x32xf32>) permutation = [0, 2, 1, 3]
  %h1_o = tensor.collapse_shape %h1_o1 [[0], [1], [2, 3]] : tensor<16x128x4x32xf32> into tensor<16x128x128xf32>
  %h1_proj_base = gacc.linear %h1_o, %h1_proj_w bias %h1_proj_b : tensor<16x128x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %h1_proj_la = gacc.linear %h1_o, %h1_lora_proj_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h1_proj_lb = gacc.linear %h1_proj_la, %h1_lora_proj_b : tensor<16x128x8xf32>, tensor<128x8xf32> -> tensor<16x128x128xf32>
  %h1_proj_le = tensor.empty() : tensor<16x128x128xf32>
  %h1_proj_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h1_proj_lb : tensor<16x128x128xf32>) outs(%h1_proj_le : tensor<16x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x128xf32>
  %h1_proj = arith.addf %h1_proj_base, %h1_proj_ls : tensor<16x128x128xf32>
  %h1_r = arith.addf %x1, %h1_proj : tensor<16x128x128xf32>
  // Block 1: MLP.
  %h1_m = gacc.layer_norm %h1_r, %h1_ln2_w, %h1_ln2_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h1_fc = gacc.linear %h1_m, %h1_fc_w bias %h1_fc_b : tensor<16x128x128xf32>, tensor<512x128xf32>, tensor<512xf32> -> tensor<16x128x512xf32>
  %h1_g = gacc.gelu %h1_fc {approximate = "tanh"} : tensor<16x128x512xf32>
  %h1_mlp = gacc.linear %h1_g, %h1_out_w bias %h1_out_b : tensor<16x128x512xf32>, tensor<128x512xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %x2 = arith.addf %h1_r, %h1_mlp : tensor<16x128x128xf32>
  // Block 2: attention.
  %h2_a = gacc.layer_norm %x2, %h2_ln1_w, %h2_ln1_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h2_qkv_base = gacc.linear %h2_a, %h2_attn_w bias %h2_attn_b : tensor<16x128x128xf32>, tensor<384x128xf32>, tensor<384xf32> -> tensor<16x128x384xf32>
  %h2_qkv_la = gacc.linear %h2_a, %h2_lora_attn_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h2_qkv_lb = gacc.linear %h2_qkv_la, %h2_lora_attn_b : tensor<16x128x8xf32>, tensor<384x8xf32> -> tensor<16x128x384xf32>
  %h2_qkv_le = tensor.empty() : tensor<16x128x384xf32>
  %h2_qkv_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h2_qkv_lb : tensor<16x128x384xf32>) outs(%h2_qkv_le : tensor<16x128x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x384xf32>
  %h2_qkv = arith.addf %h2_qkv_base, %h2_qkv_ls : tensor<16x128x384xf32>
  %h2_q0 = tensor.extract_slice %h2_qkv[0, 0, 0] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h2_q1 = tensor.expand_shape %h2_q0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h2_qe = tensor.empty() : tensor<16x4x128x32xf32>
  %h2_q = linalg.transpose ins(%h2_q1 : tensor<16x128x4x32xf32>) outs(%h2_qe : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h2_k0 = tensor.extract_slice %h2_qkv[0, 0, 128] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h2_k1 = tensor.expand_shape %h2_k0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h2_ke = tensor.empty() : tensor<16x4x128x32xf32>
  %h2_k = linalg.transpose ins(%h2_k1 : tensor<16x128x4x32xf32>) outs(%h2_ke : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h2_v0 = tensor.extract_slice %h2_qkv[0, 0, 256] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h2_v1 = tensor.expand_shape %h2_v0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h2_ve = tensor.empty() : tensor<16x4x128x32xf32>
  %h2_v = linalg.transpose ins(%h2_v1 : tensor<16x128x4x32xf32>) outs(%h2_ve : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h2_att = gacc.attention %h2_q, %h2_k, %h2_v {causal} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
  %h2_oe = tensor.empty() : tensor<16x128x4x32xf32>
  %h2_o1 = linalg.transpose ins(%h2_att : tensor<16x4x128x32xf32>) outs(%h2_oe : tensor<16x128x4x32xf32>) permutation = [0, 2, 1, 3]
  %h2_o = tensor.collapse_shape %h2_o1 [[0], [1], [2, 3]] : tensor<16x128x4x32xf32> into tensor<16x128x128xf32>
  %h2_proj_base = gacc.linear %h2_o, %h2_proj_w bias %h2_proj_b : tensor<16x128x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %h2_proj_la = gacc.linear %h2_o, %h2_lora_proj_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h2_proj_lb = gacc.linear %h2_proj_la, %h2_lora_proj_b : tensor<16x128x8xf32>, tensor<128x8xf32> -> tensor<16x128x128xf32>
  %h2_proj_le = tensor.empty() : tensor<16x128x128xf32>
  %h2_proj_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h2_proj_lb : tensor<16x128x128xf32>) outs(%h2_proj_le : tensor<16x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x128xf32>
  %h2_proj = arith.addf %h2_proj_base, %h2_proj_ls : tensor<16x128x128xf32>
  %h2_r = arith.addf %x2, %h2_proj : tensor<16x128x128xf32>
  // Block 2: MLP.
  %h2_m = gacc.layer_norm %h2_r, %h2_ln2_w, %h2_ln2_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h2_fc = gacc.linear %h2_m, %h2_fc_w bias %h2_fc_b : tensor<16x128x128xf32>, tensor<512x128xf32>, tensor<512xf32> -> tensor<16x128x512xf32>
  %h2_g = gacc.gelu %h2_fc {approximate = "tanh"} : tensor<16x128x512xf32>
  %h2_mlp = gacc.linear %h2_g, %h2_out_w bias %h2_out_b : tensor<16x128x512xf32>, tensor<128x512xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %x3 = arith.addf %h2_r, %h2_mlp : tensor<16x128x128xf32>
  // Block 3: attention.
  %h3_a = gacc.layer_norm %x3, %h3_ln1_w, %h3_ln1_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h3_qkv_base = gacc.linear %h3_a, %h3_attn_w bias %h3_attn_b : tensor<16x128x128xf32>, tensor<384x128xf32>, tensor<384xf32> -> tensor<16x128x384xf32>
  %h3_qkv_la = gacc.linear %h3_a, %h3_lora_attn_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h3_qkv_lb = gacc.linear %h3_qkv_la, %h3_lora_attn_b : tensor<16x128x8xf32>, tensor<384x8xf32> -> tensor<16x128x384xf32>
  %h3_qkv_le = tensor.empty() : tensor<16x128x384xf32>
  %h3_qkv_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h3_qkv_lb : tensor<16x128x384xf32>) outs(%h3_qkv_le : tensor<16x128x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x384xf32>
  %h3_qkv = arith.addf %h3_qkv_base, %h3_qkv_ls : tensor<16x128x384xf32>
  %h3_q0 = tensor.extract_slice %h3_qkv[0, 0, 0] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h3_q1 = tensor.expand_shape %h3_q0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h3_qe = tensor.empty() : tensor<16x4x128x32xf32>
  %h3_q = linalg.transpose ins(%h3_q1 : tensor<16x128x4x32xf32>) outs(%h3_qe : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h3_k0 = tensor.extract_slice %h3_qkv[0, 0, 128] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h3_k1 = tensor.expand_shape %h3_k0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h3_ke = tensor.empty() : tensor<16x4x128x32xf32>
  %h3_k = linalg.transpose ins(%h3_k1 : tensor<16x128x4x32xf32>) outs(%h3_ke : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h3_v0 = tensor.extract_slice %h3_qkv[0, 0, 256] [16, 128, 128] [1, 1, 1] : tensor<16x128x384xf32> to tensor<16x128x128xf32>
  %h3_v1 = tensor.expand_shape %h3_v0 [[0], [1], [2, 3]] output_shape [16, 128, 4, 32] : tensor<16x128x128xf32> into tensor<16x128x4x32xf32>
  %h3_ve = tensor.empty() : tensor<16x4x128x32xf32>
  %h3_v = linalg.transpose ins(%h3_v1 : tensor<16x128x4x32xf32>) outs(%h3_ve : tensor<16x4x128x32xf32>) permutation = [0, 2, 1, 3]
  %h3_att = gacc.attention %h3_q, %h3_k, %h3_v {causal} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
  %h3_oe = tensor.empty() : tensor<16x128x4x32xf32>
  %h3_o1 = linalg.transpose ins(%h3_att : tensor<16x4x128x32xf32>) outs(%h3_oe : tensor<16x128x4x32xf32>) permutation = [0, 2, 1, 3]
  %h3_o = tensor.collapse_shape %h3_o1 [[0], [1], [2, 3]] : tensor<16x128x4x32xf32> into tensor<16x128x128xf32>
  %h3_proj_base = gacc.linear %h3_o, %h3_proj_w bias %h3_proj_b : tensor<16x128x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %h3_proj_la = gacc.linear %h3_o, %h3_lora_proj_a : tensor<16x128x128xf32>, tensor<8x128xf32> -> tensor<16x128x8xf32>
  %h3_proj_lb = gacc.linear %h3_proj_la, %h3_lora_proj_b : tensor<16x128x8xf32>, tensor<128x8xf32> -> tensor<16x128x128xf32>
  %h3_proj_le = tensor.empty() : tensor<16x128x128xf32>
  %h3_proj_ls = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h3_proj_lb : tensor<16x128x128xf32>) outs(%h3_proj_le : tensor<16x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %scale = arith.constant 2.0 : f32
    %scaled = arith.mulf %in, %scale : f32
    linalg.yield %scaled : f32
  } -> tensor<16x128x128xf32>
  %h3_proj = arith.addf %h3_proj_base, %h3_proj_ls : tensor<16x128x128xf32>
  %h3_r = arith.addf %x3, %h3_proj : tensor<16x128x128xf32>
  // Block 3: MLP.
  %h3_m = gacc.layer_norm %h3_r, %h3_ln2_w, %h3_ln2_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %h3_fc = gacc.linear %h3_m, %h3_fc_w bias %h3_fc_b : tensor<16x128x128xf32>, tensor<512x128xf32>, tensor<512xf32> -> tensor<16x128x512xf32>
  %h3_g = gacc.gelu %h3_fc {approximate = "tanh"} : tensor<16x128x512xf32>
  %h3_mlp = gacc.linear %h3_g, %h3_out_w bias %h3_out_b : tensor<16x128x512xf32>, tensor<128x512xf32>, tensor<128xf32> -> tensor<16x128x128xf32>
  %x4 = arith.addf %h3_r, %h3_mlp : tensor<16x128x128xf32>
  %hf = gacc.layer_norm %x4, %lnf_w, %lnf_b : tensor<16x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %logits = gacc.linear %hf, %wte : tensor<16x128x128xf32>, tensor<64x128xf32> -> tensor<16x128x64xf32>
  %loss = gacc.cross_entropy %logits, %targets : tensor<16x128x64xf32>, tensor<16x128xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
