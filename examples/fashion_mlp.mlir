// A 784-256-10 MLP for Fashion-MNIST trained with gradient accumulation:
// micro-batch 32, 8 accumulation steps (effective batch 256), SGD with
// lr 0.05 and momentum 0.9, torch.nn.Linear's initialization.
//
//   build/bin/gacc-run examples/fashion_mlp.mlir --epochs 3

gacc.param @fc1_weight : tensor<256x784xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @fc1_bias : tensor<256xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @fc2_weight : tensor<10x256xf32> = #gacc.kaiming_uniform<fan_in = 256>
gacc.param @fc2_bias : tensor<10xf32> = #gacc.kaiming_uniform<fan_in = 256>

gacc.train_step @fashion_mlp params [@fc1_weight, @fc1_bias, @fc2_weight, @fc2_bias] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05, momentum = 0.9>,
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
