// batch_norm's running statistics over one window: 4 micro-batches of 2
// samples with one feature, whose micro-batch means are 1, 2, 3, 4
// (samples k ∓ 0.5), through batch_norm [2, 1] (momentum 0.1, from running
// mean 0 and variance 1), a linear classifier and cross-entropy.
gacc.param @bn_weight : tensor<1xf32> = #gacc.constant<value = 1.0>
gacc.param @bn_bias : tensor<1xf32> = #gacc.zeros
gacc.statistic @bn_running_mean : tensor<1xf32> = #gacc.zeros
gacc.statistic @bn_running_var : tensor<1xf32> = #gacc.constant<value = 1.0>
gacc.param @fc_weight : tensor<2x1xf32> = #gacc.constant<value = 0.5>
gacc.param @fc_bias : tensor<2xf32> = #gacc.zeros

gacc.train_step @bn_window params [@bn_weight, @bn_bias, @fc_weight, @fc_bias] attributes {
    accum_steps = 4 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<1xf32>, %b: tensor<1xf32>, %w: tensor<2x1xf32>, %c: tensor<2xf32>,
     %x: tensor<2x1xf32>, %y: tensor<2xi32>):
  %n = gacc.batch_norm %x, %g, %b running(@bn_running_mean, @bn_running_var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<2x1xf32>, tensor<1xf32>, tensor<1xf32>
  %z = gacc.linear %n, %w bias %c : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2xf32> -> tensor<2x2xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<2x2xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
