// A residual MLP for Fashion-MNIST: a 784-256 layer, then a residual block
// h + relu(h·Wᵀ + b) written with arith.addf (upstream IR between the layer
// ops, differentiated by gacc-autodiff), then the 256-10 head. Micro-batch
// 32 × 8 accumulation steps (effective batch 256), SGD with lr 0.05 and
// momentum 0.9, torch.nn.Linear's initialization.
//
//   build/bin/gacc-run examples/fashion_residual_mlp.mlir --epochs 3

gacc.param @fc1_weight : tensor<256x784xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @fc1_bias : tensor<256xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @res_weight : tensor<256x256xf32> = #gacc.kaiming_uniform<fan_in = 256>
gacc.param @res_bias : tensor<256xf32> = #gacc.kaiming_uniform<fan_in = 256>
gacc.param @fc2_weight : tensor<10x256xf32> = #gacc.kaiming_uniform<fan_in = 256>
gacc.param @fc2_bias : tensor<10xf32> = #gacc.kaiming_uniform<fan_in = 256>

gacc.train_step @fashion_residual_mlp params [@fc1_weight, @fc1_bias, @res_weight, @res_bias, @fc2_weight, @fc2_bias] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05, momentum = 0.9>,
    seed = 0 : i64} {
^bb0(%w1: tensor<256x784xf32>, %b1: tensor<256xf32>,
     %wr: tensor<256x256xf32>, %br: tensor<256xf32>,
     %w2: tensor<10x256xf32>, %b2: tensor<10xf32>,
     %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %h0 = gacc.linear %x, %w1 bias %b1 : tensor<32x784xf32>, tensor<256x784xf32>, tensor<256xf32> -> tensor<32x256xf32>
  %h = gacc.relu %h0 : tensor<32x256xf32>
  // The residual block: h + relu(h·Wᵀ + b).
  %r0 = gacc.linear %h, %wr bias %br : tensor<32x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<32x256xf32>
  %r = gacc.relu %r0 : tensor<32x256xf32>
  %s = arith.addf %h, %r : tensor<32x256xf32>
  %z = gacc.linear %s, %w2 bias %b2 : tensor<32x256xf32>, tensor<10x256xf32>, tensor<10xf32> -> tensor<32x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
