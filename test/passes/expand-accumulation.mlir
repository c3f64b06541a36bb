// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation=unroll | FileCheck %s --check-prefix=UNROLL

// A differentiated step (its gradient is a stand-in: any value of the
// parameter's type) becomes the step function: state as memrefs (parameter,
// accumulator, momentum), the window's inputs with a leading N = 3, then lr
// and step. The loop runs the body per micro-batch slice, accumulates with
// `first` = (i == 0) and adds the micro-batch's count of non-ignored
// targets; after the loop one apply_optimizer divides by that run-time
// count (at least 1), and the step returns Σ loss / count, the window's
// count (0 when it holds no target), the learning rate used and the global
// gradient norm.

gacc.param @w : tensor<3x2xf32> = #gacc.kaiming_uniform<fan_in = 2>
// CHECK-NOT: gacc.param @
// CHECK-LABEL: func.func @s(
// CHECK-SAME: %[[P:.+]]: memref<3x2xf32> {gacc.initializer = #gacc.kaiming_uniform<fan_in = 2>, gacc.param = @w}
// CHECK-SAME: %[[ACC:.+]]: memref<3x2xf32> {gacc.accumulator = @w}
// CHECK-SAME: %[[MOM:.+]]: memref<3x2xf32> {gacc.optimizer_state = @w}
// CHECK-SAME: %[[X:.+]]: memref<3x4x2xf32> {gacc.window_input = 0 : i64}
// CHECK-SAME: %[[Y:.+]]: memref<3x4xi32> {gacc.window_input = 1 : i64}
// CHECK-SAME: %[[LR:[^:]+]]: f32, %[[STEP:[^:]+]]: i64, %[[FIRST:[^:]+]]: i64) -> (f32, f32, f32, f32)
// CHECK: %[[PT:.+]] = bufferization.to_tensor %[[P]] restrict writable
// CHECK: %[[ACCT:.+]] = bufferization.to_tensor %[[ACC]] restrict writable
// CHECK: %[[MOMT:.+]] = bufferization.to_tensor %[[MOM]] restrict writable
// CHECK: %[[XT:.+]] = bufferization.to_tensor %[[X]] restrict :
// CHECK: %[[R:.+]]:3 = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[ACCT]], %[[LS:.+]] = %{{.+}}, %[[CNT:.+]] = %{{.+}})
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[I]], %{{.+}} : index
// Each micro-batch starts with the forward marker; the optimizer step after
// the loop with the update marker (the memory plan's phases).
// CHECK: gacc.phase_begin forward
// CHECK: %[[XS:.+]] = tensor.extract_slice %[[XT]][%[[I]], 0, 0] [1, 4, 2] [1, 1, 1] : tensor<3x4x2xf32> to tensor<4x2xf32>
// CHECK: gacc.linear %[[XS]], %[[PT]]
// CHECK: %[[NA:.+]] = gacc.accumulate %[[PT]] into %[[A]] first %[[FIRST]] : tensor<3x2xf32>
// CHECK: %[[LSUM:.+]] = arith.addf %[[LS]], %{{.+}} : f32
// CHECK: %[[NC:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4xi32>) outs(%{{.+}} : tensor<f32>)
// CHECK: arith.cmpi eq, %{{.+}}, %c-100_i32
// CHECK: %[[N:.+]] = tensor.extract %[[NC]][]
// CHECK: %[[CSUM:.+]] = arith.addf %[[CNT]], %[[N]] : f32
// CHECK: scf.yield %[[NA]], %[[LSUM]], %[[CSUM]] : tensor<3x2xf32>, f32, f32
// CHECK: gacc.phase_begin update
// CHECK: %[[COUNT:.+]] = arith.maximumf %[[R]]#2, %{{.+}} : f32
// The global gradient norm: Σ (acc / count)² in f64, then its square root.
// CHECK: %[[INV:.+]] = arith.divf %{{.+}}, %[[COUNT]] : f32
// CHECK: linalg.generic {{.+}} ins(%[[R]]#0 : tensor<3x2xf32>) outs(%{{.+}} : tensor<f64>)
// CHECK: %[[SQ:.+]] = math.sqrt
// CHECK: %[[NORM:.+]] = arith.truncf %[[SQ]] : f64 to f32
// CHECK: %[[NP:.+]], %[[NS:.+]] = gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01, momentum = 9.000000e-01> param(%[[PT]]) accumulator(%[[R]]#0) state(%[[MOMT]]) count(%[[COUNT]]) lr(%[[LR]]) step(%[[STEP]])
// CHECK: bufferization.materialize_in_destination %[[NP]] in restrict writable %[[P]]
// CHECK: bufferization.materialize_in_destination %[[NS]] in restrict writable %[[MOM]]
// CHECK: bufferization.materialize_in_destination %[[R]]#0 in restrict writable %[[ACC]]
// CHECK: %[[OBJ:.+]] = arith.divf %[[R]]#1, %[[COUNT]] : f32
// CHECK: return %[[OBJ]], %[[R]]#2, %[[LR]], %[[NORM]] : f32, f32, f32, f32
// CHECK-LABEL: func.func @s_predict(
// CHECK-SAME: %{{.+}}: memref<3x2xf32>, %{{.+}}: memref<4x2xf32>, %[[OUT:.+]]: memref<4x3xf32>)
// CHECK: %[[Z:.+]] = gacc.linear
// CHECK-NOT: gacc.cross_entropy
// CHECK: bufferization.materialize_in_destination %[[Z]] in restrict writable %[[OUT]]


