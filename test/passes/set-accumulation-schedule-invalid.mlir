// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=24" -verify-diagnostics
// RUN: not gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="accum-steps=3" 2>&1 | FileCheck %s --check-prefix=STEPS
// RUN: not gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=65536 accum-steps=65536" 2>&1 | FileCheck %s --check-prefix=WINDOW
// RUN: not gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="accum-steps=18446744073709551615" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: for the --micro-batch option: '-1' value invalid

// A micro-batch that does not divide the declared effective batch.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
// expected-error @below {{micro-batch size 24 does not divide the effective batch 256 (give the number of accumulation steps too to change the effective batch)}}
gacc.train_step @s params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %l = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A slice that takes part of the micro-batch (the first 8 samples) cannot
// follow another micro-batch size.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
gacc.train_step @partial params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 30 : i64, effective_batch = 240 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<30x784xf32>, %y: tensor<30xi32>):
  // Refused by the sample check before any re-typing.
  // expected-error @below {{'tensor.extract_slice' op takes part of the samples' dimension 0, so that the result holds some samples of the micro-batch and not others}}
  %s = tensor.extract_slice %x[0, 0] [8, 784] [1, 1] : tensor<30x784xf32> to tensor<8x784xf32>
  %p = tensor.pad %s low[0, 0] high[22, 0] {
  ^bb0(%i: index, %j: index):
    %c0 = arith.constant 0.0 : f32
    tensor.yield %c0 : f32
  } : tensor<8x784xf32> to tensor<30x784xf32>
  %z = gacc.linear %p, %w : tensor<30x784xf32>, tensor<10x784xf32> -> tensor<30x10xf32>
  %l = gacc.cross_entropy %z, %y : tensor<30x10xf32>, tensor<30xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A constant that is not one value throughout cannot be made at the new
// micro-batch size.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
gacc.train_step @dense params [@w] attributes {
    accum_steps = 24 : i64, micro_batch = 2 : i64, effective_batch = 48 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<2x784xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x784xf32>, tensor<10x784xf32> -> tensor<2x10xf32>
  %scale = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]]> : tensor<2x10xf32>
  // expected-error @below {{'arith.mulf' op cannot be re-typed for micro-batch size 24: its operands' shapes no longer agree (one follows the micro-batch, another does not and is no splat constant, fill or broadcast that could be made at the new shape)}}
  %s = arith.mulf %z, %scale : tensor<2x10xf32>
  %l = gacc.cross_entropy %s, %y : tensor<2x10xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// STEPS: error: 'gacc.train_step' op accumulation steps 3 do not divide the effective batch 256
// HUGE: error: 'gacc.train_step' op accumulation steps 18446744073709551615 would hold more than 16777216 samples per optimizer step, the limit
// WINDOW: error: 'gacc.train_step' op an effective batch of 65536 × 65536 samples (micro-batch × accumulation steps) is larger than the limit of 16777216 samples per optimizer step

// -----

// A parameter of the micro-batch's size added to each sample by a named
// elementwise op: its loop over the samples cannot follow the new size
// (the upstream verifier's shape error came instead, later).

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
gacc.param @b : tensor<16x10xf32> = #gacc.zeros
gacc.train_step @positions params [@w, @b] attributes {
    accum_steps = 3 : i64, micro_batch = 16 : i64, effective_batch = 48 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %b: tensor<16x10xf32>, %x: tensor<16x784xf32>, %y: tensor<16xi32>):
  %z = gacc.linear %x, %w : tensor<16x784xf32>, tensor<10x784xf32> -> tensor<16x10xf32>
  %e = tensor.empty() : tensor<16x10xf32>
  // expected-error @below {{'linalg.add' op cannot be re-typed for micro-batch size 24: its operands give loop 0 the sizes 24 and 16 (operand #1 keeps its size; an operand of a fixed size, such as a parameter, cannot be indexed by the micro-batch's loop)}}
  %a = linalg.add ins(%z, %b : tensor<16x10xf32>, tensor<16x10xf32>) outs(%e : tensor<16x10xf32>) -> tensor<16x10xf32>
  %l = gacc.cross_entropy %a, %y : tensor<16x10xf32>, tensor<16xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A differentiated step (it yields its gradients): the schedule is set on
