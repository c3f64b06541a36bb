// A model with a parameter left out of its step's `params` and a running
// statistic no op keeps: gacc-run warns about each and trains the rest.
gacc.param @w : tensor<10x784xf32> = #gacc.zeros
gacc.param @forgotten : tensor<10xf32> = #gacc.zeros
gacc.statistic @orphan : tensor<10xf32> = #gacc.zeros

gacc.train_step @unused_declarations params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
