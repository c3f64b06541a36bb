// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation -verify-diagnostics

// A step that has not been differentiated.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{has no gradients: run gacc-autodiff before gacc-expand-accumulation}}
gacc.train_step @s params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The loss must come from a loss op (it defines what predict returns):
// reported at the yield, naming what produced it.
gacc.param @w : tensor<2x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x2xf32>, %x: tensor<4xf32>):
  %u = gacc.relu %w : tensor<2x2xf32>
  %v = gacc.relu %x : tensor<4xf32>
  %l = arith.constant dense<0.0> : tensor<f32>
  // expected-error @below {{'gacc.yield' op the yielded loss must be produced by a loss op (an op implementing LossOpInterface, such as gacc.cross_entropy), which defines the step's prediction, targets and padding; it is the result of 'arith.constant'}}
  gacc.yield %l, %u : tensor<f32>, tensor<2x2xf32>
}