// the model, before gacc-autodiff.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
// expected-error @below {{'gacc.train_step' op is already differentiated; gacc-set-accumulation-schedule re-types a model, so it runs before gacc-autodiff}}
gacc.train_step @differentiated params [@w] attributes {
    accum_steps = 3 : i64, micro_batch = 16 : i64, effective_batch = 48 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<16x784xf32>, %y: tensor<16xi32>):
  %z = gacc.linear %x, %w : tensor<16x784xf32>, tensor<10x784xf32> -> tensor<16x10xf32>
  %l = gacc.cross_entropy %z, %y : tensor<16x10xf32>, tensor<16xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<10x784xf32>
}

// -----

// A slice written over the whole micro-batch from a constant that is not
// a splat (each sample's row its own value) cannot follow another size.

gacc.param @w : tensor<6x5xf32> = #gacc.zeros
gacc.train_step @rows params [@w] attributes {
    accum_steps = 3 : i64, micro_batch = 16 : i64, effective_batch = 48 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<6x5xf32>, %x: tensor<16x6xf32>, %y: tensor<16xi32>):
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x5xf32>) -> tensor<16x5xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<16x6xf32>, tensor<6x5xf32>) outs(%f : tensor<16x5xf32>) -> tensor<16x5xf32>
  %c = arith.constant dense<[[0.0, 0.5], [1.0, 1.5], [2.0, 2.5], [3.0, 3.5], [4.0, 4.5], [5.0, 5.5], [6.0, 6.5], [7.0, 7.5], [8.0, 8.5], [9.0, 9.5], [10.0, 10.5], [11.0, 11.5], [12.0, 12.5], [13.0, 13.5], [14.0, 14.5], [15.0, 15.5]]> : tensor<16x2xf32>
  // expected-error @below {{'tensor.insert_slice' op cannot be re-typed for micro-batch size 24: its source does not follow the micro-batch of its destination, and is no splat constant, fill or broadcast that could be made at the new shape}}
  %i = tensor.insert_slice %c into %mm[0, 1] [16, 2] [1, 1] : tensor<16x2xf32> into tensor<16x5xf32>
  %l = gacc.cross_entropy %i, %y : tensor<16x5xf32>, tensor<16xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A micro-batch of one sample whose dimension a slice drops cannot become
// a micro-batch of several.

gacc.param @w : tensor<3x3xf32> = #gacc.zeros
gacc.train_step @dropped params [@w] attributes {
    accum_steps = 24 : i64, micro_batch = 1 : i64, effective_batch = 24 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x3xf32>, %x: tensor<1x3xf32>, %y: tensor<1xi32>):
  // expected-error @below {{'tensor.extract_slice' op cannot be re-typed for micro-batch size 24: it drops the micro-batch dimension 0 (of one sample), which the new size keeps}}
  %s = tensor.extract_slice %x[0, 0] [1, 3] [1, 1] : tensor<1x3xf32> to tensor<3xf32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
  %z = gacc.linear %r, %w : tensor<1x3xf32>, tensor<3x3xf32> -> tensor<1x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<1x3xf32>, tensor<1xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// What the re-typing leaves inconsistent is an error at the op, with the
// op's own reason: a layer op whose other operand (a non-splat constant of
// the old micro-batch size) does not follow.

gacc.param @w : tensor<3x3xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @mean : tensor<3xf32> = #gacc.zeros
gacc.statistic @var : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @masked params [@w, @g] attributes {
    accum_steps = 12 : i64, micro_batch = 4 : i64, effective_batch = 48 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x3xf32>, %g: tensor<3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %mask = arith.constant dense<[1.0, 0.0, 1.0, 1.0]> : tensor<4xf32>
  // expected-error @below {{'gacc.batch_norm' op cannot be re-typed for micro-batch size 24: its operands no longer fit together}}
  %n = gacc.batch_norm %x, %g, %g mask %mask running(@mean, @var) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  %z = gacc.linear %n, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
