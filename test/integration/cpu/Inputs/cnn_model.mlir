// A small CNN exercising every vision op and its adjoint: a grouped,
// strided, padded conv2d with bias, group_norm, relu, a dilated conv2d
// without bias, max_pool2d (3×3, stride 2, padding 1), avg_pool2d (2×2,
// stride 1, padding 1, count_include_pad), global average pooling, a
// linear classifier and cross-entropy. 2 micro-batches of 3 images of
// 2 × 9 × 9 (odd sizes: torch's rounding down), fed from a tensors file.
gacc.param @conv1_weight : tensor<4x1x3x3xf32> = #gacc.kaiming_uniform<fan_in = 9>
gacc.param @conv1_bias : tensor<4xf32> = #gacc.kaiming_uniform<fan_in = 9>
gacc.param @gn_weight : tensor<4xf32> = #gacc.constant<value = 1.0>
gacc.param @gn_bias : tensor<4xf32> = #gacc.zeros
gacc.param @conv2_weight : tensor<6x4x3x3xf32> = #gacc.kaiming_uniform<fan_in = 36>
gacc.param @fc_weight : tensor<5x6xf32> = #gacc.kaiming_uniform<fan_in = 6>
gacc.param @fc_bias : tensor<5xf32> = #gacc.kaiming_uniform<fan_in = 6>

gacc.train_step @cnn params [@conv1_weight, @conv1_bias, @gn_weight, @gn_bias, @conv2_weight, @fc_weight, @fc_bias] attributes {
    accum_steps = 2 : i64, micro_batch = 3 : i64, effective_batch = 6 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%w1: tensor<4x1x3x3xf32>, %b1: tensor<4xf32>, %gw: tensor<4xf32>, %gb: tensor<4xf32>,
     %w2: tensor<6x4x3x3xf32>, %wf: tensor<5x6xf32>, %bf: tensor<5xf32>,
     %x: tensor<3x2x9x9xf32>, %y: tensor<3xi32>):
  %c1 = gacc.conv2d %x, %w1 bias %b1 {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, groups = 2 : i64} : tensor<3x2x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<3x4x5x5xf32>
  %n1 = gacc.group_norm %c1, %gw, %gb {num_groups = 2 : i64} : tensor<3x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>
  %a1 = gacc.relu %n1 : tensor<3x4x5x5xf32>
  %c2 = gacc.conv2d %a1, %w2 {padding = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : tensor<3x4x5x5xf32>, tensor<6x4x3x3xf32> -> tensor<3x6x5x5xf32>
  %p1 = gacc.max_pool2d %c2 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<3x6x5x5xf32> -> tensor<3x6x3x3xf32>
  %p2 = gacc.avg_pool2d %p1 {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>} : tensor<3x6x3x3xf32> -> tensor<3x6x4x4xf32>
  %g = gacc.global_avg_pool2d %p2 : tensor<3x6x4x4xf32> -> tensor<3x6xf32>
  %z = gacc.linear %g, %wf bias %bf : tensor<3x6xf32>, tensor<5x6xf32>, tensor<5xf32> -> tensor<3x5xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<3x5xf32>, tensor<3xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
