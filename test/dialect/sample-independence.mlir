// RUN: gacc-opt %s -split-input-file -verify-diagnostics
// The forward computes each sample from that sample alone up to the loss
// (TrainStepOp's verifier, verifySampleIndependence): an op that reduces
// over the samples, reads them at anything but one loop index, or combines
// two different samples is an error naming the operand; what keeps the
// samples apart passes.

// A batch statistic written by hand: the mean over the samples.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @below {{'linalg.reduce' op reduces over the samples of the micro-batch (dimension 0 of operand #0): the step would depend on how the effective batch is split into micro-batches (an accumulated step would not equal the large batch) and on a ragged micro-batch's padding samples; only the loss sums over the samples (a gacc loss op), and an op with batch statistics declares them (gacc.batch_norm's batch_statistics)}}
  %r = linalg.reduce ins(%z : tensor<4x3xf32>) outs(%f : tensor<3xf32>) dimensions = [0]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<4x3xf32>
  %b = linalg.broadcast ins(%r : tensor<3xf32>) outs(%e2 : tensor<4x3xf32>) dimensions = [0]
  %z2 = arith.subf %z, %b : tensor<4x3xf32>
  %l = gacc.cross_entropy %z2, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Every sample against every other (in-batch similarities): two loops
// index the samples.
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @below {{'linalg.generic' op combines different samples of the micro-batch (operand #0 and operand #1 index them by different loops)}}
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %h : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %c, %p : f32
    linalg.yield %q : f32
  } -> tensor<4x4xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A transposed micro-batch added to itself: each element combines two
// samples.
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%h : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  // expected-error @below {{'arith.addf' op combines different samples of the micro-batch (operand #0 holds them in dimension 0, operand #1 in 1)}}
  %s = arith.addf %h, %t : tensor<4x4xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A softmax over the samples.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @below {{'linalg.softmax' op reduces over the samples of the micro-batch (dimension 0 of operand #0)}}
  %p = linalg.softmax dimension(0) ins(%z : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = gacc.cross_entropy %p, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The samples followed through a reshape: m · 2 rows of m samples, summed
// over the rows.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x2x8xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2x8xf32>, tensor<3x8xf32> -> tensor<4x2x3xf32>
  %rows = tensor.collapse_shape %z [[0, 1], [2]] : tensor<4x2x3xf32> into tensor<8x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @below {{'linalg.reduce' op reduces over the samples of the micro-batch (dimension 0 of operand #0)}}
  %r = linalg.reduce ins(%rows : tensor<8x3xf32>) outs(%f : tensor<3xf32>) dimensions = [0]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<4x3xf32>
  %b = linalg.broadcast ins(%r : tensor<3xf32>) outs(%e2 : tensor<4x3xf32>) dimensions = [0]
  %l = gacc.cross_entropy %b, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The first sample's features for every sample: read at a constant index.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @below {{'linalg.generic' op reads the samples of the micro-batch (dimension 0 of operand #0) at 0, not at one loop index}}
  %first = linalg.generic {indexing_maps = [affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%z : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  } -> tensor<4x3xf32>
  %l = gacc.cross_entropy %first, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Two per-sample tensors joined along the features keep their samples:
// a sum over them after the concatenation is found.
gacc.param @w : tensor<3x8xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, seed = 0 : i64} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %c = tensor.concat dim(1) %h, %h : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  // expected-error @below {{'linalg.reduce' op reduces over the samples of the micro-batch (dimension 0 of operand #0)}}
  %r = linalg.reduce ins(%c : tensor<4x6xf32>) outs(%f : tensor<6xf32>) dimensions = [0]
    (%a: f32, %cc: f32) {
      %s = arith.addf %a, %cc : f32
      linalg.yield %s : f32
    }
  %eb = tensor.empty() : tensor<4x6xf32>
  %b = linalg.broadcast ins(%r : tensor<6xf32>) outs(%eb : tensor<4x6xf32>) dimensions = [0]
  %l = gacc.cross_entropy %b, %y : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Sample 0's value read and added to every sample.
gacc.param @w : tensor<3x8xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, seed = 0 : i64} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %c0 = arith.constant 0 : index
  // expected-error @below {{'tensor.extract' op reads one element of a tensor that holds the samples of the micro-batch (dimension 0), a value every sample then shares}}
  %v = tensor.extract %h[%c0, %c0] : tensor<4x3xf32>
  %sp = tensor.splat %v : tensor<4x3xf32>
  %o = arith.addf %h, %sp : tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The same read inside a linalg.generic's payload, of an input captured
// from above: every sample is multiplied by sample 0's values.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xf32>, %y: tensor<5xi32>):
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %z = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<5x3xf32>) outs(%e2 : tensor<5x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %j = linalg.index 1 : index
    %c0i = arith.constant 0 : index
    // expected-error @below {{'tensor.extract' op reads one element of a tensor that holds the samples of the micro-batch (dimension 0, defined above this region), a value other samples then share}}
    %v = tensor.extract %x[%c0i, %j] : tensor<5x4xf32>
    %m = arith.mulf %a, %v : f32
    linalg.yield %m : f32
  } -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// torch.flip(x, dims=[1]) written as a gather: each sample reads its own
// row (the index at the samples' dimension is the loop that is dimension 0
// of the result), which is no mixing.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xf32>, %y: tensor<5xi32>):
  %e4 = tensor.empty() : tensor<5x4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e4 : tensor<5x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %r = arith.subi %c3, %j : index
    %v = tensor.extract %x[%i, %r] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<5x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%f, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A gather of each sample's own row in an op that also takes samples as an
// operand through another loop: sample j's row meets sample i's input.
gacc.param @w : tensor<3x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x4x3xf32>
  // r[i][j][k] = h[j][k] + x[i][k]: sample j's row plus sample i's input
  // expected-error @below {{'linalg.generic' op gathers each sample's row inside its region at loop 0 and reads the samples of operand #0 through another index, so that different samples meet}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<4x3xf32>) outs(%e : tensor<4x4x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 2 : index
    %v = tensor.extract %x[%i, %k] : tensor<4x4xf32>
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4x3xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  // sum over i: sample j's logits = 4 h[j] + sum_i x[i]
  %o = linalg.reduce ins(%r : tensor<4x4x3xf32>) outs(%z : tensor<4x3xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The same gather with the samples also an operand read through the row
// loop: out[i][j] = z[i][j] * x[i][j], no sample meets another.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xf32>, %y: tensor<5xi32>):
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %z = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<5x3xf32>) outs(%e2 : tensor<5x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%i, %j] : tensor<5x4xf32>
    %m = arith.mulf %a, %v : f32
    linalg.yield %m : f32
  } -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The samples sliced inside the region (or cast, or used by any op but a
// tensor.extract): sample 0's row for every sample.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xf32>, %y: tensor<5xi32>):
  %e4 = tensor.empty() : tensor<5x4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e4 : tensor<5x4xf32>) {
  ^bb0(%out: f32):
    %c0i = arith.constant 0 : index
    %j = linalg.index 1 : index
    // expected-error @below {{'tensor.extract_slice' op takes a tensor that holds the samples of the micro-batch (dimension 0, defined above this region) for anything but reading each sample's own elements (tensor.extract at the index of the samples' loop)}}
    %s = tensor.extract_slice %x[0, 0] [1, 4] [1, 1] : tensor<5x4xf32> to tensor<1x4xf32>
    %v = tensor.extract %s[%c0i, %j] : tensor<1x4xf32>
    linalg.yield %v : f32
  } -> tensor<5x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%f, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The "own row" loop runs over 10 rows of a 5-sample micro-batch: rows
// 5..9 read past %x, and after the reshape sample 0 holds samples 0 and 1.
gacc.param @w : tensor<8x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<8x3xf32>, %x: tensor<5x4xf32>, %y: tensor<5xi32>):
  %e = tensor.empty() : tensor<10x4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<10x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    // expected-error @below {{'tensor.extract' op reads the samples of the micro-batch at the index of loop 0, which runs over 10 rows, not its 5 samples}}
    %v = tensor.extract %x[%i, %j] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<10x4xf32>
  %g = tensor.expand_shape %f [[0, 1], [2]] output_shape [5, 2, 4] : tensor<10x4xf32> into tensor<5x2x4xf32>
  %h = tensor.collapse_shape %g [[0], [1, 2]] : tensor<5x2x4xf32> into tensor<5x8xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%h, %w : tensor<5x8xf32>, tensor<8x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A gather of each sample's own row whose payload also reads the row
// loop's index as a value: the sample's position.
gacc.param @w : tensor<3x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x4xf32>
  // f[i][j] = x[i][j] + i: each sample's own row, plus its position in the micro-batch
  // expected-error @below {{'linalg.generic' op reads the index of its samples' loop (linalg.index 0) for more than gathering each sample's row: each sample's position in the micro-batch}}
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%i, %j] : tensor<4x4xf32>
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %s = arith.addf %v, %fi : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %o = gacc.linear %f, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A gather of the next sample's row (a shift along the samples): each
// sample reads another's values.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xf32>, %y: tensor<5xi32>):
  %e4 = tensor.empty() : tensor<5x4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e4 : tensor<5x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %n = arith.addi %i, %c1 : index
    %next = arith.remui %n, %c5 : index
    // expected-error @below {{'tensor.extract' op reads one element of a tensor that holds the samples of the micro-batch (dimension 0, defined above this region), a value other samples then share}}
    %v = tensor.extract %x[%next, %j] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<5x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%f, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A loop over the samples marked "parallel" that the result does not
// index: each element gathers every sample.
gacc.param @w : tensor<3x8xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, seed = 0 : i64} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @below {{'linalg.generic' op reduces over the samples of the micro-batch (dimension 0 of operand #0)}}
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<4x3xf32>) outs(%f3 : tensor<3xf32>) {
  ^bb0(%a: f32, %c: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  %eb = tensor.empty() : tensor<4x3xf32>
  %b = linalg.broadcast ins(%s : tensor<3xf32>) outs(%eb : tensor<4x3xf32>) dimensions = [0]
  %r = arith.subf %h, %b : tensor<4x3xf32>
  %l = gacc.cross_entropy %r, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// What keeps the samples apart passes: a reduction over the features, a
// transpose and a reduction over its other dimension, a reshape there and
// back, a full slice, a softmax over the classes, a batch norm that
// declares its statistics, and the loss.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %g: tensor<3xf32>, %x: tensor<4x2x8xf32>, %y: tensor<4xi32>):
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x2x8xf32> into tensor<8x8xf32>
  %z8 = gacc.linear %rows, %w : tensor<8x8xf32>, tensor<3x8xf32> -> tensor<8x3xf32>
  %z3 = tensor.expand_shape %z8 [[0, 1], [2]] output_shape [4, 2, 3] : tensor<8x3xf32> into tensor<4x2x3xf32>
  %et = tensor.empty() : tensor<2x3x4xf32>
  %t = linalg.transpose ins(%z3 : tensor<4x2x3xf32>) outs(%et : tensor<2x3x4xf32>) permutation = [1, 2, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.reduce ins(%t : tensor<2x3x4xf32>) outs(%f : tensor<3x4xf32>) dimensions = [0]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  %eb = tensor.empty() : tensor<4x3xf32>
  %back = linalg.transpose ins(%r : tensor<3x4xf32>) outs(%eb : tensor<4x3xf32>) permutation = [1, 0]
  %all = tensor.extract_slice %back[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> to tensor<4x3xf32>
  %n = gacc.batch_norm %all, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %es = tensor.empty() : tensor<4x3xf32>
  %p = linalg.softmax dimension(1) ins(%n : tensor<4x3xf32>) outs(%es : tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = gacc.cross_entropy %p, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The samples are followed through all of that: a sum over them at the end
// is found.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %g: tensor<3xf32>, %x: tensor<4x2x8xf32>, %y: tensor<4xi32>):
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x2x8xf32> into tensor<8x8xf32>
  %z8 = gacc.linear %rows, %w : tensor<8x8xf32>, tensor<3x8xf32> -> tensor<8x3xf32>
  %z3 = tensor.expand_shape %z8 [[0, 1], [2]] output_shape [4, 2, 3] : tensor<8x3xf32> into tensor<4x2x3xf32>
  %et = tensor.empty() : tensor<2x3x4xf32>
  %t = linalg.transpose ins(%z3 : tensor<4x2x3xf32>) outs(%et : tensor<2x3x4xf32>) permutation = [1, 2, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.reduce ins(%t : tensor<2x3x4xf32>) outs(%f : tensor<3x4xf32>) dimensions = [0]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  %eb = tensor.empty() : tensor<4x3xf32>
  %back = linalg.transpose ins(%r : tensor<3x4xf32>) outs(%eb : tensor<4x3xf32>) permutation = [1, 0]
  %all = tensor.extract_slice %back[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> to tensor<4x3xf32>
  %n = gacc.batch_norm %all, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %es = tensor.empty() : tensor<4x3xf32>
  %p = linalg.softmax dimension(1) ins(%n : tensor<4x3xf32>) outs(%es : tensor<4x3xf32>) -> tensor<4x3xf32>
  %ep = tensor.empty() : tensor<3x4xf32>
  %pt = linalg.transpose ins(%p : tensor<4x3xf32>) outs(%ep : tensor<3x4xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @below {{'linalg.reduce' op reduces over the samples of the micro-batch (dimension 1 of operand #0)}}
  %r3 = linalg.reduce ins(%pt : tensor<3x4xf32>) outs(%f3 : tensor<3xf32>) dimensions = [1]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  %eb3 = tensor.empty() : tensor<4x3xf32>
  %b3 = linalg.broadcast ins(%r3 : tensor<3xf32>) outs(%eb3 : tensor<4x3xf32>) dimensions = [0]
  %l = gacc.cross_entropy %b3, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A leading unit dimension added and moved ([m, D] -> [1, m, D] -> [m, 1, D]):
// the samples stay where the extent m is.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %u = tensor.expand_shape %h [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %e = tensor.empty() : tensor<4x1x3xf32>
  %t = linalg.transpose ins(%u : tensor<1x4x3xf32>) outs(%e : tensor<4x1x3xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<4x1x3xf32> into tensor<4x3xf32>
  %s = arith.addf %c, %h : tensor<4x3xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A layer op's indexing maps follow the samples into any operand:
// gacc.linear %w, %x (W·xᵀ, [classes, m]) holds them in dimension 1, so the
// softmax over its dimension 0 is over the classes.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %zt = gacc.linear %w, %x : tensor<3x8xf32>, tensor<4x8xf32> -> tensor<3x4xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %p = linalg.softmax dimension(0) ins(%zt : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.transpose ins(%p : tensor<3x4xf32>) outs(%e2 : tensor<4x3xf32>) permutation = [1, 0]
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// An init the body does not read (a fill that takes only the shape of a
// per-sample tensor) carries no samples (m = D = 4).
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.param @v : tensor<4x4xf32> = #gacc.zeros
gacc.train_step @s params [@w, @v] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %v: tensor<4x4xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %ht = linalg.transpose ins(%h : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%h : tensor<4x4xf32>) -> tensor<4x4xf32>
  %yt = linalg.matmul ins(%v, %ht : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %yy = linalg.transpose ins(%yt : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %l = gacc.cross_entropy %yy, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Multi-head attention written with linalg: rows [m·S, E], heads
// [m, S, H, d] -> [m, H, S, d] -> [m·H, S, d], batch matmuls, a softmax over
// the keys, and back.
gacc.param @wq : tensor<4x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.param @wk : tensor<4x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.param @wv : tensor<4x4xf32> = #gacc.normal<mean = 0.0, std = 0.5>
gacc.train_step @s params [@wq, @wk, @wv] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, seed = 0 : i64} {
^bb0(%wq: tensor<4x4xf32>, %wk: tensor<4x4xf32>, %wv: tensor<4x4xf32>, %x: tensor<4x4x4xf32>, %y: tensor<4x4xi32>):
  %zero = arith.constant 0.0 : f32
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x4x4xf32> into tensor<16x4xf32>
  %e16 = tensor.empty() : tensor<16x4xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %q2 = linalg.matmul ins(%rows, %wq : tensor<16x4xf32>, tensor<4x4xf32>) outs(%f16 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %k2 = linalg.matmul ins(%rows, %wk : tensor<16x4xf32>, tensor<4x4xf32>) outs(%f16 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %v2 = linalg.matmul ins(%rows, %wv : tensor<16x4xf32>, tensor<4x4xf32>) outs(%f16 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %q4 = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [4, 4, 2, 2] : tensor<16x4xf32> into tensor<4x4x2x2xf32>
  %k4 = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [4, 4, 2, 2] : tensor<16x4xf32> into tensor<4x4x2x2xf32>
  %v4 = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [4, 4, 2, 2] : tensor<16x4xf32> into tensor<4x4x2x2xf32>
  %et = tensor.empty() : tensor<4x2x4x2xf32>
  %qt = linalg.transpose ins(%q4 : tensor<4x4x2x2xf32>) outs(%et : tensor<4x2x4x2xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k4 : tensor<4x4x2x2xf32>) outs(%et : tensor<4x2x4x2xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v4 : tensor<4x4x2x2xf32>) outs(%et : tensor<4x2x4x2xf32>) permutation = [0, 2, 1, 3]
  %qb = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<4x2x4x2xf32> into tensor<8x4x2xf32>
  %kb = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<4x2x4x2xf32> into tensor<8x4x2xf32>
  %vb = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<4x2x4x2xf32> into tensor<8x4x2xf32>
  %es = tensor.empty() : tensor<8x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %ekT = tensor.empty() : tensor<8x2x4xf32>
  %kT = linalg.transpose ins(%kb : tensor<8x4x2xf32>) outs(%ekT : tensor<8x2x4xf32>) permutation = [0, 2, 1]
  %sc = linalg.batch_matmul ins(%qb, %kT : tensor<8x4x2xf32>, tensor<8x2x4xf32>) outs(%fs : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<8x4x4xf32>) outs(%es : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %eo = tensor.empty() : tensor<8x4x2xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x4x2xf32>) -> tensor<8x4x2xf32>
  %o = linalg.batch_matmul ins(%p, %vb : tensor<8x4x4xf32>, tensor<8x4x2xf32>) outs(%fo : tensor<8x4x2xf32>) -> tensor<8x4x2xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [4, 2, 4, 2] : tensor<8x4x2xf32> into tensor<4x2x4x2xf32>
  %eb = tensor.empty() : tensor<4x4x2x2xf32>
  %ob = linalg.transpose ins(%o4 : tensor<4x2x4x2xf32>) outs(%eb : tensor<4x4x2x2xf32>) permutation = [0, 2, 1, 3]
  %o3 = tensor.collapse_shape %ob [[0], [1], [2, 3]] : tensor<4x4x2x2xf32> into tensor<4x4x4xf32>
  %r = arith.addf %o3, %x : tensor<4x4x4xf32>
  %l = gacc.cross_entropy %r, %y : tensor<4x4x4xf32>, tensor<4x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The same product with the softmax over dimension 1: over the samples.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %zt = gacc.linear %w, %x : tensor<3x8xf32>, tensor<4x8xf32> -> tensor<3x4xf32>
  // expected-error @below {{'gacc.softmax' op reduces over the samples of the micro-batch (dimension 1 of operand #0)}}
  %p = gacc.softmax %zt : tensor<3x4xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.transpose ins(%p : tensor<3x4xf32>) outs(%e2 : tensor<4x3xf32>) permutation = [1, 0]
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Every sample against every other through a layer op: x·xᵀ.
gacc.param @w : tensor<8x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<8x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  // expected-error @below {{'gacc.linear' op combines different samples of the micro-batch (operand #0 and operand #1 index them by different loops)}}
  %s = gacc.linear %h, %h : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A table of per-sample rows looked up by each sample's label: which
// sample's row is read depends on the data.
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  // expected-error @below {{'gacc.embedding' op reads the samples of the micro-batch (dimension 0 of operand #1) at s0 (an index read from the data), not at one loop index}}
  %r = gacc.embedding %y, %h : tensor<4xi32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %r, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Attention whose keys hold the samples in their position dimension: each
// query attends to other samples.
gacc.param @w : tensor<2x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x2xf32>, %x: tensor<4x1x4x2xf32>, %y: tensor<4x4xi32>):
  %q = gacc.linear %x, %w : tensor<4x1x4x2xf32>, tensor<2x2xf32> -> tensor<4x1x4x2xf32>
  %e = tensor.empty() : tensor<4x1x4x2xf32>
  %k = linalg.transpose ins(%q : tensor<4x1x4x2xf32>) outs(%e : tensor<4x1x4x2xf32>) permutation = [2, 1, 0, 3]
  // expected-error @below {{'gacc.attention' op combines different samples of the micro-batch (operand #0 and operand #1 index them by different loops)}}
  %o = gacc.attention %q, %k, %q : tensor<4x1x4x2xf32>, tensor<4x1x4x2xf32>, tensor<4x1x4x2xf32>
  %o3 = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<4x1x4x2xf32> into tensor<4x4x2xf32>
  %l = gacc.cross_entropy %o3, %y : tensor<4x4x2xf32>, tensor<4x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Dropout draws its mask by sample index along dimension 0: rows [m·S, D]
// collapsed from [m, S, D] are not the samples.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x2x8xf32>, %y: tensor<4x2xi32>):
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x2x8xf32> into tensor<8x8xf32>
  // expected-error @below {{'gacc.dropout' op draws its random values by sample index along dimension 0 of operand #0, which holds 8 rows, not the micro-batch's 4 samples}}
  %d = gacc.dropout %rows {p = 0.1 : f64} : tensor<8x8xf32>
  %z = gacc.linear %d, %w : tensor<8x8xf32>, tensor<3x8xf32> -> tensor<8x3xf32>
  %z3 = tensor.expand_shape %z [[0, 1], [2]] output_shape [4, 2, 3] : tensor<8x3xf32> into tensor<4x2x3xf32>
  %l = gacc.cross_entropy %z3, %y : tensor<4x2x3xf32>, tensor<4x2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Dropout of a transposed micro-batch: the samples are in dimension 1.
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  // expected-error @below {{'gacc.dropout' op draws its random values by sample index along dimension 0 of operand #0, which does not hold the samples of the micro-batch (dimension 1 does)}}
  %d = gacc.dropout %t {p = 0.1 : f64} : tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.transpose ins(%d : tensor<8x4xf32>) outs(%e2 : tensor<4x8xf32>) permutation = [1, 0]
  %z = gacc.linear %b, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The fused head over in-batch products: each sample's logits are its
// similarities to the others.
gacc.param @w : tensor<8x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<8x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  // expected-error @below {{'gacc.linear_cross_entropy' op combines different samples of the micro-batch (operand #0 and operand #1 index them by different loops)}}
  %l = gacc.linear_cross_entropy %h, %h, %y : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Logits [classes, m] (m = classes) scored against labels [m]: each row
// would meet another sample's label.
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %zt = gacc.linear %w, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  // expected-error @below {{'gacc.cross_entropy' op combines different samples of the micro-batch (operand #0 and operand #1 index them by different loops)}}
  %l = gacc.cross_entropy %zt, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A softmax whose init (written, never read) holds samples in another
// layout passes: only its input is read.
gacc.param @w : tensor<4x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %zt = gacc.linear %w, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %z = gacc.linear %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %p = linalg.softmax dimension(0) ins(%zt : tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %pt = linalg.transpose ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %l = gacc.cross_entropy %pt, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Tensor ops whose layout is known mix the samples where they move them
// apart from their positions: [8] split as [2, 4] puts 4 samples in each
// index of the first factor (a transpose and collapse after it would pair
// each prediction with another sample's target).
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  // expected-error @below {{'tensor.expand_shape' op splits the samples' dimension 0 into factors whose first, 2, is not a multiple of the micro-batch's 8 samples: each of its indices holds parts of several samples}}
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
  %z = gacc.linear %c, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Row 0's values read by every row.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  // expected-error @below {{'tensor.extract_slice' op takes part of the samples' dimension 0, so that the result holds some samples of the micro-batch and not others}}
  %a = tensor.extract_slice %x[0, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
  %t0 = tensor.empty() : tensor<8x4xf32>
  %b = linalg.broadcast ins(%a : tensor<4xf32>) outs(%t0 : tensor<8x4xf32>) dimensions = [0]
  %z = gacc.linear %b, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Samples shifted by a pad along their dimension.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %cst = arith.constant 0.0 : f32
  // expected-error @below {{'tensor.pad' op pads the samples' dimension 0, so that the result's positions are not the micro-batch's samples}}
  %p = tensor.pad %x low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<8x4xf32> to tensor<9x4xf32>
  %s = tensor.extract_slice %p[0, 0] [8, 4] [1, 1] : tensor<9x4xf32> to tensor<8x4xf32>
  %z = gacc.linear %s, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A pad along the features whose value is computed from the row index.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x3xf32>, %y: tensor<8xi32>):
  // expected-error @below {{'tensor.pad' op pads with a value computed from the position, which differs by the sample's place in the micro-batch}}
  %p = tensor.pad %x low[0, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    tensor.yield %f : f32
  } : tensor<8x3xf32> to tensor<8x4xf32>
  %z = gacc.linear %p, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// One sample's row written over another's.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %r = arith.constant dense<1.0> : tensor<1x4xf32>
  // expected-error @below {{'tensor.insert_slice' op writes a slice into part of the samples' dimension 0 of the result, so that only the samples at some positions of the micro-batch get its values}}
  %i = tensor.insert_slice %r into %x[7, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
  %z = gacc.linear %i, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The samples joined along their own dimension.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  // expected-error @below {{'tensor.concat' op joins along the samples' dimension 0, so that a sample's position in the result is not its position in the micro-batch}}
  %c = tensor.concat dim(0) %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %s = tensor.extract_slice %c[2, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  %z = gacc.linear %s, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A payload that reads its samples' loop index: each sample's value
// depends on its position in the micro-batch.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-error @below {{'linalg.generic' op reads the index of its samples' loop (linalg.index 0), each sample's position in the micro-batch}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %v = arith.addf %in, %f : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %z = gacc.linear %r, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A reshape to a shape read from a tensor: its grouping is not known.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 8 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<8x4xf32>, %y: tensor<8xi32>):
  %sh = arith.constant dense<[8, 4]> : tensor<2xi64>
  // expected-error @below {{'tensor.reshape' op reshapes the samples of the micro-batch to a shape read from a tensor}}
  %r = tensor.reshape %x(%sh) : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<8x4xf32>
  %z = gacc.linear %r, %w : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// What keeps each sample in its place passes: tokens flattened to
// [m · S, D] and split again into heads [m · S, H, hd] and back to
// [m, S, D], a learned row written along the positions of every sample
// (the insert covers the samples' dimension whole), features joined.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.param @cls : tensor<4xf32> = #gacc.zeros
gacc.train_step @s params [@w, @cls] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %cls: tensor<4xf32>, %x: tensor<2x3x4xf32>, %y: tensor<2x4xi32>):
  %f = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %h = tensor.expand_shape %f [[0], [1, 2]] output_shape [6, 2, 2] : tensor<6x4xf32> into tensor<6x2x2xf32>
  %f2 = tensor.collapse_shape %h [[0], [1, 2]] : tensor<6x2x2xf32> into tensor<6x4xf32>
  %t = tensor.expand_shape %f2 [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %e = tensor.empty() : tensor<2x1x4xf32>
  %c = linalg.broadcast ins(%cls : tensor<4xf32>) outs(%e : tensor<2x1x4xf32>) dimensions = [0, 1]
  %big = tensor.empty() : tensor<2x4x4xf32>
  %withCls = tensor.insert_slice %c into %big[0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x1x4xf32> into tensor<2x4x4xf32>
  %all = tensor.insert_slice %t into %withCls[0, 1, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<2x4x4xf32>
  %z = gacc.linear %all, %w : tensor<2x4x4xf32>, tensor<3x4xf32> -> tensor<2x4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x4x3xf32>, tensor<2x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Attention's heads: [m, S, H·hd] split to [m, S, H, hd], transposed to
// [m, H, S, hd] and collapsed to [m·H, S, hd] for a batched product, then
// back; the first token's row of every sample (x[:, 0, :]).
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x3x4xf32>, %y: tensor<2xi32>):
  %c0 = arith.constant 0.0 : f32
  %h = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf32> into tensor<2x3x2x2xf32>
  %e = tensor.empty() : tensor<2x2x3x2xf32>
  %t = linalg.transpose ins(%h : tensor<2x3x2x2xf32>) outs(%e : tensor<2x2x3x2xf32>) permutation = [0, 2, 1, 3]
  %b = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x2x3x2xf32> into tensor<4x3x2xf32>
  %eb = tensor.empty() : tensor<4x2x3xf32>
  %bt = linalg.transpose ins(%b : tensor<4x3x2xf32>) outs(%eb : tensor<4x2x3xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x3x3xf32>
  %fs = linalg.fill ins(%c0 : f32) outs(%es : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %s = linalg.batch_matmul ins(%b, %bt : tensor<4x3x2xf32>, tensor<4x2x3xf32>) outs(%fs : tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  %eo = tensor.empty() : tensor<4x3x2xf32>
  %fo = linalg.fill ins(%c0 : f32) outs(%eo : tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
  %o = linalg.batch_matmul ins(%s, %b : tensor<4x3x3xf32>, tensor<4x3x2xf32>) outs(%fo : tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
  %oh = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 2, 3, 2] : tensor<4x3x2xf32> into tensor<2x2x3x2xf32>
  %eh = tensor.empty() : tensor<2x3x2x2xf32>
  %ot = linalg.transpose ins(%oh : tensor<2x2x3x2xf32>) outs(%eh : tensor<2x3x2x2xf32>) permutation = [0, 2, 1, 3]
  %m = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<2x3x2x2xf32> into tensor<2x3x4xf32>
  %cls = tensor.extract_slice %m[0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<2x4xf32>
  %z = gacc.linear %cls, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Time-major rows: [m, S, D] transposed to [S, m, D] and collapsed to
// [S·m, D] put each sample's rows between other samples'; expanded back
// to [m, S, D] each "sample" would hold rows of several.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x3x4xf32>, %y: tensor<2xi32>):
  %ex = tensor.empty() : tensor<3x2x4xf32>
  %tm = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%ex : tensor<3x2x4xf32>) permutation = [1, 0, 2]
  // expected-error @below {{'tensor.collapse_shape' op merges the samples' dimension 1 into one after dimension 0, so that each sample's rows lie between other samples' (keep the samples outermost: transpose them to the front first)}}
  %rows = tensor.collapse_shape %tm [[0, 1], [2]] : tensor<3x2x4xf32> into tensor<6x4xf32>
  %back = tensor.expand_shape %rows [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %cls = tensor.extract_slice %back[0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<2x4xf32>
  %z = gacc.linear %cls, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A slice of the samples written across another sample layout: the
// transposed samples (in dimension 1) written over the samples (in 0).
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  // expected-error @below {{'tensor.insert_slice' op writes the samples of the micro-batch (dimension 1 of the source) across the destination's samples (dimension 0)}}
  %i = tensor.insert_slice %t into %x[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x4xf32>
  %z = gacc.linear %i, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Two layouts of the samples joined.
gacc.param @w : tensor<3x8xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x8xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  // expected-error @below {{'tensor.concat' op joins tensors that hold the samples of the micro-batch in different dimensions (operand #0 in 0, operand #1 in 1)}}
  %c = tensor.concat dim(1) %x, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %z = gacc.linear %c, %w : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// One element written into one sample's row.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // expected-error @below {{'tensor.insert' op writes one element of a tensor that holds the samples of the micro-batch, a value only the sample at that position gets}}
  %i = tensor.insert %one into %x[%c0, %c0] : tensor<4x4xf32>
  %z = gacc.linear %i, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// With a micro-batch of one sample there are no others to move it among:
// a slice of its rows passes.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 1 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<1x5x4xf32>, %y: tensor<1x4xi32>):
  %f = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x5x4xf32> into tensor<5x4xf32>
  %s = tensor.extract_slice %f[1, 0] [4, 4] [1, 1] : tensor<5x4xf32> to tensor<4x4xf32>
  %r = tensor.expand_shape %s [[0, 1], [2]] output_shape [1, 4, 4] : tensor<4x4xf32> into tensor<1x4x4xf32>
  %z = gacc.linear %r, %w : tensor<1x4x4xf32>, tensor<3x4xf32> -> tensor<1x4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<1x4x3xf32>, tensor<1x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// With one sample, an expand's first factor holds it even of extent 1:
// [2] into [1, 2] keeps the sample in dimension 0 (skipping the unit factor
// took the features for the samples, and the linear "reduced over" them).
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 4 : i64, micro_batch = 1 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<1x2xf32>, %y: tensor<1xi32>):
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<1x2xf32> into tensor<2xf32>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
  %z = gacc.linear %e, %w : tensor<1x2xf32>, tensor<3x2xf32> -> tensor<1x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<1x3xf32>, tensor<1xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