// UNROLL-LABEL: func.func @s(
// UNROLL-NOT: scf.for
// UNROLL: gacc.phase_begin forward
// UNROLL: gacc.accumulate %{{.+}} into %{{.+}} first %true
// UNROLL: gacc.phase_begin forward
// UNROLL: gacc.accumulate %{{.+}} into %{{.+}} first %false
// UNROLL: gacc.accumulate %{{.+}} into %{{.+}} first %false
// UNROLL-NOT: gacc.accumulate
// UNROLL: gacc.apply_optimizer
gacc.train_step @s params [@w] attributes {
    accum_steps = 3 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}

// -----

// Plain SGD has no optimizer state: no state argument, no state operand.
// With `sum` normalization no count is carried: the update divides by 1.

gacc.param @b : tensor<4xf32> = #gacc.zeros
// CHECK-LABEL: func.func @nostate(
// CHECK-SAME: %{{.+}}: memref<4xf32> {gacc.initializer = #gacc.zeros, gacc.param = @b}, %{{.+}}: memref<4xf32> {gacc.accumulator = @b}, %{{.+}}: memref<2x4x4xf32> {gacc.window_input = 0 : i64}
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01> param(%{{.+}}) accumulator(%{{.+}}) count(%[[ONE]])
gacc.train_step @nostate params [@b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%b: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %z = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %b : tensor<f32>, tensor<4xf32>
}

// -----

// A schedule, clipping and a parameter without weight decay: the rate is
// computed once from the step index after the micro-batches (cosine decay
// after a warmup), the
// clipping coefficient min(1, max_norm / (norm + 1e-6)) once from the
// global norm, and both reach the update.

