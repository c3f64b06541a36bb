// RUN: gacc-opt %s -split-input-file -gacc-autodiff -verify-diagnostics

// An op between a parameter and the loss without an adjoint rule.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{lies between a parameter and the loss but is not differentiable}}
  %e = math.exp %z : tensor<4x3xf32>
  %l = gacc.cross_entropy %e, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A step whose body already yields gradients.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{is already differentiated}}
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}

// -----

// A loss that does not depend on any parameter.
gacc.param @w : tensor<2x2xf32> = #gacc.zeros
// expected-error @below {{loss does not depend on any parameter}}
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %u = gacc.relu %w : tensor<2x2xf32>
  %l = gacc.cross_entropy %x, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A declared batch_norm verifies, but has no adjoint yet.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.train_step @s params [@w, @g] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{'gacc.batch_norm' op lies between a parameter and the loss but is not differentiable}}
  %n = gacc.batch_norm %z, %g, %g {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %n, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
