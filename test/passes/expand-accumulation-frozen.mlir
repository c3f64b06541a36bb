// RUN: gacc-opt %s -gacc-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: gacc-opt %s -gacc-autodiff -gacc-expand-accumulation | FileCheck %s
// RUN: gacc-opt %s -gacc-autodiff -gacc-expand-accumulation | FileCheck %s --check-prefix=NOACC

// A frozen parameter (@w, under the adapter @a of a LoRA-style sum) gets no
// gradient: the body yields the loss and the adapter's gradient only.
// GRAD-LABEL: gacc.train_step @s params [@w, @a]
// GRAD: gacc.yield %{{[^,]+}}, %{{[^ ]+}} : tensor<f32>, tensor<3x2xf32>

// In the compiled step it has no accumulator and no optimizer state (Adam's
// two are the adapter's alone), no gacc.accumulate, no update and no term
// in the clipping norm; it is read-only (its tensor is not writable) and
// never written back.
// CHECK-LABEL: func.func @s(
// CHECK-SAME: %[[W:[^:]+]]: memref<3x2xf32> {gacc.initializer = #gacc.zeros, gacc.param = @w}
// CHECK-SAME: %[[A:[^:]+]]: memref<3x2xf32> {gacc.initializer = #gacc.zeros, gacc.param = @a}
// CHECK-SAME: %[[ACC:[^:]+]]: memref<3x2xf32> {gacc.accumulator = @a}
// CHECK-SAME: %[[M:[^:]+]]: memref<3x2xf32> {gacc.optimizer_state = @a}
// CHECK-SAME: %[[V:[^:]+]]: memref<3x2xf32> {gacc.optimizer_state = @a}
// CHECK-SAME: %{{[^:]+}}: memref<2x4x2xf32> {gacc.window_input = 0 : i64}
// NOACC-NOT: gacc.accumulator = @w
// NOACC-NOT: gacc.optimizer_state = @w
// NOACC: func.func @s_predict
// CHECK: %[[WT:.+]] = bufferization.to_tensor %[[W]] restrict :
// CHECK: %[[AT:.+]] = bufferization.to_tensor %[[A]] restrict writable :
// CHECK: scf.for
// CHECK-COUNT-1: gacc.accumulate
// CHECK-NOT: gacc.accumulate
// CHECK: scf.yield
// CHECK-COUNT-1: gacc.apply_optimizer
// CHECK-NOT: gacc.apply_optimizer
// CHECK-NOT: in restrict writable %[[W]]
// CHECK: return
gacc.param @w : tensor<3x2xf32> = #gacc.zeros {frozen}
gacc.param @a : tensor<3x2xf32> = #gacc.zeros
gacc.train_step @s params [@w, @a] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.adam<lr = 0.1>, max_grad_norm = 1.0 : f64} {
^bb0(%w: tensor<3x2xf32>, %a: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %u = gacc.linear %x, %a : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %s = arith.addf %z, %u : tensor<4x3xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