gacc.param @b : tensor<4xf32> = #gacc.zeros {no_weight_decay}
// CHECK-LABEL: func.func @sched(
// CHECK-SAME: %[[LR0:[^:]+]]: f32, %[[STEP:[^:]+]]: i64, %{{[^:]+}}: i64) -> (f32, f32, f32, f32)
// CHECK: scf.for
// CHECK: %[[T:.+]] = arith.sitofp %[[STEP]] : i64 to f32
// CHECK: math.cos
// CHECK: %[[LR:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: %[[NORM:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[DEN:.+]] = arith.addf %[[NORM]], %{{.+}} : f32
// CHECK: %[[Q:.+]] = arith.divf %{{.+}}, %[[DEN]] : f32
// CHECK: %[[CLIP:.+]] = arith.minimumf %{{.+}}, %[[Q]] : f32
// CHECK: gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01> param(%{{.+}}) accumulator(%{{.+}}) count(%{{.+}}) clip(%[[CLIP]]) lr(%[[LR]]) step(%[[STEP]]) {no_weight_decay}
// CHECK: return %{{.+}}, %{{.+}}, %[[LR]], %[[NORM]]
gacc.train_step @sched params [@b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    lr_schedule = #gacc.lr_schedule<warmup_steps = 2, decay = "cosine", decay_steps = 8>,
    max_grad_norm = 2.0 : f64} {
^bb0(%b: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %z = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %b : tensor<f32>, tensor<4xf32>
}

// -----

// fp16 with loss scaling: the parameters are rounded to f16 once before the
// loop (a low-precision copy per optimizer step), inputs and intermediates
// as they are produced; the loss scale is the last argument; the update
// divides by count · scale, runs only when the global norm is finite (the
// norm is +inf where count · scale is not finite), and otherwise the accumulators are zeroed and the parameters kept; a fifth
// result reports the skip. The step function says that its products'
// operands hold fp16 values (gacc.compute_precision); the predict function,
// which computes in fp32, does not.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @half(
// CHECK-SAME: %[[STEP:[^:]+]]: i64, %{{[^:]+}}: i64, %[[SCALE:[^:]+]]: f32) -> (f32, f32, f32, f32, f32)
// CHECK-SAME: attributes {gacc.compute_precision = #gacc.precision<fp16>}
// CHECK: %[[PT:.+]] = bufferization.to_tensor %{{.+}} restrict writable : memref<3x2xf32>
// CHECK: %[[PLOW:.+]] = linalg.generic {{.+}} ins(%[[PT]] : tensor<3x2xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: scf.for
// CHECK: gacc.linear %{{.+}}, %[[PLOW]]
// CHECK: tensor.from_elements %[[SCALE]] : tensor<f32>
// CHECK: %[[DIV:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[SQRT:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[DIVOK:.+]] = arith.cmpf olt, %[[DIV]], %[[INF:.+]] : f32
// CHECK: %[[NORM:.+]] = arith.select %[[DIVOK]], %[[SQRT]], %[[INF]] : f32
// CHECK: %[[FINITE:.+]] = arith.cmpf olt, %[[NORM]], %{{.+}} : f32
// CHECK: scf.if %[[FINITE]]
// CHECK: gacc.apply_optimizer {{.+}} count(%[[DIV]])
// CHECK: } else {
// CHECK: linalg.fill
// CHECK: return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32, f32, f32
// CHECK-LABEL: func.func @half_predict(
// CHECK-NOT: gacc.compute_precision
// CHECK: return
gacc.train_step @half params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    precision = #gacc.precision<fp16>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %s = gacc.loss_scale : tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}

// -----

// Random ops get their key in every micro-batch: the step's seed (7) as a
// constant, the optimizer step argument, and the global index of the
// micro-batch's first sample, first_sample + i·m (m = 4); the forward's
// dropout and its adjoint get the same key, so they draw the same mask. The
// predict function (evaluation) has no dropout: it reads the linear layer's
// output directly.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @dropout(
// CHECK-SAME: %[[STEP:[^:]+]]: i64, %[[FIRST:[^:]+]]: i64) -> (f32, f32, f32, f32)
// CHECK: %[[SEED:.+]] = arith.constant 7 : i64
// CHECK: scf.for %[[I:[^ ]+]] =
// CHECK: %[[I64:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[M:.+]] = arith.constant 4 : i64
// CHECK: %[[OFF:.+]] = arith.muli %[[I64]], %[[M]] : i64
// CHECK: %[[ROW0:.+]] = arith.addi %[[FIRST]], %[[OFF]] : i64
// CHECK: gacc.dropout %{{.+}} key(%[[SEED]], %[[STEP]], %[[ROW0]]) {p = 3.000000e-01 : f64, stream = 4 : i64}
// CHECK: gacc.dropout %{{.+}} key(%[[SEED]], %[[STEP]], %[[ROW0]]) {p = 3.000000e-01 : f64, stream = 4 : i64}
// CHECK-LABEL: func.func @dropout_predict(
// CHECK: %[[Z:.+]] = gacc.linear
// CHECK-NOT: gacc.dropout
// CHECK: bufferization.materialize_in_destination %[[Z]]
gacc.train_step @dropout params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>, seed = 7 : i64} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %d = gacc.dropout %z {p = 0.3 : f64, stream = 4 : i64} : tensor<4x3xf32>
  %l = gacc.cross_entropy %d, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.phase_begin backward
  %dd = gacc.dropout %z {p = 0.3 : f64, stream = 4 : i64} : tensor<4x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%dd, %x : tensor<4x3xf32>, tensor<4x2xf32>) outs(%f : tensor<3x2xf32>) -> tensor<3x2xf32>
  gacc.yield %l, %dw : tensor<f32>, tensor<3x2xf32>
}

// -----

// bf16: a running sum of products (a weight gradient computed in blocks,
// each product adding into the one before it) is not rounded between its
// products, as the sum inside one GEMM is not; the product that ends it
// is the gradient, which stays f32. The logits are rounded.

