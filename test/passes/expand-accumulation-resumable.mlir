// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation=resumable | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation=resumable | FileCheck %s --check-prefix=NOUPDATE

// With `resumable` the step is also built split at micro-batch boundaries.
// @s_accumulate runs micro-batches [begin, end) of the window: the same
// loop body as @s (first = i == 0, so micro-batch 0 overwrites the
// accumulators wherever the range starts), carrying the loss sum and the
// count from its arguments, and writes the accumulators back. @s_update
// runs what follows the N-th micro-batch from the accumulators and the
// sums: the divisor max(count, 1), the norm, the update, the results.

gacc.param @w : tensor<3x2xf32> = #gacc.kaiming_uniform<fan_in = 2>
// CHECK-LABEL: func.func @s(
// CHECK: scf.for
// CHECK-LABEL: func.func @s_predict(
// CHECK-LABEL: func.func @s_accumulate(
// CHECK-SAME: %[[ACC:[^:]+]]: memref<3x2xf32> {gacc.accumulator = @w}
// CHECK-SAME: %[[LR:[^:]+]]: f32, %[[STEP:[^:]+]]: i64, %[[FIRST:[^:]+]]: i64, %[[BEGIN:[^:]+]]: i64, %[[END:[^:]+]]: i64, %[[LS0:[^:]+]]: f32, %[[CNT0:[^:]+]]: f32) -> (f32, f32)
// CHECK: %[[ACCT:.+]] = bufferization.to_tensor %[[ACC]] restrict writable
// CHECK: %[[B:.+]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[E:.+]] = arith.index_cast %[[END]] : i64 to index
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[R:.+]]:3 = scf.for %[[I:.+]] = %[[B]] to %[[E]] step %{{.+}} iter_args(%[[A:.+]] = %[[ACCT]], %[[LS:.+]] = %[[LS0]], %[[CNT:.+]] = %[[CNT0]])
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[I]], %[[C0]] : index
// CHECK: gacc.phase_begin forward
// CHECK: gacc.accumulate %{{.+}} into %[[A]] first %[[FIRST]]
// CHECK: arith.addf %[[LS]], %{{.+}} : f32
// CHECK: arith.addf %[[CNT]], %{{.+}} : f32
// The accumulate function has no update, so no update marker anywhere in
// it (the NOUPDATE prefix checks from its label to @s_update's).
// NOUPDATE-LABEL: func.func @s_accumulate(
// NOUPDATE-NOT: gacc.phase_begin update
// NOUPDATE-LABEL: func.func @s_update(
// CHECK: bufferization.materialize_in_destination %[[R]]#0 in restrict writable %[[ACC]]
// CHECK: return %[[R]]#1, %[[R]]#2 : f32, f32
// CHECK-LABEL: func.func @s_update(
// CHECK-SAME: %[[P:[^:]+]]: memref<3x2xf32> {gacc.initializer
// CHECK-SAME: %[[UACC:[^:]+]]: memref<3x2xf32> {gacc.accumulator = @w}
// CHECK-SAME: %[[ULR:[^:]+]]: f32, %[[USTEP:[^:]+]]: i64, %[[UFIRST:[^:]+]]: i64, %[[ULS:[^:]+]]: f32, %[[UCNT:[^:]+]]: f32) -> (f32, f32, f32, f32)
// CHECK-NOT: scf.for
// CHECK: %[[UACCT:.+]] = bufferization.to_tensor %[[UACC]] restrict writable
// CHECK: gacc.phase_begin update
// CHECK: %[[DIV:.+]] = arith.maximumf %[[UCNT]], %{{.+}} : f32
// CHECK: %[[NORM:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01, momentum = 9.000000e-01> param(%{{.+}}) accumulator(%[[UACCT]]) state(%{{.+}}) count(%[[DIV]]) lr(%[[ULR]]) step(%[[USTEP]])
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %[[P]]
// CHECK: %[[OBJ:.+]] = arith.divf %[[ULS]], %[[DIV]] : f32
// CHECK: return %[[OBJ]], %[[UCNT]], %[[ULR]], %[[NORM]] : f32, f32, f32, f32
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

// `sum`: no count is carried (the accumulate function returns its count
// argument as it is) and the update divides by 1. A data-parallel step's
// one all-reduce is in the update, after the N-th micro-batch, never in
// the accumulate function.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @dp_accumulate(
// CHECK-SAME: %[[LS0:[^:]+]]: f32, %[[CNT0:[^:]+]]: f32) -> (f32, f32)
// CHECK-NOT: gacc.all_reduce
// CHECK: %[[R:.+]]:2 = scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[LS0]])
// CHECK-NOT: gacc.all_reduce
// CHECK: return %[[R]]#1, %[[CNT0]] : f32, f32
// CHECK-LABEL: func.func @dp_update(
// CHECK-NOT: scf.for
// CHECK: gacc.all_reduce
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01> param(%{{.+}}) accumulator(%{{.+}}) count(%[[ONE]])
gacc.train_step @dp params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>,
    optimizer = #gacc.sgd<lr = 0.1>, data_parallel} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}

// -----

// Loss scaling: the accumulate function (whose products read fp16 values:
// gacc.compute_precision) seeds the reverse pass with the scale argument;
// the update divides by count · scale and skips the update (zeroing the
// accumulators) on a non-finite norm.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @scaled_accumulate(
// CHECK-SAME: %[[SCALE:[^:]+]]: f32, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: f32, %{{[^:]+}}: f32) -> (f32, f32)
// CHECK-SAME: attributes {gacc.compute_precision = #gacc.precision<fp16>}
// CHECK: tensor.from_elements %[[SCALE]]
// CHECK-LABEL: func.func @scaled_update(
// CHECK-SAME: %[[USCALE:[^:]+]]: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32) -> (f32, f32, f32, f32, f32)
// CHECK: %[[DIV:.+]] = arith.mulf %{{.+}}, %[[USCALE]] : f32
// CHECK: scf.if
// CHECK: gacc.apply_optimizer
// CHECK: } else {
// CHECK: linalg.fill
gacc.train_step @scaled params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>, precision = #gacc.precision<fp16>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %s = gacc.loss_scale : tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}
