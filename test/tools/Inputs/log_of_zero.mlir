// A Fashion-MNIST classifier whose loss is not finite before any update:
// its logits add log(z - z) = log(0) = -inf, so every softmax row is NaN.
gacc.param @w : tensor<10x784xf32> = #gacc.kaiming_uniform<fan_in = 784>

gacc.train_step @log_of_zero params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<4x784xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x784xf32>, tensor<10x784xf32> -> tensor<4x10xf32>
  %zero = arith.subf %z, %z : tensor<4x10xf32>
  %log = math.log %zero : tensor<4x10xf32>
  %s = arith.addf %z, %log : tensor<4x10xf32>
  %loss = gacc.cross_entropy %s, %y : tensor<4x10xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