gacc.param @w : tensor<2x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @running_sum(
// CHECK: scf.for
// CHECK: %[[Z:.+]] = gacc.linear
// CHECK: linalg.generic {{.+}} ins(%[[Z]] : tensor<4x2xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[G0:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>) outs(%{{.+}} : tensor<2x2xf32>)
// CHECK-NEXT: %[[G1:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[G0]] : tensor<2x2xf32>)
// CHECK-NEXT: gacc.accumulate %[[G1]]
gacc.train_step @running_sum params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    precision = #gacc.precision<bf16>} {
^bb0(%w: tensor<2x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %g0 = linalg.matmul ins(%w, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %g1 = linalg.matmul ins(%w, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%g0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  gacc.yield %l, %g1 : tensor<f32>, tensor<2x2xf32>
}

// -----

// bf16: a gradient built from a product that is only moved or summed
// (transposed, summed with a second contribution, reshaped as conv2d's
// [O, C·kh·kw] product is expanded to OIHW) enters its accumulator as the
// product's f32 result, not rounded. A product something else reads (%p,
// also the logits' weight) keeps its rounding, in the sum as well.

gacc.param @w : tensor<2x2x1xf32> = #gacc.zeros
// CHECK-LABEL: func.func @moved_gradient(
// CHECK: scf.for
// CHECK: %[[P:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT: %{{.+}} = tensor.empty
// CHECK-NEXT: %[[PR:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<2x2xf32>)
// CHECK: arith.truncf
// CHECK: %[[Q:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT: %{{.+}} = tensor.empty
// CHECK-NEXT: %[[T:.+]] = linalg.transpose ins(%[[Q]] : tensor<2x2xf32>)
// CHECK-NEXT: %{{.+}} = tensor.empty
// CHECK-NEXT: %[[S:.+]] = linalg.generic {{.+}} ins(%[[T]], %[[PR]] : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[E:.+]] = tensor.expand_shape %[[S]]
// CHECK-NEXT: gacc.accumulate %[[E]]
gacc.train_step @moved_gradient params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    precision = #gacc.precision<bf16>} {
^bb0(%w: tensor<2x2x1xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %w2 = tensor.collapse_shape %w [[0], [1, 2]] : tensor<2x2x1xf32> into tensor<2x2xf32>
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %p = linalg.matmul ins(%w2, %w2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = gacc.linear %x, %p : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  %q = linalg.matmul ins(%w2, %w2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %et = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%q : tensor<2x2xf32>) outs(%et : tensor<2x2xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<2x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%t, %p : tensor<2x2xf32>, tensor<2x2xf32>) outs(%es : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<2x2xf32>
  %g = tensor.expand_shape %s [[0], [1, 2]] output_shape [2, 2, 1] : tensor<2x2xf32> into tensor<2x2x1xf32>
  gacc.yield %l, %g : tensor<f32>, tensor<2x2x1xf32>
}

// -----

// bf16: a gradient that other ops of the body also read (an adjoint the
// backward goes on with, here the weight of the logits) passes nothing on:
// the product it is moved from keeps its rounding, so those ops read what
// they would. The gradient itself stays f32.

gacc.param @w : tensor<2x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @shared_gradient(
// CHECK: scf.for
// CHECK: %[[Q:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT: %{{.+}} = tensor.empty
// CHECK-NEXT: %[[QR:.+]] = linalg.generic {{.+}} ins(%[[Q]] : tensor<2x2xf32>)
// CHECK: arith.truncf
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[QR]] : tensor<2x2xf32>)
// CHECK-NEXT: gacc.linear %{{.+}}, %[[T]]
gacc.train_step @shared_gradient params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    precision = #gacc.precision<bf16>} {
^bb0(%w: tensor<2x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %q = linalg.matmul ins(%w, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %et = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%q : tensor<2x2xf32>) outs(%et : tensor<2x2xf32>) permutation = [1, 0]
  %z = gacc.linear %x, %t : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %t : tensor<f32>, tensor<2x2xf32>
}

// -----

// A loss that computes its prediction itself (a fused classifier head):
// the predict function computes the logits [m, S, C] with gacc.linear from
// the head's input and weight, and writes them.

gacc.param @w : tensor<5x3xf32> = #gacc.zeros
// CHECK-LABEL: func.func @fused_head_predict(
// CHECK-SAME: %[[W:[^:]+]]: memref<5x3xf32>, %[[X:[^:]+]]: memref<2x4x3xf32>, %[[OUT:[^:]+]]: memref<2x4x5xf32>)
// CHECK-DAG: %[[WT:.+]] = bufferization.to_tensor %[[W]]
// CHECK-DAG: %[[XT:.+]] = bufferization.to_tensor %[[X]]
// CHECK: %[[Z:.+]] = gacc.linear %[[XT]], %[[WT]] : tensor<2x4x3xf32>, tensor<5x3xf32> -> tensor<2x4x5xf32>
// CHECK-NOT: linear_cross_entropy
// CHECK: bufferization.materialize_in_destination %[[Z]] in restrict writable %[[OUT]]
gacc.train_step @fused_head params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<5x3xf32>, %x: tensor<2x4x3xf32>, %y: tensor<2x4xi32>):
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<2x4x3xf32>, tensor<5x3xf32>, tensor<2x4xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<5x3xf32>
}
