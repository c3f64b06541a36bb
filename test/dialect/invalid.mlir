// RUN: gacc-opt %s -split-input-file -verify-diagnostics
// One case per verifier rule of the gacc dialect.

// A parameter must be a statically shaped tensor.
// expected-error @below {{failed to satisfy constraint: type attribute of statically shaped tensor of 32-bit float values}}
gacc.param @p : tensor<?x2xf32> = #gacc.zeros

// -----

// A parameter's element type must be f32.
// expected-error @below {{failed to satisfy constraint: type attribute of statically shaped tensor of 32-bit float values}}
gacc.param @p : tensor<2xf16> = #gacc.zeros

// -----

// The initializer must be a gacc initializer.
// expected-error @below {{initializer must be #gacc.zeros, #gacc.constant, #gacc.uniform, #gacc.normal or #gacc.kaiming_uniform}}
gacc.param @p : tensor<2xf32> = 1.0 : f32

// -----

// uniform needs low < high.
// expected-error @below {{#gacc.uniform needs low < high}}
gacc.param @p : tensor<2xf32> = #gacc.uniform<low = 1.0, high = 0.5>

// -----

// normal needs a positive std.
// expected-error @below {{#gacc.normal needs std > 0}}
gacc.param @p : tensor<2xf32> = #gacc.normal<mean = 0.0, std = 0.0>

// -----

// kaiming_uniform needs a positive fan_in.
// expected-error @below {{#gacc.kaiming_uniform needs fan_in > 0}}
gacc.param @p : tensor<2xf32> = #gacc.kaiming_uniform<fan_in = 0>

// -----

