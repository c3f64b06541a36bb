// RUN: gacc-opt %s -split-input-file -gacc-build-arena-kernels -verify-diagnostics

// A step whose arena kernels already exist (the pass ran twice, or a
// function took the name) is an error, not a silent second definition.
func.func @s_update_arena() {
  return
}

gacc.param @w : tensor<6x4xf32> = #gacc.zeros
// expected-error @below {{'gacc.train_step' op already has arena kernels (@s_update_arena exists)}}
gacc.train_step @s params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<6x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x4xf32>, tensor<6x4xf32> -> tensor<4x6xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Any one of the kernels' names taken is enough.
func.func @t_sum_squares_arena() {
  return
}

gacc.param @w : tensor<6x4xf32> = #gacc.zeros
// expected-error @below {{'gacc.train_step' op already has arena kernels (@t_sum_squares_arena exists)}}
gacc.train_step @t params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<6x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x4xf32>, tensor<6x4xf32> -> tensor<4x6xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
