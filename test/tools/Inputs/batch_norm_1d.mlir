// A batch norm over [m, C] (BatchNorm1d): it refuses a micro-batch of one
// sample (one value per channel), so --memory-budget's search starts at 2.
// E = 10, declared as 5 × 2.
gacc.param @w1 : tensor<64x16xf32> = #gacc.kaiming_uniform<fan_in = 16>
gacc.param @g : tensor<64xf32> = #gacc.constant<value = 1.0>
gacc.param @b : tensor<64xf32> = #gacc.zeros
gacc.statistic @rm : tensor<64xf32> = #gacc.zeros
gacc.statistic @rv : tensor<64xf32> = #gacc.constant<value = 1.0>
gacc.param @w2 : tensor<3x64xf32> = #gacc.kaiming_uniform<fan_in = 64>
gacc.train_step @bn1d params [@w1, @g, @b, @w2] attributes {
    accum_steps = 2 : i64, micro_batch = 5 : i64, effective_batch = 10 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w1: tensor<64x16xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %w2: tensor<3x64xf32>, %x: tensor<5x16xf32>, %y: tensor<5xi32>):
  %h = gacc.linear %x, %w1 : tensor<5x16xf32>, tensor<64x16xf32> -> tensor<5x64xf32>
  %n = gacc.batch_norm %h, %g, %b running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<5x64xf32>, tensor<64xf32>, tensor<64xf32>
  %z = gacc.linear %n, %w2 : tensor<5x64xf32>, tensor<3x64xf32> -> tensor<5x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
