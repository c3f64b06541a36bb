// The Fashion-MNIST MLP with the usual large-batch recipe: bf16 compute, AdamW, linear
// warmup then cosine decay, global-norm clipping at 1.0, no weight decay
// on biases; micro-batch 32 × 8 accumulation steps (effective batch 256).
// 5 epochs = 1175 optimizer steps.
//
//   build/bin/gacc-run examples/fashion_mlp_adamw.mlir --epochs 5
//
// The body computes in bf16 (parameters, inputs and intermediates rounded
// to bf16; products accumulate in fp32); accumulators and parameters are
// fp32.

gacc.param @fc1_weight : tensor<256x784xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @fc1_bias : tensor<256xf32> = #gacc.kaiming_uniform<fan_in = 784> {no_weight_decay}
gacc.param @fc2_weight : tensor<10x256xf32> = #gacc.kaiming_uniform<fan_in = 256>
gacc.param @fc2_bias : tensor<10xf32> = #gacc.kaiming_uniform<fan_in = 256> {no_weight_decay}

gacc.train_step @fashion_mlp_adamw params [@fc1_weight, @fc1_bias, @fc2_weight, @fc2_bias] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.adamw<lr = 2.0e-3, weight_decay = 0.05>,
    precision = #gacc.precision<bf16>,
    lr_schedule = #gacc.lr_schedule<warmup_steps = 100, decay = "cosine", decay_steps = 1075, min_lr = 1.0e-5>,
    max_grad_norm = 1.0 : f64,
    seed = 0 : i64} {
^bb0(%w1: tensor<256x784xf32>, %b1: tensor<256xf32>,
     %w2: tensor<10x256xf32>, %b2: tensor<10xf32>,
     %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %h = gacc.linear %x, %w1 bias %b1 : tensor<32x784xf32>, tensor<256x784xf32>, tensor<256xf32> -> tensor<32x256xf32>
  %a = gacc.relu %h : tensor<32x256xf32>
  %z = gacc.linear %a, %w2 bias %b2 : tensor<32x256xf32>, tensor<10x256xf32>, tensor<10xf32> -> tensor<32x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
