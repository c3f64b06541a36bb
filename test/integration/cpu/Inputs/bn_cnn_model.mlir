// A small CNN with both BatchNorm modes: conv2d 2→4 3×3 padding 1 with
// bias, batch_norm [m, 4, 9, 9] with per_micro_batch statistics, relu,
// max_pool2d 3×3 stride 3, global average pooling, linear 4→6, batch_norm
// [m, 6] with per_window statistics (momentum 0.2), relu, linear 6→5 and
// cross-entropy. 3 micro-batches of 8 images of 2 × 9 × 9 per window of
// 22 (the last micro-batch is ragged: 6 images), fed from a tensors file.
gacc.param @conv1_weight : tensor<4x2x3x3xf32> = #gacc.kaiming_uniform<fan_in = 18>
gacc.param @conv1_bias : tensor<4xf32> = #gacc.kaiming_uniform<fan_in = 18>
gacc.param @bn1_weight : tensor<4xf32> = #gacc.constant<value = 1.0>
gacc.param @bn1_bias : tensor<4xf32> = #gacc.zeros
gacc.statistic @bn1_running_mean : tensor<4xf32> = #gacc.zeros
gacc.statistic @bn1_running_var : tensor<4xf32> = #gacc.constant<value = 1.0>
gacc.param @fc1_weight : tensor<6x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.param @fc1_bias : tensor<6xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.param @bn2_weight : tensor<6xf32> = #gacc.constant<value = 1.0>
gacc.param @bn2_bias : tensor<6xf32> = #gacc.zeros
gacc.statistic @bn2_running_mean : tensor<6xf32> = #gacc.zeros
gacc.statistic @bn2_running_var : tensor<6xf32> = #gacc.constant<value = 1.0>
gacc.param @fc_weight : tensor<5x6xf32> = #gacc.kaiming_uniform<fan_in = 6>
gacc.param @fc_bias : tensor<5xf32> = #gacc.kaiming_uniform<fan_in = 6>

gacc.train_step @bn_cnn params [@conv1_weight, @conv1_bias, @bn1_weight, @bn1_bias, @fc1_weight, @fc1_bias, @bn2_weight, @bn2_bias, @fc_weight, @fc_bias] attributes {
    accum_steps = 3 : i64, micro_batch = 8 : i64, effective_batch = 22 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%w1: tensor<4x2x3x3xf32>, %b1: tensor<4xf32>, %g1: tensor<4xf32>, %s1: tensor<4xf32>,
     %wh: tensor<6x4xf32>, %bh: tensor<6xf32>, %g2: tensor<6xf32>, %s2: tensor<6xf32>,
     %wf: tensor<5x6xf32>, %bf: tensor<5xf32>,
     %x: tensor<8x2x9x9xf32>, %y: tensor<8xi32>):
  %c1 = gacc.conv2d %x, %w1 bias %b1 {padding = array<i64: 1, 1>} : tensor<8x2x9x9xf32>, tensor<4x2x3x3xf32>, tensor<4xf32> -> tensor<8x4x9x9xf32>
  %n1 = gacc.batch_norm %c1, %g1, %s1 running(@bn1_running_mean, @bn1_running_var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<8x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>
  %a1 = gacc.relu %n1 : tensor<8x4x9x9xf32>
  %p1 = gacc.max_pool2d %a1 {kernel = array<i64: 3, 3>, stride = array<i64: 3, 3>} : tensor<8x4x9x9xf32> -> tensor<8x4x3x3xf32>
  %g = gacc.global_avg_pool2d %p1 : tensor<8x4x3x3xf32> -> tensor<8x4xf32>
  %h = gacc.linear %g, %wh bias %bh : tensor<8x4xf32>, tensor<6x4xf32>, tensor<6xf32> -> tensor<8x6xf32>
  %n2 = gacc.batch_norm %h, %g2, %s2 running(@bn2_running_mean, @bn2_running_var) {momentum = 0.2, batch_statistics = #gacc.batch_statistics<per_window>} : tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>
  %a2 = gacc.relu %n2 : tensor<8x6xf32>
  %z = gacc.linear %a2, %wf bias %bf : tensor<8x6xf32>, tensor<5x6xf32>, tensor<5xf32> -> tensor<8x5xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
