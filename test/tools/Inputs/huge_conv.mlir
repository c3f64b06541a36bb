// A convolution whose result (8 x 4 x 80026 x 80026 fp32, 763 GiB) is
// larger than the test machines' memory: gacc-run refuses it before
// compiling (tools/allocation-failures.test).
gacc.param @w : tensor<4x1x3x3xf32> = #gacc.kaiming_uniform<fan_in = 9>
gacc.param @fw : tensor<10x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.train_step @cnn params [@w, @fw] attributes {
    accum_steps = 2 : i64, micro_batch = 8 : i64, effective_batch = 16 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.05>, seed = 0 : i64} {
^bb0(%w: tensor<4x1x3x3xf32>, %fw: tensor<10x4xf32>, %x: tensor<8x784xf32>, %y: tensor<8xi32>):
  %img = tensor.expand_shape %x [[0], [1, 2, 3]] output_shape [8, 1, 28, 28] : tensor<8x784xf32> into tensor<8x1x28x28xf32>
  %c = gacc.conv2d %img, %w {padding = array<i64: 40000, 40000>} : tensor<8x1x28x28xf32>, tensor<4x1x3x3xf32> -> tensor<8x4x80026x80026xf32>
  %p = gacc.global_avg_pool2d %c : tensor<8x4x80026x80026xf32> -> tensor<8x4xf32>
  %z = gacc.linear %p, %fw : tensor<8x4xf32>, tensor<10x4xf32> -> tensor<8x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
