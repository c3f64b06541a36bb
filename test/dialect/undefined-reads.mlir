// RUN: gacc-opt %s -split-input-file -verify-diagnostics
// The forward reads no tensor.empty (TrainStepOp's verifier,
// verifyNoUndefinedReads): its contents are undefined. An init the op
// writes without reading, an insert's destination, and casts, reshapes and
// slices of it followed to their uses, pass.

// Added to the samples: the step would train on whatever the buffer held.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  // expected-note @below {{the tensor.empty}}
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-error @below {{'arith.addf' op reads operand #1, the undefined contents of a tensor.empty (which gives only a shape): fill it first (linalg.fill), or give it as an init the op writes without reading}}
  %a = arith.addf %x, %e : tensor<8x4xf32>
  %z = gacc.linear %a, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A matmul accumulates into its init: an empty one without a fill.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  // expected-note @below {{the tensor.empty}}
  %e = tensor.empty() : tensor<8x3xf32>
  // expected-error @below {{'linalg.matmul' op reads operand #2, the undefined contents of a tensor.empty}}
  %z = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Followed through a reshape to its reader.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  // expected-note @below {{the tensor.empty}}
  %e = tensor.empty() : tensor<32xf32>
  %r = tensor.expand_shape %e [[0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
  // expected-error @below {{'arith.mulf' op reads operand #0, the undefined contents of a tensor.empty}}
  %a = arith.mulf %r, %x : tensor<8x4xf32>
  %z = gacc.linear %a, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Inits written, filled or inserted into pass.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e2 = tensor.empty() : tensor<8x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<8x3xf32>) outs(%e2 : tensor<8x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %c0 : f32
    linalg.yield %v : f32
  } -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<8x3xf32>
  %z = tensor.insert_slice %r into %e3[0, 0] [8, 3] [1, 1] : tensor<8x3xf32> into tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A linalg input its payload never reads (only its shape) is no read.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %e = tensor.empty() : tensor<8x4xf32>
  %o = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %e : tensor<8x4xf32>, tensor<8x4xf32>) outs(%o : tensor<8x4xf32>) {
  ^bb0(%in: f32, %unused: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %z = gacc.linear %r, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A pad reads its source (its region only gives the padding value).
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %c0 = arith.constant 0.0 : f32
  // expected-note @below {{the tensor.empty}}
  %e = tensor.empty() : tensor<8x2xf32>
  // expected-error @below {{'tensor.pad' op reads operand #0, the undefined contents of a tensor.empty}}
  %p = tensor.pad %e low[0, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<8x2xf32> to tensor<8x4xf32>
  %a = arith.addf %x, %p : tensor<8x4xf32>
  %z = gacc.linear %a, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
