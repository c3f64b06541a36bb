// RUN: gacc-opt %s -gacc-expand-accumulation=arena-update | FileCheck %s

// With arena-update the step stops after the micro-batch loop: no
// apply_optimizer; the accumulators are written to their buffers (views of
// the runtime's accumulator arena), the parameters and state are not
// written at all (the runtime's @s_update_arena does it), and the step
// still returns Σ loss / count, the count, the rate and the norm.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @s(
// CHECK-SAME: %[[P:[^:]+]]: memref<3x2xf32> {{.+}}, %[[ACC:[^:]+]]: memref<3x2xf32> {gacc.accumulator = @w}, %[[MOM:[^:]+]]: memref<3x2xf32> {gacc.optimizer_state = @w}
// CHECK: %[[R:.+]]:3 = scf.for
// CHECK: gacc.accumulate
// CHECK-NOT: gacc.apply_optimizer
// CHECK-NOT: materialize_in_destination {{.+}} %[[P]]
// CHECK-NOT: materialize_in_destination {{.+}} %[[MOM]]
// CHECK: bufferization.materialize_in_destination %[[R]]#0 in restrict writable %[[ACC]]
// CHECK-NOT: materialize_in_destination
// CHECK: return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32, f32
gacc.train_step @s params [@w] attributes {
    accum_steps = 3 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}
