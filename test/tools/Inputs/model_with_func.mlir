// A model with a func.func of layer ops beside its train step: never
// compiled, so gacc-run refuses it.
gacc.param @w : tensor<10x784xf32> = #gacc.zeros

gacc.train_step @with_func params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}

func.func @layer(%a: tensor<4x784xf32>, %q: tensor<10x784xf32>) -> tensor<4x10xf32> {
  %r = gacc.linear %a, %q : tensor<4x784xf32>, tensor<10x784xf32> -> tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}