// SGD's learning rate cannot be negative.
func.func private @f() attributes {
  // expected-error @below {{#gacc.sgd needs lr >= 0}}
  o = #gacc.sgd<lr = -1.0>}

// -----

// Nesterov needs momentum and no dampening.
func.func private @f() attributes {
  // expected-error @below {{#gacc.sgd with nesterov needs momentum > 0 and dampening = 0}}
  o = #gacc.sgd<lr = 0.1, nesterov = true>}

// -----

// accum_steps must be positive.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{accum_steps must be positive, got 0}}
gacc.train_step @s params [@w] attributes {accum_steps = 0 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// micro_batch must be positive.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{micro_batch must be positive, got -4}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = -4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The effective batch is at most N × m.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{effective_batch (10) must be in ((accum_steps - 1) × micro_batch, accum_steps × micro_batch] = (4, 8]: 8 = 2 × 4, or fewer with a ragged last micro-batch}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, effective_batch = 10 : i64} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The effective batch is more than (N - 1) × m: no micro-batch is empty.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{effective_batch (4) must be in ((accum_steps - 1) × micro_batch, accum_steps × micro_batch] = (4, 8]: 8 = 2 × 4, or fewer with a ragged last micro-batch}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, effective_batch = 4 : i64} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The optimizer must be a known optimizer attribute.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{optimizer must be #gacc.sgd, #gacc.adam, #gacc.adamw or #gacc.lion, got "adam"}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = "adam"} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Every listed parameter must name a gacc.param.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{'missing' does not name a gacc.param}}
gacc.train_step @s params [@missing] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A parameter cannot be listed twice.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{parameter @w is listed twice}}
gacc.train_step @s params [@w, @w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %w2: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %u = gacc.relu %w2 : tensor<3x2xf32>
  gacc.yield %l : tensor<f32>
}

// -----

// A body argument must have its parameter's declared type.
gacc.param @w : tensor<3x5xf32> = #gacc.zeros
// expected-error @below {{body argument #0 has type 'tensor<3x2xf32>' but parameter @w is declared as 'tensor<3x5xf32>'}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The body needs the parameters and at least one input.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{body needs one argument per parameter (1) followed by at least one input, got 1 arguments}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>):
  %l = arith.constant dense<0.0> : tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Every parameter must be used.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{parameter @w is never used by the body}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %l = gacc.cross_entropy %x, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Every input must be used.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{input #2 is never used by the body}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>, %unused: tensor<4xf32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// An input's leading dimension is the micro-batch size.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{input #0 (body argument #1; `params` names 1) has leading dimension 5 but micro_batch is 4}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<5x2xf32>, %y: tensor<5xi32>):
  %z = gacc.linear %x, %w : tensor<5x2xf32>, tensor<3x2xf32> -> tensor<5x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Inputs carry f32 features or i32/i64 labels and token ids.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{input #0 has element type 'f16': data sets feed f32 features or i32/i64 labels and token ids}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %h: tensor<4x2xf16>, %y: tensor<4xi32>):
  %x = arith.extf %h : tensor<4x2xf16> to tensor<4x2xf32>
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// An input needs at least one element per sample.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{input #2 has no elements ('tensor<4x0xf32>'): every tensor of a training step needs at least one}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>, %e: tensor<4x0xf32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %c = tensor.concat dim(1) %z, %e : (tensor<4x3xf32>, tensor<4x0xf32>) -> tensor<4x3xf32>
  %l = gacc.cross_entropy %c, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A value the body computes must have elements.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{'tensor.extract_slice' op result #0 has no elements}}
  %e = tensor.extract_slice %z[0, 0] [4, 0] [1, 1] : tensor<4x3xf32> to tensor<4x0xf32>
  %c = tensor.concat dim(1) %z, %e : (tensor<4x3xf32>, tensor<4x0xf32>) -> tensor<4x3xf32>
  %l = gacc.cross_entropy %c, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// No tensor may exceed what a device could hold, nor overflow its byte count.
// expected-error @below {{parameter ('tensor<4294967296x4294967296xf32>') is larger than 1024 GiB}}
gacc.param @w : tensor<4294967296x4294967296xf32> = #gacc.zeros

// -----

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{'tensor.empty' op result #0 ('tensor<4x3x1099511627776xf32>') is larger than 1024 GiB}}
  %big = tensor.empty() : tensor<4x3x1099511627776xf32>
  %r = tensor.extract_slice %big[0, 0, 0] [4, 3, 1] [1, 1, 1] : tensor<4x3x1099511627776xf32> to tensor<4x3xf32>
  %s = arith.addf %z, %r : tensor<4x3xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The body must yield the loss (and, after autodiff, one gradient per parameter).
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @below {{must yield the micro-batch loss, optionally followed by one gradient per trainable parameter (1), got 3 values}}
  gacc.yield %l, %l, %l : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// The loss must be a scalar tensor<f32>.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @below {{loss must be a scalar tensor<f32>, got 'tensor<4x3xf32>'}}
  gacc.yield %z : tensor<4x3xf32>
}

// -----

// A gradient must have its parameter's type.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @below {{gradient #0 has type 'tensor<4x3xf32>' but parameter @w has type 'tensor<3x2xf32>'}}
  gacc.yield %l, %z : tensor<f32>, tensor<4x3xf32>
}

// -----

// gacc.yield only terminates a training step.
func.func @f(%l: tensor<f32>) {
  // expected-error @below {{expects parent op 'gacc.train_step'}}
  gacc.yield %l : tensor<f32>
}

// -----

// linear: the input has rank >= 2.
func.func @f(%x: tensor<4xf32>, %w: tensor<3x4xf32>) {
  // expected-error @below {{input must have rank >= 2 [batch, ..., in_features]}}
  %y = gacc.linear %x, %w : tensor<4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  return
}

// -----

// linear: the weight is rank 2.
func.func @f(%x: tensor<4x2xf32>, %w: tensor<3xf32>) {
  // expected-error @below {{weight must be rank 2 [out_features, in_features]}}
  %y = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return
}

// -----

// linear: in-features must agree (torch's [out, in] layout).
func.func @f(%x: tensor<4x2xf32>, %w: tensor<2x3xf32>) {
  // expected-error @below {{input has 2 features but weight expects 3 (weight layout is [out, in])}}
  %y = gacc.linear %x, %w : tensor<4x2xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

// linear: the bias is [out].
func.func @f(%x: tensor<4x2xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) {
  // expected-error @below {{bias must be [3], got 'tensor<2xf32>'}}
  %y = gacc.linear %x, %w bias %b : tensor<4x2xf32>, tensor<3x2xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

// linear: the result is [batch, out].
func.func @f(%x: tensor<4x2xf32>, %w: tensor<3x2xf32>) {
  // expected-error @below {{result must be 'tensor<4x3xf32>', got 'tensor<3x4xf32>'}}
  %y = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<3x4xf32>
  return
}

// -----

// cross_entropy: logits are rank 2 or 3.
func.func @f(%z: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @below {{logits must be rank 2 [batch, classes] or 3 [batch, sequence, classes]}}
  %l = gacc.cross_entropy %z, %y : tensor<4xf32>, tensor<4xi32> -> tensor<f32>
  return
}

// -----

// cross_entropy: labels have the logits' shape without the classes.
func.func @f(%z: tensor<4x3xf32>, %y: tensor<4x1xi32>) {
  // expected-error @below {{labels must have the logits' shape without the class dimension}}
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4x1xi32> -> tensor<f32>
  return
}

// -----

// cross_entropy: label smoothing is a probability mass in [0, 1].
func.func @f(%z: tensor<4x3xf32>, %y: tensor<4xi32>) {
  // expected-error @below {{label_smoothing must be in [0, 1], got 1.5}}
  %l = gacc.cross_entropy %z, %y {label_smoothing = 1.5 : f64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return
}

// -----

// cross_entropy: one label per row of logits.
func.func @f(%z: tensor<4x3xf32>, %y: tensor<5xi32>) {
  // expected-error @below {{labels must have the logits' shape without the class dimension, got 'tensor<5xi32>' for logits 'tensor<4x3xf32>'}}
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<5xi32> -> tensor<f32>
  return
}

// -----

// cross_entropy: labels are integers (i32 or i64).
func.func @f(%z: tensor<4x3xf32>, %y: tensor<4xf32>) {
  // expected-error @below {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xf32> -> tensor<f32>
  return
}

// -----

// cross_entropy: the loss is a scalar.
func.func @f(%z: tensor<4x3xf32>, %y: tensor<4xi32>) {
  // expected-error @below {{result #0 must be 0D tensor of 32-bit float values}}
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

// accumulate: gradient and accumulator have one type.
func.func @f(%g: tensor<4xf32>, %a: tensor<5xf32>, %c: i1) {
  // expected-error @below {{all of {gradient, accumulator, result} have same type}}
  %r = "gacc.accumulate"(%g, %a, %c) : (tensor<4xf32>, tensor<5xf32>, i1) -> tensor<4xf32>
  return
}

// -----

// apply_optimizer: the optimizer must be known.
func.func @f(%p: tensor<4xf32>, %a: tensor<4xf32>, %m: tensor<4xf32>, %b: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) {
  // expected-error @below {{unknown optimizer "adam"}}
  %r = gacc.apply_optimizer "adam" param(%p) accumulator(%a) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> tensor<4xf32>
  return
}

// -----

// apply_optimizer: SGD with momentum has one state tensor.
func.func @f(%p: tensor<4xf32>, %a: tensor<4xf32>, %m: tensor<4xf32>, %b: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) {
  // expected-error @below {{optimizer needs 1 state tensors, got 0}}
  %r = gacc.apply_optimizer #gacc.sgd<lr = 0.1, momentum = 0.9> param(%p) accumulator(%a) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> tensor<4xf32>
  return
}

// -----

// apply_optimizer: the accumulator has the parameter's type.
func.func @f(%p: tensor<4xf32>, %a: tensor<4xf32>, %m: tensor<4xf32>, %b: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) {
  // expected-error @below {{accumulator type 'tensor<5xf32>' differs from parameter type 'tensor<4xf32>'}}
  %r = gacc.apply_optimizer #gacc.sgd<lr = 0.1> param(%p) accumulator(%b) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<5xf32>, f32, f32, i64) -> tensor<4xf32>
  return
}

// -----

// apply_optimizer: the state has the parameter's type.
func.func @f(%p: tensor<4xf32>, %a: tensor<4xf32>, %m: tensor<4xf32>, %b: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) {
  // expected-error @below {{state type 'tensor<5xf32>' differs from parameter type 'tensor<4xf32>'}}
  %r:2 = gacc.apply_optimizer #gacc.sgd<lr = 0.1, momentum = 0.9> param(%p) accumulator(%a) state(%b) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, f32, f32, i64) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// apply_optimizer: results are the parameter and its state.
func.func @f(%p: tensor<4xf32>, %a: tensor<4xf32>, %m: tensor<4xf32>, %b: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) {
  // expected-error @below {{results must be the parameter and its state}}
  %r:2 = gacc.apply_optimizer #gacc.sgd<lr = 0.1> param(%p) accumulator(%a) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// matmul_accumulate: A and B of one element type.
func.func @f(%a: tensor<5x4xbf16>, %b: tensor<5x3xf32>, %c: tensor<4x3xf32>, %f: i1) {
  // expected-error @below {{A and B must have one element type, got 'bf16' and 'f32'}}
  %r = gacc.matmul_accumulate %a, %b into %c first %f {transpose_a} : tensor<5x4xbf16>, tensor<5x3xf32> into tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// matmul_accumulate: an fp32 accumulator.
func.func @f(%a: tensor<5x4xbf16>, %b: tensor<5x3xbf16>, %c: tensor<4x3xbf16>, %f: i1) {
  // expected-error @below {{operand #2 must be}}
  %r = gacc.matmul_accumulate %a, %b into %c first %f {transpose_a} : tensor<5x4xbf16>, tensor<5x3xbf16> into tensor<4x3xbf16> -> tensor<4x3xbf16>
  return
}

// -----

// matmul_accumulate: all tensors or all memrefs.
func.func @f(%a: tensor<5x4xf32>, %b: tensor<5x3xf32>, %c: tensor<4x3xf32>, %m: memref<4x3xf32>, %f: i1) {
  // expected-error @below {{operands must be all tensors or all memrefs}}
  gacc.matmul_accumulate %a, %b into %m first %f {transpose_a} : tensor<5x4xf32>, tensor<5x3xf32> into memref<4x3xf32>
  return
}

// -----

// matmul_accumulate: the tensor form returns the accumulator.
func.func @f(%a: tensor<5x4xf32>, %b: tensor<5x3xf32>, %c: tensor<4x3xf32>, %m: memref<4x3xf32>, %f: i1) {
  // expected-error @below {{tensor form must return the accumulator}}
  gacc.matmul_accumulate %a, %b into %c first %f {transpose_a} : tensor<5x4xf32>, tensor<5x3xf32> into tensor<4x3xf32>
  return
}

// -----

// matmul_accumulate: contraction sizes agree.
func.func @f(%a: tensor<5x4xf32>, %b: tensor<5x3xf32>, %c: tensor<4x3xf32>, %m: memref<4x3xf32>, %f: i1) {
  // expected-error @below {{contraction sizes differ: op(A) has 4 columns, op(B) has 5 rows}}
  %r = gacc.matmul_accumulate %a, %b into %c first %f : tensor<5x4xf32>, tensor<5x3xf32> into tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// matmul_accumulate: the accumulator is [M, N].
func.func @f(%a: tensor<5x4xf32>, %b: tensor<5x3xf32>, %c: tensor<3x3xf32>, %f: i1) {
  // expected-error @below {{accumulator must be [4, 3], got 'tensor<3x3xf32>'}}
  %r = gacc.matmul_accumulate %a, %b into %c first %f {transpose_a} : tensor<5x4xf32>, tensor<5x3xf32> into tensor<3x3xf32> -> tensor<3x3xf32>
  return
}

// -----

// Training-step inputs are statically shaped (the step is specialized for
// its micro-batch size).
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{input #0 must be a statically shaped tensor with a leading micro-batch dimension, got 'tensor<?x2xf32>'}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<?x2xf32>, %y: tensor<4xi32>):
  %u = gacc.relu %w : tensor<3x2xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x2xf32>
  %e = tensor.extract %y[%c0] : tensor<4xi32>
  %l = arith.constant dense<0.0> : tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Layer ops take statically shaped tensors.
func.func @f(%x: tensor<4x?xf32>, %w: tensor<3x2xf32>) {
  // expected-error @below {{operand #0 must be statically shaped tensor of 32-bit float values}}
  %y = gacc.linear %x, %w : tensor<4x?xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  return
}

// -----

// embedding: the weight is [vocabulary, dim].
func.func @f(%i: tensor<2x5xi32>, %w: tensor<11xf32>) {
  // expected-error @below {{weight must be rank 2 [vocabulary, dim]}}
  %e = gacc.embedding %i, %w : tensor<2x5xi32>, tensor<11xf32> -> tensor<2x5x11xf32>
  return
}

// -----

// embedding: the result is the indices' shape + [dim].
func.func @f(%i: tensor<2x5xi32>, %w: tensor<11x6xf32>) {
  // expected-error @below {{result must be 'tensor<2x5x6xf32>', got 'tensor<2x6xf32>'}}
  %e = gacc.embedding %i, %w : tensor<2x5xi32>, tensor<11x6xf32> -> tensor<2x6xf32>
  return
}

// -----

// layer_norm: weight and bias are [D] of the last dimension.
func.func @f(%x: tensor<2x7xf32>, %g: tensor<6xf32>, %b: tensor<7xf32>) {
  // expected-error @below {{weight and bias must be [7], got 'tensor<6xf32>'}}
  %y = gacc.layer_norm %x, %g, %b : tensor<2x7xf32>, tensor<6xf32>, tensor<7xf32>
  return
}

// -----

// layer_norm: eps is positive.
func.func @f(%x: tensor<2x7xf32>, %g: tensor<7xf32>) {
  // expected-error @below {{eps must be positive}}
  %y = gacc.layer_norm %x, %g, %g {eps = 0.0 : f64} : tensor<2x7xf32>, tensor<7xf32>, tensor<7xf32>
  return
}

// -----

// gelu: approximate is "none" or "tanh", as torch.
func.func @f(%x: tensor<2x7xf32>) {
  // expected-error @below {{approximate must be "none" or "tanh" (as torch.nn.functional.gelu), got "sigmoid"}}
  %y = gacc.gelu %x {approximate = "sigmoid"} : tensor<2x7xf32>
  return
}

// -----

// dropout: p is a probability below 1 (p = 1 would scale by infinity).
func.func @f(%x: tensor<2x7xf32>) {
  // expected-error @below {{p in [0, 1), got 1}}
  %y = gacc.dropout %x {p = 1.0 : f64} : tensor<2x7xf32>
  return
}

// -----

func.func @f(%x: tensor<2x7xf32>) {
  // expected-error @below {{p in [0, 1), got -0.1}}
  %y = gacc.dropout %x {p = -0.1 : f64} : tensor<2x7xf32>
  return
}

// -----

// dropout: the stream is a 32-bit counter word.
func.func @f(%x: tensor<2x7xf32>) {
  // expected-error @below {{stream must be in [0, 2^32), got 4294967296}}
  %y = gacc.dropout %x {p = 0.1 : f64, stream = 4294967296 : i64} : tensor<2x7xf32>
  return
}

// -----

func.func @f(%x: tensor<2x7xf32>) {
  // expected-error @below {{stream must be in [0, 2^32), got -1}}
  %y = gacc.dropout %x {p = 0.1 : f64, stream = -1 : i64} : tensor<2x7xf32>
  return
}

// -----

// dropout: the key is the seed, the optimizer step and the first sample.
func.func @f(%x: tensor<2x7xf32>, %k: i64) {
  // expected-error @below {{key must be three i64 values (seed, optimizer step, first sample), got 2}}
  %y = gacc.dropout %x key(%k, %k) {p = 0.1 : f64} : tensor<2x7xf32>
  return
}

// -----

// dropout: rows are samples.
func.func @f(%x: tensor<f32>) {
  // expected-error @below {{needs a leading micro-batch dimension (rank >= 1)}}
  %y = gacc.dropout %x {p = 0.1 : f64} : tensor<f32>
  return
}

// -----

// Two dropouts of one forward pass drawing the same stream would draw the
// same masks: the step names the second and where the first is.
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %a = gacc.dropout %x {p = 0.1 : f64} : tensor<4x3xf32> loc("first.mlir":1:1)
  // expected-error @below {{draws random stream 0, as does the op at loc("first.mlir":1:1): its masks would repeat; give each random op of the model its own `stream`}}
  %b = gacc.dropout %a {p = 0.2 : f64} : tensor<4x3xf32>
  %z = gacc.linear %b, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The key of a dropout in a training step is the step's to bind.
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 1 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %k = arith.constant 0 : i64
  // expected-error @below {{has a random key in a training step's body; gacc-expand-accumulation binds it from the seed, the optimizer step and the samples}}
  %a = gacc.dropout %x key(%k, %k, %k) {p = 0.1 : f64} : tensor<4x3xf32>
  %z = gacc.linear %a, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// cross_entropy over sequences: labels are the logits' leading shape.
func.func @f(%z: tensor<2x5x7xf32>, %y: tensor<2x4xi32>) {
  // expected-error @below {{labels must have the logits' shape without the class dimension, got 'tensor<2x4xi32>' for logits 'tensor<2x5x7xf32>'}}
  %l = gacc.cross_entropy %z, %y : tensor<2x5x7xf32>, tensor<2x4xi32> -> tensor<f32>
  return
}

// -----

// An op that depends on batch statistics must declare how it accumulates
// across micro-batches; the message names the op.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{'gacc.batch_norm' op depends on statistics of the whole batch but declares no accumulation across micro-batches; add batch_statistics = #gacc.batch_statistics<per_micro_batch> (PyTorch's behaviour, accepted knowingly) or <per_window> (running statistics of the whole window)}}
  %n = gacc.batch_norm %z, %g, %g running(@rm, @rv) : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %n, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// batch_norm: weight and bias are [C].
func.func @f(%x: tensor<4x3xf32>, %g: tensor<2xf32>) {
  // expected-error @below {{weight must be [3], got 'tensor<2xf32>'}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// batch_norm: the input is [m, C, ...] without an empty dimension.
func.func @f(%x: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @below {{input must have rank >= 2 [m, C, ...], got 'tensor<4xf32>'}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rv) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x3x0x2xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{input must not have an empty dimension, got 'tensor<4x3x0x2xf32>'}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rv) : tensor<4x3x0x2xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// batch_norm: the sample mask is [m].
func.func @f(%x: tensor<4x3xf32>, %g: tensor<3xf32>, %k: tensor<3xf32>) {
  // expected-error @below {{sample_mask must be [4], got 'tensor<3xf32>'}}
  %y = gacc.batch_norm %x, %g, %g mask %k running(@rm, @rv) : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// batch_norm: momentum in [0, 1], eps positive.
func.func @f(%x: tensor<4x3xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{momentum must be in [0, 1], got 1.5}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rv) {momentum = 1.5} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{eps must be positive}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rv) {eps = 0.0} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{running_mean and running_var must be two gacc.statistic tensors, got @rm twice}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rm) : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// batch_norm's running statistics in a training step: gacc.statistic
// tensors [C].
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @rm : tensor<4xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{running statistic @rm must be 'tensor<3xf32>', got 'tensor<4xf32>'}}
  %n = gacc.batch_norm %z, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %n, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The running variance starts where a variance can be: never below 0.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.normal<mean = 1.0, std = 0.1>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{running statistic @rv is a variance: its initializer #gacc.normal<mean = 1.000000e+00, std = 1.000000e-01> can be negative}}
  %n = gacc.batch_norm %z, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %n, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = -1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{running statistic @rv is a variance: its initializer #gacc.constant<value = -1.000000e+00> can be negative}}
  %n = gacc.batch_norm %z, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %n, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-error @below {{'w' does not name a gacc.statistic}}
  %n = gacc.batch_norm %z, %g, %g running(@w, @rv) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %n, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A statistic is a static f32 tensor with a gacc initializer.
// expected-error @below {{'gacc.statistic' op initializer must be #gacc.zeros}}
gacc.statistic @s : tensor<3xf32> = 1.0 : f32

// -----

// Adam's betas are in [0, 1).
func.func private @f() attributes {
  // expected-error @below {{#gacc.adam needs beta2 in [0, 1), got 1}}
  o = #gacc.adam<lr = 0.1, beta2 = 1.0>}

// -----

// A value in range that f32, where the step computes, rounds out of it:
// beta2 = 0.99999999999 is 1 in f32 (a bias correction of 0).
func.func private @f() attributes {
  // expected-error @below {{#gacc.adam needs beta2 in [0, 1), got 0.99999999999, which is 1 in f32, where the step computes}}
  o = #gacc.adam<lr = 0.1, beta2 = 0.99999999999>}

// -----

// A backoff that f32 rounds to 0 would zero the scale after one overflow.
func.func private @f() attributes {
  // expected-error @below {{#gacc.loss_scaling needs backoff_factor in (0, 1), got 1e-50, which is 0 in f32, where the step computes}}
  o = #gacc.loss_scaling<backoff_factor = 1.0e-50>}

// -----

// A growth that f32 rounds to 1 would never grow the scale.
func.func private @f() attributes {
  // expected-error @below {{#gacc.loss_scaling needs growth_factor in (1, inf), got 1.0000000001, which is 1 in f32}}
  o = #gacc.loss_scaling<growth_factor = 1.0000000001>}

// -----

// A dropout probability that f32 rounds to 1 (the kept values' scale
// 1 / (1 - p) would be infinite).
func.func @f(%x: tensor<2x7xf32>) {
  // expected-error @below {{p in [0, 1), got 0.99999999999, which is 1 in f32}}
  %y = gacc.dropout %x {p = 0.99999999999 : f64} : tensor<2x7xf32>
  return
}

// -----

// Adam's eps is positive.
func.func private @f() attributes {
  // expected-error @below {{#gacc.adamw needs eps > 0}}
  o = #gacc.adamw<lr = 0.1, eps = 0.0>}

// -----

// Lion's learning rate cannot be negative.
func.func private @f() attributes {
  // expected-error @below {{#gacc.lion needs lr >= 0}}
  o = #gacc.lion<lr = -1.0>}

// -----

// A schedule's decay is constant, cosine or linear.
func.func private @f() attributes {
  // expected-error @below {{#gacc.lr_schedule decay must be "constant", "cosine" or "linear", got "step"}}
  o = #gacc.lr_schedule<decay = "step", decay_steps = 3>}

// -----

// A decaying schedule needs its length.
func.func private @f() attributes {
  // expected-error @below {{#gacc.lr_schedule with decay "cosine" needs decay_steps > 0}}
  o = #gacc.lr_schedule<decay = "cosine">}

// -----

// max_grad_norm is positive.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{op needs max_grad_norm in (0, inf), got 0}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, max_grad_norm = 0.0 : f64} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// max_grad_norm is positive in f32: 1e-50 would be a clipping coefficient
// of 0, and no update.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{op needs max_grad_norm in (0, inf), got 1e-50, which is 0 in f32, where the step computes}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, max_grad_norm = 1.0e-50 : f64} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Adam has two state tensors per parameter.
func.func @f(%p: tensor<4xf32>, %n: f32, %k: i64) {
  // expected-error @below {{optimizer needs 2 state tensors, got 1}}
  %r:2 = gacc.apply_optimizer #gacc.adam<lr = 0.1> param(%p) accumulator(%p) state(%p) count(%n) lr(%n) step(%k) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Loss scaling needs a positive scale, growth above 1 and backoff in (0, 1).
func.func private @f() attributes {
  // expected-error @below {{#gacc.loss_scaling needs backoff_factor in (0, 1), got 2}}
  o = #gacc.loss_scaling<backoff_factor = 2.0>}

// -----

// The loss scale only exists inside a training step.
func.func @f() {
  // expected-error @below {{expects parent op 'gacc.train_step'}}
  %s = gacc.loss_scale : tensor<f32>
  return
}

// -----

// A schedule may not decay above the optimizer's rate.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{lr_schedule's min_lr (1.000000e+00) exceeds the optimizer's lr (1.000000e-01): a decay would raise the rate}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, lr_schedule = #gacc.lr_schedule<decay = "linear", decay_steps = 5, min_lr = 1.0>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A constant schedule has no decay settings.
func.func private @f() attributes {
  // expected-error @below {{#gacc.lr_schedule: decay_steps and min_lr need decay = "cosine" or "linear"}}
  o = #gacc.lr_schedule<decay_steps = 5>}

// -----

// Lion's betas are in [0, 1).
func.func private @f() attributes {
  // expected-error @below {{#gacc.lion needs beta1 in [0, 1)}}
  o = #gacc.lion<lr = 0.1, beta1 = 1.0>}

// -----

// all_reduce: the tensor form returns the reduced buffer.
func.func @f(%t: tensor<11xf32>) {
  // expected-error @below {{tensor form must return the reduced buffer}}
  gacc.all_reduce %t : tensor<11xf32>
  return
}

// -----

// all_reduce: the memref form reduces in place and has no result.
func.func @f(%m: memref<11xf32>) {
  // expected-error @below {{memref form has no result}}
  %r = gacc.all_reduce %m : memref<11xf32> -> tensor<11xf32>
  return
}

// -----

// all_reduce: the buffer is flat fp32.
func.func @f(%t: tensor<3x4xf32>) {
  // expected-error @below {{must be 1D tensor of 32-bit float values or 1D memref of 32-bit float values}}
  %r = gacc.all_reduce %t : tensor<3x4xf32> -> tensor<3x4xf32>
  return
}

// -----

// all_reduce: the host runtime reduces the buffer through a strided
// descriptor (a cast to one was invalid IR).
func.func @f(%m: memref<4xf32, affine_map<(d0) -> (d0 floordiv 2)>>) {
  // expected-error @below {{buffer must have a strided layout, got affine_map<(d0) -> (d0 floordiv 2)>}}
  gacc.all_reduce %m : memref<4xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  return
}

// -----

// all_reduce: the host runtime reduces the buffer: default memory space.
func.func @f(%m: memref<11xf32, 1>) {
  // expected-error @below {{buffer must be in the default memory space, got 1 : i64}}
  gacc.all_reduce %m : memref<11xf32, 1>
  return
}

// -----

// phase_begin is a marker: it takes no operands and has no results.
func.func @f(%x: f32) {
  // expected-error @below {{'gacc.phase_begin' op requires zero operands}}
  "gacc.phase_begin"(%x) {phase = 1 : i32} : (f32) -> ()
  return
}

// -----

// A phase the enum does not have.
func.func @f() {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'phase' [forward, backward, update]}}
  gacc.phase_begin sideways
  return
}

// -----

// In a differentiated step's body only the backward is marked: the
// micro-batch's forward and the update are expand-accumulation's.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  // expected-error @below {{'gacc.phase_begin' op marks the update in a training step's body; gacc-expand-accumulation places the forward and update markers around the body, which marks only its backward (gacc-autodiff's marker)}}
  gacc.phase_begin update
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  %g = arith.constant dense<0.0> : tensor<3x4xf32>
  gacc.yield %l, %g : tensor<f32>, tensor<3x4xf32>
}

// -----

// The same in a model's body: the marker is expand-accumulation's, not
// autodiff's.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  // expected-error @below {{'gacc.phase_begin' op marks the forward in a training step's body; gacc-expand-accumulation places}}
  gacc.phase_begin forward
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// One backward: a second marker (the first before every forward op) would
// leave the checks of the forward nothing to inspect.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  gacc.phase_begin backward
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  // expected-error @below {{'gacc.phase_begin' op begins a second backward; gacc-autodiff places one, after the forward}}
  gacc.phase_begin backward
  %g = arith.constant dense<0.0> : tensor<3x4xf32>
  gacc.yield %l, %g : tensor<f32>, tensor<3x4xf32>
}

// -----

// The backward begins after the loss: the forward is the model.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  // expected-error @below {{'gacc.phase_begin' op begins the backward before the loss it differentiates (at}}
  gacc.phase_begin backward
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  %g = arith.constant dense<0.0> : tensor<3x4xf32>
  gacc.yield %l, %g : tensor<f32>, tensor<3x4xf32>
}

// -----

// recompute_inputs passes at least one value.
func.func @f() {
  // expected-error @below {{'gacc.recompute_inputs' op needs at least one input}}
  "gacc.recompute_inputs"() : () -> ()
  return
}

// -----

// recompute_inputs returns its operands' types, one for one.
func.func @f(%x: tensor<4xf32>) {
  // expected-error @below {{'gacc.recompute_inputs' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @below {{'gacc.recompute_inputs' op failed to infer returned types}}
  %k = "gacc.recompute_inputs"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

// conv2d: the input channels are the weight's times the groups.
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @below {{input has 4 channels but the weight expects 3 × 1 groups (weight layout is [O, C / groups, KH, KW])}}
  %y = gacc.conv2d %x, %w : tensor<2x4x8x8xf32>, tensor<6x3x3x3xf32> -> tensor<2x6x6x6xf32>
  return
}

// -----

// conv2d: groups divide both channel counts.
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @below {{groups (4) must be at least 1 and divide the 4 input and 6 output channels}}
  %y = gacc.conv2d %x, %w {groups = 4 : i64} : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x6x6xf32>
  return
}

// -----

// conv2d: the result has torch's output size.
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @below {{result must be 'tensor<2x6x3x3xf32>', got 'tensor<2x6x4x4xf32>'}}
  %y = gacc.conv2d %x, %w {stride = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x4x4xf32>
  return
}

// -----

// conv2d: a kernel larger than the padded input.
func.func @f(%x: tensor<2x4x2x2xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @below {{the 3×3 kernel does not fit the padded 2×2 input}}
  %y = gacc.conv2d %x, %w : tensor<2x4x2x2xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x0x0xf32>
  return
}

// -----

// conv2d: strides are positive.
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @below {{stride must be at least 1 in each dimension, got [0, 1]}}
  %y = gacc.conv2d %x, %w {stride = array<i64: 0, 1>} : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x6x6xf32>
  return
}

// -----

// conv2d: a bias per output channel.
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @below {{bias must be [6], got 'tensor<4xf32>'}}
  %y = gacc.conv2d %x, %w bias %b : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<4xf32> -> tensor<2x6x6x6xf32>
  return
}

// -----

// conv2d: NCHW input.
func.func @f(%x: tensor<2x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @below {{input must be rank 4 [N, C, H, W], got 'tensor<2x8x8xf32>'}}
  %y = gacc.conv2d %x, %w : tensor<2x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x6x6xf32>
  return
}

// -----

// max_pool2d: padding at most half the kernel, as torch.
func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @below {{padding must be at most half the kernel, got [2, 0] for a kernel of [2, 2]}}
  %y = gacc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 2, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x6x4xf32>
  return
}

// -----

// avg_pool2d: the result has torch's output size (stride defaults to the kernel).
func.func @f(%x: tensor<2x4x9x9xf32>) {
  // expected-error @below {{result must be 'tensor<2x4x4x4xf32>', got 'tensor<2x4x5x5xf32>'}}
  %y = gacc.avg_pool2d %x {kernel = array<i64: 2, 2>} : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
  return
}

// -----

// max_pool2d: a kernel of two sizes.
func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @below {{failed to satisfy constraint}}
  %y = gacc.max_pool2d %x {kernel = array<i64: 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return
}

// -----

// global_avg_pool2d: [N, C, H, W] to [N, C].
func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @below {{result must be 'tensor<2x4xf32>', got 'tensor<2x4x1x1xf32>'}}
  %y = gacc.global_avg_pool2d %x : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  return
}

// -----

// group_norm: the groups divide the channels.
func.func @f(%x: tensor<2x6x4x4xf32>, %g: tensor<6xf32>) {
  // expected-error @below {{num_groups (4) must be at least 1 and divide the 6 channels}}
  %y = gacc.group_norm %x, %g, %g {num_groups = 4 : i64} : tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>
  return
}

// -----

// group_norm: a weight per channel.
func.func @f(%x: tensor<2x6x4x4xf32>, %g: tensor<6xf32>, %w: tensor<3xf32>) {
  // expected-error @below {{weight must be [6], got 'tensor<3xf32>'}}
  %y = gacc.group_norm %x, %w, %g {num_groups = 3 : i64} : tensor<2x6x4x4xf32>, tensor<3xf32>, tensor<6xf32>
  return
}

// -----

// attention: query, key and value of one shape.
func.func @f(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x6x4xf32>) {
  // expected-error @below {{key must have the query's shape 'tensor<2x2x5x4xf32>', got 'tensor<2x2x6x4xf32>'}}
  %o = gacc.attention %q, %k, %k : tensor<2x2x5x4xf32>, tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32>
  return
}

// -----

// attention: [m, heads, positions, head size].
func.func @f(%q: tensor<2x5x4xf32>) {
  // expected-error @below {{query must be rank 4 [m, heads, positions, head size], got 'tensor<2x5x4xf32>'}}
  %o = gacc.attention %q, %q, %q : tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return
}

// -----

// attention: a positive scale.
func.func @f(%q: tensor<2x2x5x4xf32>) {
  // expected-error @below {{scale must be positive and finite in f32, got 0}}
  %o = gacc.attention %q, %q, %q {scale = 0.0 : f64} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  return
}

// -----

// attention: at least one query row per block.
func.func @f(%q: tensor<2x2x5x4xf32>) {
  // expected-error @below {{attribute 'query_block' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %o = gacc.attention %q, %q, %q {query_block = 0 : i64} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  return
}

// -----

// attention_backward: the output's adjoint of the query's shape.
func.func @f(%q: tensor<2x2x5x4xf32>, %o: tensor<2x2x5x8xf32>) {
  // expected-error @below {{output_grad must have the query's shape 'tensor<2x2x5x4xf32>', got 'tensor<2x2x5x8xf32>'}}
  %g:3 = gacc.attention_backward %q, %q, %q, %q, %o : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x8xf32>
  return
}

// -----

// attention_backward: a positive scale.
func.func @f(%q: tensor<2x2x5x4xf32>) {
  // expected-error @below {{scale must be positive and finite in f32, got -1}}
  %g:3 = gacc.attention_backward %q, %q, %q, %q, %q {scale = -1.0 : f64} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  return
}

// -----

// fused_attention: bf16 or fp16 operands.
func.func @f(%q: tensor<2x2x5x16xf32>, %l: tensor<2x2x5x1xf32>) {
  // expected-error @below {{operand #0 must be}}
  %f:2 = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32> into tensor<2x2x5x16xf32>, tensor<2x2x5x1xf32> -> tensor<2x2x5x16xf32>, tensor<2x2x5x1xf32>
  return
}

// -----

// fused_attention: statistics [m, heads, positions, 1].
func.func @f(%q: tensor<2x2x5x16xbf16>, %l: tensor<2x2x5x16xf32>) {
  // expected-error @below {{stats must be [m, heads, positions, 1] for a 'tensor<2x2x5x16xbf16>' query, got 'tensor<2x2x5x16xf32>'}}
  %f:2 = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16> into tensor<2x2x5x16xbf16>, tensor<2x2x5x16xf32> -> tensor<2x2x5x16xbf16>, tensor<2x2x5x16xf32>
  return
}

// -----

// fused_attention: rank 4.
func.func @f(%q: tensor<2x5x16xbf16>, %l: tensor<2x5x1xf32>) {
  // expected-error @below {{query must be rank 4 [m, heads, positions, head size], got 'tensor<2x5x16xbf16>'}}
  %f:2 = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<2x5x16xbf16>, tensor<2x5x16xbf16>, tensor<2x5x16xbf16> into tensor<2x5x16xbf16>, tensor<2x5x1xf32> -> tensor<2x5x16xbf16>, tensor<2x5x1xf32>
  return
}

// -----

// fused_attention: one kind of operand.
func.func @f(%q: tensor<2x2x5x16xbf16>, %l: memref<2x2x5x1xf32>) {
  // expected-error @below {{operands must be all tensors or all memrefs}}
  gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16> into tensor<2x2x5x16xbf16>, memref<2x2x5x1xf32>
  return
}

// -----

// fused_attention: the inits' results on tensors.
func.func @f(%q: tensor<2x2x5x16xbf16>, %l: tensor<2x2x5x1xf32>) {
  // expected-error @below {{results must be of the inits' types}}
  %f = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16> into tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32> -> tensor<2x2x5x16xbf16>
  return
}

// -----

// fused_attention: no results on memrefs.
func.func @f(%q: memref<2x2x5x16xbf16>, %l: memref<2x2x5x1xf32>) {
  // expected-error @below {{has results on memrefs}}
  %f = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : memref<2x2x5x16xbf16>, memref<2x2x5x16xbf16>, memref<2x2x5x16xbf16> into memref<2x2x5x16xbf16>, memref<2x2x5x1xf32> -> tensor<2x2x5x16xbf16>
  return
}

// -----

// fused_attention_backward: one element type and shape for every bf16
// operand.
func.func @f(%q: tensor<2x2x5x16xbf16>, %h: tensor<2x2x5x16xf16>, %l: tensor<2x2x5x1xf32>) {
  // expected-error @below {{output_grad must have the query's shape and element type 'tensor<2x2x5x16xbf16>', got 'tensor<2x2x5x16xf16>'}}
  %g:3 = "gacc.fused_attention_backward"(%q, %q, %q, %q, %h, %l, %q, %q, %q) {scale = 0.25 : f64} : (tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xf16>, tensor<2x2x5x1xf32>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>) -> (tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>)
  return
}

// -----

// fused_attention_backward: a positive scale.
func.func @f(%q: tensor<2x2x5x16xbf16>, %l: tensor<2x2x5x1xf32>) {
  // expected-error @below {{scale must be positive and finite in f32, got 1.000000e+300}}
  %g:3 = "gacc.fused_attention_backward"(%q, %q, %q, %q, %q, %l, %q, %q, %q) {scale = 1.0e300 : f64} : (tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>) -> (tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>)
  return
}

// -----

// softmax: a dimension to normalize over.
func.func @f(%s: tensor<f32>) {
  // expected-error @below {{needs a dimension to normalize over (rank >= 1)}}
  %p = gacc.softmax %s : tensor<f32>
  return
}

// -----

// train_step: the moving average's decay is in [0, 1).
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
// expected-error @below {{op needs ema_decay in [0, 1), got 1}}
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>, ema_decay = 1.0 : f64} {
^bb0(%w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// conv2d: a kernel of no size has no window.
func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<2x1x0x3xf32>) {
  // expected-error @below {{weight must not have an empty dimension, got 'tensor<2x1x0x3xf32>'}}
  %y = gacc.conv2d %x, %w : tensor<1x1x4x4xf32>, tensor<2x1x0x3xf32> -> tensor<1x2x5x2xf32>
  return
}

// -----

// global_avg_pool2d: a mean over no positions.
func.func @f(%x: tensor<2x4x0x3xf32>) {
  // expected-error @below {{input must not have an empty dimension, got 'tensor<2x4x0x3xf32>'}}
  %y = gacc.global_avg_pool2d %x : tensor<2x4x0x3xf32> -> tensor<2x4xf32>
  return
}

// -----

// batch_norm needs more than one value per channel (torch's rule).
func.func @f(%x: tensor<1x3xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{needs more than one value per channel (dimension 0 times the spatial ones), got 'tensor<1x3xf32>'}}
  %y = gacc.batch_norm %x, %g, %g running(@rm, @rv) : tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// A gacc.statistic belongs to one op.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  // expected-note @below {{kept by this op first}}
  %n = gacc.batch_norm %z, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  // expected-error @below {{running statistic @rm is already kept by another op of the step; each gacc.statistic belongs to one op}}
  %m = gacc.batch_norm %n, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = gacc.cross_entropy %m, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A statistic two ops share that does not fit one of them: the channel
// count is the error, at the op it does not fit.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.zeros
gacc.param @w2 : tensor<5x3xf32> = #gacc.zeros
gacc.param @g2 : tensor<5xf32> = #gacc.zeros
gacc.statistic @rm : tensor<3xf32> = #gacc.zeros
gacc.statistic @rv : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.statistic @rv2 : tensor<5xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@w, @g, @w2, @g2] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %g: tensor<3xf32>, %w2: tensor<5x3xf32>, %g2: tensor<5xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %n = gacc.batch_norm %z, %g, %g running(@rm, @rv) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %z2 = gacc.linear %n, %w2 : tensor<4x3xf32>, tensor<5x3xf32> -> tensor<4x5xf32>
  // expected-error @below {{running statistic @rm must be 'tensor<5xf32>', got 'tensor<3xf32>'}}
  %m = gacc.batch_norm %z2, %g2, %g2 running(@rm, @rv2) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x5xf32>, tensor<5xf32>, tensor<5xf32>
  %l = gacc.cross_entropy %m, %y : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A misspelt unit attribute is an error, not a trainable parameter.
// expected-error @below {{'gacc.param' op has no attribute 'frozn' (it takes frozen, initializer, no_weight_decay, sym_name, type)}}
gacc.param @w : tensor<3x2xf32> = #gacc.zeros {frozn}

// -----

// linear_cross_entropy: the input is [batch, in] or [batch, sequence, in].
func.func @f(%x: tensor<2x3x5x4xf32>, %w: tensor<7x4xf32>, %y: tensor<2x3x5xi32>) {
  // expected-error @below {{input must be rank 2 [batch, in_features] or 3 [batch, sequence, in_features], got 'tensor<2x3x5x4xf32>'}}
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<2x3x5x4xf32>, tensor<7x4xf32>, tensor<2x3x5xi32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: in-features that differ.
func.func @f(%x: tensor<2x5xf32>, %w: tensor<7x4xf32>, %y: tensor<2xi32>) {
  // expected-error @below {{input has 5 features but weight expects 4 (weight layout is [classes, in])}}
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<2x5xf32>, tensor<7x4xf32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: a weight of rank 2.
func.func @f(%x: tensor<2x4xf32>, %w: tensor<7x4x1xf32>, %y: tensor<2xi32>) {
  // expected-error @below {{weight must be rank 2 [classes, in_features], got 'tensor<7x4x1xf32>'}}
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<2x4xf32>, tensor<7x4x1xf32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: a bias per class.
func.func @f(%x: tensor<2x4xf32>, %w: tensor<7x4xf32>, %b: tensor<4xf32>, %y: tensor<2xi32>) {
  // expected-error @below {{bias must be [7], got 'tensor<4xf32>'}}
  %l = gacc.linear_cross_entropy %x, %w, %y bias %b : tensor<2x4xf32>, tensor<7x4xf32>, tensor<2xi32>, tensor<4xf32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: one label per row of the input.
func.func @f(%x: tensor<2x5x4xf32>, %w: tensor<7x4xf32>, %y: tensor<2x4xi32>) {
  // expected-error @below {{labels must have the input's shape without the feature dimension, got 'tensor<2x4xi32>' for input 'tensor<2x5x4xf32>'}}
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<2x5x4xf32>, tensor<7x4xf32>, tensor<2x4xi32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: a label smoothing in [0, 1].
func.func @f(%x: tensor<2x4xf32>, %w: tensor<7x4xf32>, %y: tensor<2xi32>) {
  // expected-error @below {{label_smoothing must be in [0, 1], got 1.5}}
  %l = gacc.linear_cross_entropy %x, %w, %y {label_smoothing = 1.5 : f64} : tensor<2x4xf32>, tensor<7x4xf32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: at least one row per block.
func.func @f(%x: tensor<2x4xf32>, %w: tensor<7x4xf32>, %y: tensor<2xi32>) {
  // expected-error @below {{attribute 'row_block' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %l = gacc.linear_cross_entropy %x, %w, %y {row_block = 0 : i64} : tensor<2x4xf32>, tensor<7x4xf32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

// linear_cross_entropy: at least one row, feature and class.
func.func @f(%x: tensor<0x4xf32>, %w: tensor<7x4xf32>, %y: tensor<0xi32>) {
  // expected-error @below {{needs at least one row, feature and class, got input 'tensor<0x4xf32>' and weight 'tensor<7x4xf32>'}}
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<0x4xf32>, tensor<7x4xf32>, tensor<0xi32> -> tensor<f32>
  return
}

// -----

// A dilated kernel larger than the padded input: the message gives both
// sizes.
func.func @f(%x: tensor<2x4x6x6xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @below {{the 3×3 kernel (7×7 dilated) does not fit the padded 6×6 input}}
  %y = gacc.conv2d %x, %w {dilation = array<i64: 3, 3>} : tensor<2x4x6x6xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x0x0xf32>
  return
}

// -----

// Sizes that overflow int64 are refused, not wrapped into a shape.
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @below {{padding [9223372036854775807, 0] or dilation [1, 1] overflows int64 sizes}}
  %y = gacc.conv2d %x, %w {padding = array<i64: 9223372036854775807, 0>} : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x6x6xf32>
  return
}

// -----

// A pooling window's taps are unrolled one slice each: at most 1024.
func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @below {{the 9223372036854775807×2 window has more than 1024 taps, the most one op unrolls (one slice each)}}
  %y = gacc.max_pool2d %x {kernel = array<i64: 9223372036854775807, 2>, padding = array<i64: 4611686018427387903, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x1x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x1x1x1xf32>) {
  // expected-error @below {{the 100000×1 window has more than 1024 taps}}
  %y = gacc.avg_pool2d %x {kernel = array<i64: 100000, 1>, padding = array<i64: 50000, 0>} : tensor<2x1x1x1xf32> -> tensor<2x1x1x1xf32>
  return
}

// -----

// Attention's query blocks are unrolled: at most 64 per op.
func.func @f(%q: tensor<1x1x128x8xf32>) {
  // expected-error @below {{query_block 1 cuts the 128 positions into 128 blocks, more than the 64 one op unrolls; give query_block ≥ 2}}
  %o = gacc.attention %q, %q, %q {causal, query_block = 1 : i64} : tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>
  return
}

// -----

// linear_cross_entropy's row blocks: at most 128 per op.
func.func @f(%x: tensor<2048x4xf32>, %w: tensor<3x4xf32>, %y: tensor<2048xi32>) {
  // expected-error @below {{row_block 8 cuts the 2048 rows into 256 blocks, more than the 128 one op unrolls; give row_block ≥ 16}}
  %l = gacc.linear_cross_entropy %x, %w, %y {row_block = 8 : i64} : tensor<2048x4xf32>, tensor<3x4xf32>, tensor<2048xi32> -> tensor<f32>
  return
}

// -----

// A misspelt attribute is an error on every gacc op, not a no-op.
func.func @f(%q: tensor<1x1x4x8xf32>) {
  // expected-error @below {{'gacc.attention' op has no attribute 'casual' (it takes causal, query_block, scale)}}
  %o = gacc.attention %q, %q, %q {casual} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return
}

// -----

gacc.param @w : tensor<3x4xf32> = #gacc.zeros
// expected-error @below {{has no attribute 'max_grad_nrom'}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, max_grad_nrom = 1.0 : f64} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// ignore_index is compared in the labels' type: it must be one of its
// values (2^32 would wrap onto class 0).
func.func @f(%z: tensor<2x3xf32>, %y: tensor<2xi32>) {
  // expected-error @below {{ignore_index 4294967296 is not a value of the labels' element type 'i32'}}
  %l = gacc.cross_entropy %z, %y {ignore_index = 4294967296 : i64} : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  return
}

// -----

// gacc.loss_scale is the scale of a step with loss_scaling.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  // expected-error @below {{reads the dynamic loss scale of a step with loss_scaling; this step has none}}
  %s = gacc.loss_scale : tensor<f32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The backward is gacc-autodiff's: a model's body does not mark it.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  // expected-error @below {{is built by gacc-autodiff into the backward; a model does not write it}}
  gacc.phase_begin backward
  gacc.yield %l : tensor<f32>
}

// -----

// A body yields its loss (the generic form can yield nothing).
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  // expected-error @below {{must yield the micro-batch loss (tensor<f32>), got no values}}
  "gacc.yield"() : () -> ()
}

// -----

// accum_steps × micro_batch within int64.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
// expected-error @below {{accum_steps × micro_batch (4611686018427387904 × 4) overflows int64}}
gacc.train_step @s params [@w] attributes {accum_steps = 4611686018427387904 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A window of inputs is one buffer: within the size limit too.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
// expected-error @below {{the window of input #0 ('tensor<1099511627776x4x4xf32>') is larger than 1024 GiB}}
gacc.train_step @s params [@w] attributes {accum_steps = 1099511627776 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Values applied in f32 are finite there.
func.func @f(%x: tensor<4x3xf32>, %g: tensor<3xf32>) {
  // expected-error @below {{eps must be positive, finite and normal in f32, got 1.000000e+300}}
  %y = gacc.layer_norm %x, %g, %g {eps = 1.0e300 : f64} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// expected-error @below {{#gacc.constant needs a finite value (in f32), got 1.000000e+300}}
gacc.param @p : tensor<2xf32> = #gacc.constant<value = 1.0e300>

// -----

// A nonzero value that f32 rounds to 0 is refused, not silently zero.
// expected-error-re @below {{#gacc.constant needs value to be a value that f32 holds, got 1.000000e-50, which rounds to 0 in f32{{$}}}}
gacc.param @p : tensor<2xf32> = #gacc.constant<value = 1.0e-50>

// -----

// A hexadecimal literal holds the bits of an f64: 0x3F800000 is 5.3e-315,
// not 1.0.
// expected-error @below {{#gacc.constant needs value to be a value that f32 holds, got 5.263544e-315, which rounds to 0 in f32 (a hexadecimal literal holds the bits of an f64)}}
gacc.param @p : tensor<2xf32> = #gacc.constant<value = 0x3F800000>

// -----

gacc.param @w : tensor<3x4xf32> = #gacc.zeros
// expected-error @below {{#gacc.sgd needs a finite lr (in f32), got 1.000000e+300}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 1.0e300>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

gacc.param @w : tensor<3x4xf32> = #gacc.zeros
// expected-error @below {{#gacc.sgd needs dampening in [0, 1], got 2}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9, dampening = 2.0>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// tensor.expand_shape's static output_shape must be its result's shape
// (its own verifier does not compare them).
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  // expected-error @below {{'tensor.expand_shape' op output_shape[2] is 3 but the result type 'tensor<2x2x2xf32>' has 2}}
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x4xf32> into tensor<2x2x2xf32>
  %c = tensor.collapse_shape %e [[0], [1, 2]] : tensor<2x2x2xf32> into tensor<2x4xf32>
  %z = gacc.linear %c, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// An unknown enum keyword is one error that lists the valid ones (the
// parser ODS generates adds a second; -verify-diagnostics fails on it).
// expected-error @below {{unknown value 'avg', expected one of: mean, sum, token_mean}}
gacc.train_step @s params [] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<avg>, optimizer = #gacc.sgd<lr = 0.1>} {
}

// -----

// expected-error @below {{unknown value 'fp8', expected one of: fp32, bf16, fp16}}
func.func private @f() attributes {p = #gacc.precision<fp8>}

// -----

// expected-error @below {{unknown value 'per_step', expected one of: per_micro_batch, per_window}}
func.func private @f() attributes {b = #gacc.batch_statistics<per_step>}

// -----

// Loss targets computed in the body (the next tokens cut out of the
// sequence input): the runtime fills and pads an input of the body.
gacc.param @wte : tensor<7x4xf32> = #gacc.zeros
gacc.train_step @s params [@wte] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%wte: tensor<7x4xf32>, %seq: tensor<2x5xi32>):
  %tokens = tensor.extract_slice %seq[0, 0] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
  %next = tensor.extract_slice %seq[0, 1] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
  %e = gacc.embedding %tokens, %wte : tensor<2x4xi32>, tensor<7x4xf32> -> tensor<2x4x4xf32>
  %z = gacc.linear %e, %wte : tensor<2x4x4xf32>, tensor<7x4xf32> -> tensor<2x4x7xf32>
  // expected-error @below {{'gacc.cross_entropy' op takes its targets from a value computed in the body; they must be an input of the body (a block argument after the parameters)}}
  %l = gacc.cross_entropy %z, %next : tensor<2x4x7xf32>, tensor<2x4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The step's name names its compiled functions and GPU kernels: an
// identifier (a '-' aborted the NVPTX printer).
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{op name @"my-step" must be an identifier (letters, digits and '_', not starting with a digit)}}
gacc.train_step @"my-step" params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A dynamic shape in the body is a tensor.cast's, cast back before any
// other op reads it: the adjoints and buffers are built for static shapes
// (gacc-autodiff made a tensor.empty without its dynamic sizes).
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %c = tensor.cast %w : tensor<4x3xf32> to tensor<?x3xf32>
  // expected-error @below {{'math.exp' op reads the dynamic shape 'tensor<?x3xf32>' of a tensor.cast; a training step computes on static shapes: cast it back first}}
  %e = math.exp %c : tensor<?x3xf32>
  %d = tensor.cast %e : tensor<?x3xf32> to tensor<4x3xf32>
  %h = arith.mulf %d, %x : tensor<4x3xf32>
  %l = gacc.cross_entropy %h, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Cast back to the shape it came from: 4x3 through ?x3 to 5x3 verified,
// and the 5x3 gradient was then cast to the 4x3 parameter.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x3xf32>, %y: tensor<5xi32>):
  %c = tensor.cast %w : tensor<4x3xf32> to tensor<?x3xf32>
  // expected-error @below {{'tensor.cast' op casts 'tensor<4x3xf32>' through 'tensor<?x3xf32>' to 'tensor<5x3xf32>'; a training step casts a dynamic shape back to the type it came from}}
  %d = tensor.cast %c : tensor<?x3xf32> to tensor<5x3xf32>
  %h = arith.mulf %d, %x : tensor<5x3xf32>
  %l = gacc.cross_entropy %h, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A chain of casts (4x3 -> ?x3 -> ?x? -> 4x3 is a round trip) is held to
// the static type it started from.
gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 5 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x3xf32>, %y: tensor<5xi32>):
  %c = tensor.cast %w : tensor<4x3xf32> to tensor<?x3xf32>
  %e = tensor.cast %c : tensor<?x3xf32> to tensor<?x?xf32>
  // expected-error @below {{'tensor.cast' op casts 'tensor<4x3xf32>' through 'tensor<?x?xf32>' to 'tensor<5x3xf32>'}}
  %d = tensor.cast %e : tensor<?x?xf32> to tensor<5x3xf32>
  %h = arith.mulf %d, %x : tensor<5x3xf32>
  %l = gacc.cross_entropy %h, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = arith.addi %c0, %c2 : index
  // expected-error @below {{result #0 has the dynamic shape 'tensor<?x3xf32>'; a training step computes on static shapes (only a tensor.cast may make one, to be cast back)}}
  %s = tensor.extract_slice %w[0, 0] [%n, 3] [1, 1] : tensor<4x3xf32> to tensor<?x3xf32>
  %l = gacc.cross_entropy %x, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The seed is a non-negative number, as --seed (which overrides it).
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// expected-error @below {{seed must be >= 0, got -7}}
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 4 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, seed = -7 : i64} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A loss scaled after the loss op: the hint names normalization and the
// learning rate as well as added terms.
gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {accum_steps = 2 : i64, micro_batch = 2 : i64, normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  %h = arith.constant dense<0.5> : tensor<f32>
  %s = arith.mulf %l, %h : tensor<f32>
  // expected-error @below {{it is the result of 'arith.mulf' (nothing is computed on the loss op's result: a term added is not supported, weight decay is the optimizer's; the loss's normalization is the step's `normalization`, its scale the learning rate's)}}
  gacc.yield %s : tensor<f32>
}
