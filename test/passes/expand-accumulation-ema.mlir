// RUN: gacc-opt %s -gacc-autodiff -gacc-expand-accumulation | FileCheck %s
// RUN: not gacc-opt %s -gacc-autodiff -gacc-expand-accumulation=arena-update 2>&1 | FileCheck %s --check-prefix=ARENA

// ema_decay: the weights' moving average is each parameter's last
// optimizer-state argument; the optimizer reads only its own state (the
// momentum), and the average follows the update: 0.99 · ema + 0.01 · the
// new parameter, written back into its argument.
// CHECK-LABEL: func.func @s(
// CHECK-SAME: %[[P:[^:]+]]: memref<2x3xf32> {gacc.initializer = #gacc.zeros, gacc.param = @w}
// CHECK-SAME: %[[MOM:[^:]+]]: memref<2x3xf32> {gacc.optimizer_state = @w}
// CHECK-SAME: %[[EMA:[^:]+]]: memref<2x3xf32> {gacc.optimizer_state = @w}
// CHECK: %[[EMAT:.+]] = bufferization.to_tensor %[[EMA]]
// CHECK: %[[NEWP:.+]], %[[NEWS:.+]] = gacc.apply_optimizer {{.*}} state(%{{[^)]+}}) count
// CHECK: %[[AVG:.+]] = linalg.generic {{.*}} ins(%[[EMAT]], %[[NEWP]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: arith.constant 9.900000e-01 : f32
// CHECK: arith.constant 0.00999999977 : f32
// CHECK: bufferization.materialize_in_destination %[[NEWP]] in restrict writable %[[P]]
// CHECK: bufferization.materialize_in_destination %[[NEWS]] in restrict writable %[[MOM]]
// CHECK: bufferization.materialize_in_destination %[[AVG]] in restrict writable %[[EMA]]
// ARENA: error: 'gacc.train_step' op ema_decay with the arena update: the arena kernels do not update the moving average yet (run without --arena-update)
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.train_step @s params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>, ema_decay = 0.99 : f64} {
^bb0(%w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
