// RUN: gacc-opt %s -split-input-file -gacc-autodiff -verify-diagnostics

// An op between a parameter and the loss without an adjoint rule: the
// message names it and what gacc-autodiff differentiates.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{'arith.remf' op lies between a parameter and the loss but is not differentiable: gacc-autodiff differentiates the gacc layer ops, the arith and math ops with an adjoint rule on tensors}}
  // expected-note @below {{the arith and math ops with an adjoint rule: arith.addf, arith.divf, arith.extf, }}
  %e = arith.remf %z, %z : tensor<4x3xf32>
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

// A loss that does not depend on any parameter (reported at the yield).
gacc.param @w : tensor<2x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %u = gacc.relu %w : tensor<2x2xf32>
  %l = gacc.cross_entropy %x, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @below {{'gacc.yield' op the loss depends on no trainable parameter (a frozen parameter is as constant as the data): there is nothing to train}}
  gacc.yield %l : tensor<f32>
}

// -----

// A linalg.generic whose body applies an op without a scalar rule on the
// path from the parameter.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @below {{cannot be differentiated: its body applies 'arith.remf', which has no scalar adjoint rule (ScalarAdjointOpInterface), on the path from operand #1}}
  // expected-note @below {{the ops with a scalar adjoint rule: arith.addf, }}
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.remf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A parameter read through an indexing map that is not a projected
// permutation: its adjoint's output could not be indexed by it.
gacc.param @w : tensor<6xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<6xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @below {{cannot be differentiated with respect to operand #1: its indexing map affine_map<(d0, d1) -> (d0 + d1)> is not a projected permutation}}
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i + j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<6xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A reduction whose combiner is neither a sum, a maximum nor a minimum.
gacc.param @w : tensor<4x3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3x2xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  // expected-error @below {{cannot be differentiated: output #0 of an op with reduction dimensions must combine its init, read nowhere else, with a term by arith.addf, maximumf or minimumf}}
  %p = linalg.reduce { arith.mulf } ins(%w : tensor<4x3x2xf32>) outs(%x : tensor<4x3xf32>) dimensions = [2]
  %l = gacc.cross_entropy %p, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A body that reads a parameter's value from above instead of through an
// operand would lose its gradient.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x3xf32>
  %m = arith.mulf %w, %x : tensor<4x3xf32>
  // expected-error @below {{reads, inside its region, a value defined outside that depends on a parameter, and no gradient reaches a value captured that way: pass it as an operand}}
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = arith.constant 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %w[%i, %j] : tensor<4x3xf32>
    %r = arith.mulf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A scalar that depends on a parameter feeds a tensor op: gradients flow
// through tensors only.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %c0 = arith.constant 0 : index
  %s = tensor.extract %w[%c0, %c0] : tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @below {{reads a scalar that depends on a parameter; gradients flow through tensors only}}
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = arith.mulf %f, %x : tensor<4x3xf32>
  %l = gacc.cross_entropy %m, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A pad whose padding value is not a constant.
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  // expected-error @below {{is differentiated only with a constant padding value}}
  %p = tensor.pad %w low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    %k = arith.index_cast %i : index to i32
    %v = arith.sitofp %k : i32 to f32
    tensor.yield %v : f32
  } : tensor<2x3xf32> to tensor<4x3xf32>
  %m = arith.mulf %p, %x : tensor<4x3xf32>
  %l = gacc.cross_entropy %m, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Every parameter frozen: nothing to train.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros {frozen}
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @below {{the loss depends on no trainable parameter}}
  gacc.yield %l : tensor<f32>
}
