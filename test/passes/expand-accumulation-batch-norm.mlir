// RUN: gacc-opt %s -gacc-mask-batch-statistics -gacc-autodiff -gacc-expand-accumulation | FileCheck %s
// RUN: not gacc-opt %s -gacc-mask-batch-statistics -gacc-autodiff -gacc-expand-accumulation=resumable 2>&1 | FileCheck %s --check-prefix=RESUMABLE

// Running statistics are step arguments after the optimizer state (in the
// order the body names them), with their names and initializers. The
// micro-batch loop carries them, and for the per_window batch_norm the
// window's count, mean and M2 (from 0). Per micro-batch: the
// per_micro_batch statistics move (0.9 · running + 0.1 · statistic, the
// variance by n / max(n − 1, 1)) unless the micro-batch holds no sample,
// and the per_window partials combine by Chan et al. (M2 first, from the
// old mean, then the mean, each in place). After the loop the per_window
// statistics move once (0.8 · running + 0.2 · the window's mean, and
// M2 / max(n − 1, 1)), and every statistic is written back.
// CHECK-LABEL: func.func @s(
// CHECK-SAME: {gacc.optimizer_state = @w}
// CHECK-SAME: %[[M1:[^:]+]]: memref<3xf32> {gacc.initializer = #gacc.zeros, gacc.statistic = @mean1}
// CHECK-SAME: %[[V1:[^:]+]]: memref<3xf32> {gacc.initializer = #gacc.constant<value = 1.000000e+00>, gacc.statistic = @var1}
// CHECK-SAME: %[[M2:[^:]+]]: memref<3xf32> {gacc.initializer = #gacc.zeros, gacc.statistic = @mean2}
// CHECK-SAME: %[[V2:[^:]+]]: memref<3xf32> {gacc.initializer = #gacc.constant<value = 1.000000e+00>, gacc.statistic = @var2}
// CHECK-SAME: {gacc.window_input = 0 : i64}
// CHECK: %[[M1T:.+]] = bufferization.to_tensor %[[M1]] restrict writable
// CHECK: %[[V1T:.+]] = bufferization.to_tensor %[[V1]] restrict writable
// CHECK: %[[M2T:.+]] = bufferization.to_tensor %[[M2]] restrict writable
// CHECK: %[[V2T:.+]] = bufferization.to_tensor %[[V2]] restrict writable
// CHECK: %[[L:.+]]:11 = scf.for {{.*}} iter_args({{.*}}, %[[RM1:[^ ]+]] = %[[M1T]], %[[RV1:[^ ]+]] = %[[V1T]], %[[RM2:[^ ]+]] = %[[M2T]], %[[RV2:[^ ]+]] = %[[V2T]], %[[WN:[^ ]+]] = %cst{{[_0-9]*}}, %[[WM:[^ ]+]] = %{{[^,]+}}, %[[WM2:[^ ]+]] = %{{[^)]+}})
// CHECK: %[[BN1:.+]] = gacc.batch_norm %{{.+}} mask %[[MASK:[^ ]+]] running(@mean1, @var1)
// CHECK: gacc.batch_norm %[[BN1]], {{.*}} mask %[[MASK]] running(@mean2, @var2)
// CHECK: %[[NEWM1:.+]] = linalg.generic {{.*}} outs(%[[RM1]] : tensor<3xf32>)
// CHECK: arith.constant 0.899999976 : f32
// CHECK: arith.constant 1.000000e-01 : f32
// CHECK: arith.select
// CHECK: %[[NEWV1:.+]] = linalg.generic {{.*}} outs(%[[RV1]] : tensor<3xf32>)
// CHECK: %[[N:.+]] = tensor.extract
// CHECK: %[[TOTAL:.+]] = arith.addf %[[WN]], %[[N]] : f32
// CHECK: %[[NEWWM2:.+]] = linalg.generic {{.*}} ins(%[[WM]], {{.*}}) outs(%[[WM2]] : tensor<3xf32>)
// CHECK: %[[NEWWM:.+]] = linalg.generic {{.*}} outs(%[[WM]] : tensor<3xf32>)
// CHECK: scf.yield {{.*}}, %[[NEWM1]], %[[NEWV1]], %[[RM2]], %[[RV2]], %[[TOTAL]], %[[NEWWM]], %[[NEWWM2]] :
// CHECK: %[[NEWM2:.+]] = linalg.generic {{.*}} ins(%[[L]]#9 : tensor<3xf32>) outs(%[[L]]#6 : tensor<3xf32>)
// CHECK: arith.constant 8.000000e-01 : f32
// CHECK: arith.constant 2.000000e-01 : f32
// CHECK: %[[NEWV2:.+]] = linalg.generic {{.*}} ins(%[[L]]#10 : tensor<3xf32>) outs(%[[L]]#7 : tensor<3xf32>)
// CHECK: bufferization.materialize_in_destination %[[L]]#4 in restrict writable %[[M1]]
// CHECK: bufferization.materialize_in_destination %[[L]]#5 in restrict writable %[[V1]]
// CHECK: bufferization.materialize_in_destination %[[NEWM2]] in restrict writable %[[M2]]
// CHECK: bufferization.materialize_in_destination %[[NEWV2]] in restrict writable %[[V2]]
// CHECK: return

// The predict function reads the running statistics (after the
// parameters) and normalizes by them: no batch statistics, no mask, no
// targets.
// CHECK-LABEL: func.func @s_predict(
// CHECK-SAME: %[[PG:[^:]+]]: memref<3xf32>, %[[PW:[^:]+]]: memref<2x3xf32>, %[[PM1:[^:]+]]: memref<3xf32>, %[[PV1:[^:]+]]: memref<3xf32>, %[[PM2:[^:]+]]: memref<3xf32>, %[[PV2:[^:]+]]: memref<3xf32>, %[[PX:[^:]+]]: memref<4x3xf32>, %{{[^:]+}}: memref<4x2xf32>)
// CHECK-NOT: gacc.batch_norm
// CHECK-NOT: arith.maximumf
// CHECK: %[[PM1T:.+]] = bufferization.to_tensor %[[PM1]]
// CHECK: %[[PV1T:.+]] = bufferization.to_tensor %[[PV1]]
// CHECK: %[[PXT:.+]] = bufferization.to_tensor %[[PX]]
// CHECK: %[[RSTD:.+]] = linalg.generic {{.*}} ins(%[[PV1T]] : tensor<3xf32>)
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%[[PXT]], %[[PM1T]], %[[RSTD]],
// CHECK: gacc.linear
// CHECK-NOT: gacc.batch_norm
// CHECK: return

// RESUMABLE: error: 'gacc.train_step' op has per_window batch statistics, which the resumable step (checkpoints, --resume, --accum-schedule) does not support yet: the window's partial statistics live in the micro-batch loop
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.statistic @mean1 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var1 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.statistic @mean2 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var2 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%g: tensor<3xf32>, %w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %n = gacc.batch_norm %x, %g, %g running(@mean1, @var1) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %m = gacc.batch_norm %n, %g, %g running(@mean2, @var2) {momentum = 0.2, batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %z = gacc.linear %m, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
