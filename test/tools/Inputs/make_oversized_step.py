"""Prints a training step whose tensors each fit this machine's memory
(0.9 of it) but whose step arena, holding two of them at once, does not:
a convolution of 8 x 1 x 28 x 28 images padded until its 8 x 4 x S x S
output is that large, then ReLU (which keeps it for the backward),
global average pooling, a linear layer and cross-entropy
(tools/allocation-failures.test). The memory is the one gacc-run uses
(gacc_memory.py).
Usage: gacc-run huge.mlir 2>&1 | make_oversized_step.py"""
import math

import gacc_memory

memory = gacc_memory.from_stdin()
pad = (int(math.sqrt(0.9 * memory / (8 * 4 * 4))) - 26) // 2
side = 26 + 2 * pad
image = f'tensor<8x4x{side}x{side}xf32>'
print(f'''gacc.param @w : tensor<4x1x3x3xf32> = #gacc.kaiming_uniform<fan_in = 9>
gacc.param @fw : tensor<10x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.train_step @cnn params [@w, @fw] attributes {{
    accum_steps = 2 : i64, micro_batch = 8 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.05>}} {{
^bb0(%w: tensor<4x1x3x3xf32>, %fw: tensor<10x4xf32>, %x: tensor<8x784xf32>, %y: tensor<8xi32>):
  %img = tensor.expand_shape %x [[0], [1, 2, 3]] output_shape [8, 1, 28, 28] : tensor<8x784xf32> into tensor<8x1x28x28xf32>
  %c = gacc.conv2d %img, %w {{padding = array<i64: {pad}, {pad}>}} : tensor<8x1x28x28xf32>, tensor<4x1x3x3xf32> -> {image}
  %r = gacc.relu %c : {image}
  %p = gacc.global_avg_pool2d %r : {image} -> tensor<8x4xf32>
  %z = gacc.linear %p, %fw : tensor<8x4xf32>, tensor<10x4xf32> -> tensor<8x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}}''')
