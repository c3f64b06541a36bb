// RUN: gacc-opt %s -split-input-file -gacc-build-arena-kernels | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-build-arena-kernels | FileCheck %s --check-prefix=HOIST

// An fp32 AdamW step with clipping: the fp32 accumulate (16-byte vector
// accesses, no read of the accumulator on the first micro-batch, the
// non-finite flag), the three-stage sum of squares and one update with
// two state arenas (exp_avg, exp_avg_sq).

gacc.param @w : tensor<6x4xf32> = #gacc.zeros
// CHECK-LABEL: func.func @s_accumulate_arena_f32(
// CHECK-SAME: %[[ACC:[^:]+]]: memref<?xf32>, %[[G:[^:]+]]: memref<?xf32>, %[[W:[^:]+]]: f32, %[[FIRST:[^:]+]]: i32, %[[FLAG:[^:]+]]: memref<1xi32>)
// CHECK: %[[ISFIRST:.+]] = arith.cmpi ne, %[[FIRST]]
// CHECK: %[[N:.+]] = memref.dim %[[ACC]]
// CHECK: %[[NV:.+]] = arith.divui %[[N]], %{{.+}} : index
// CHECK: scf.parallel (%[[V:.+]]) = (%{{.+}}) to (%[[NV]])
// CHECK: %[[GV:.+]] = vector.load %[[G]][%{{.+}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: %[[WG:.+]] = arith.mulf %[[GV]], %{{.+}} : vector<4xf32>
// CHECK: %[[SUM:.+]] = scf.if %[[ISFIRST]] -> (vector<4xf32>) {
// CHECK-NEXT: scf.yield %[[WG]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[OLD:.+]] = vector.load %[[ACC]]
// CHECK-NEXT: %[[ADD:.+]] = arith.addf %[[OLD]], %[[WG]]
// CHECK: vector.store %[[SUM]], %[[ACC]][%{{.+}}] {alignment = 16 : i64}
// CHECK: arith.cmpf uno
// CHECK: vector.reduction <or>
// CHECK: memref.store %{{.+}}, %[[FLAG]]
// CHECK-NOT: func.func @s_accumulate_arena_bf16
// CHECK-LABEL: func.func @s_sum_squares_arena(
// CHECK-SAME: memref<?xf32>, %{{.+}}: memref<65792xf64>, %{{.+}}: memref<1xf64>)
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: math.fma %{{.+}} : vector<4xf64>
// CHECK: vector.reduction <add>
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: arith.addf %{{.+}} : f64
// CHECK: %[[ONE:.+]] = arith.minui
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[ONE]])
// CHECK-LABEL: func.func @s_update_arena(
// CHECK-SAME: %[[P:[^:]+]]: memref<?xf32>, %[[A:[^:]+]]: memref<?xf32>, %[[M:[^:]+]]: memref<?xf32>, %[[VS:[^:]+]]: memref<?xf32>, %[[DE:[^:]+]]: index, %[[CNT:[^:]+]]: memref<1xf32>, %[[SS:[^:]+]]: memref<1xf64>, %[[NF:[^:]+]]: memref<1xi32>, %[[LR:[^:]+]]: f32, %[[STEP:[^:]+]]: i64, %[[SCALE:[^:]+]]: f32)
// CHECK: %[[VECS:.+]] = arith.divui %{{.+}}, %c4
// CHECK: scf.parallel (%[[V:.+]]) = (%{{.+}}) to (%[[VECS]])
// CHECK: %[[BASE:.+]] = arith.muli %[[V]], %c4
// CHECK: memref.load %[[NF]]
// CHECK: scf.if
// CHECK: %[[C:.+]] = arith.maximumf
// CHECK: %[[DIV:.+]] = arith.mulf %[[C]], %[[SCALE]]
// CHECK: memref.load %[[SS]]
// CHECK: math.sqrt %{{.+}} : f64
// CHECK: arith.minimumf
// CHECK: vector.load %[[A]][%[[BASE]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: vector.load %[[P]][%[[BASE]]] {alignment = 16 : i64}
// CHECK: vector.load %[[M]][%[[BASE]]] {alignment = 16 : i64}
// CHECK: vector.load %[[VS]][%[[BASE]]] {alignment = 16 : i64}
// CHECK-COUNT-4: arith.divf %{{.+}}, %[[DIV]] : f32
// CHECK: arith.cmpi ult, %{{.+}}, %[[DE]]
// CHECK: vector.store %{{.+}}, %[[P]][%[[BASE]]] {alignment = 16 : i64}
// CHECK: vector.store %{{.+}}, %[[M]][%[[BASE]]] {alignment = 16 : i64}
// CHECK: vector.store %{{.+}}, %[[VS]][%[[BASE]]] {alignment = 16 : i64}
// The bias corrections β^t depend on the step only: computed before the
// element loop (by the host code), not per element.
// HOIST-LABEL: func.func @s_update_arena(
// HOIST: math.powf
// HOIST: scf.parallel
// HOIST-NOT: math.powf
// HOIST: return
gacc.train_step @s params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.adamw<lr = 1.0e-3>, max_grad_norm = 1.0 : f64} {
^bb0(%w: tensor<6x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x4xf32>, tensor<6x4xf32> -> tensor<4x6xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A bf16 step also gets the accumulate of bf16 gradients: 8-byte vector
// loads widened to fp32 (the accumulator stays fp32). Plain SGD: no state
// arena, and no clipping (no norm read in the update).

gacc.param @w : tensor<6x4xf32> = #gacc.zeros
// CHECK-LABEL: func.func @lowp_accumulate_arena_f32(
// CHECK-LABEL: func.func @lowp_accumulate_arena_bf16(
// CHECK-SAME: memref<?xf32>, %{{.+}}: memref<?xbf16>
// CHECK: vector.load %{{.+}} {alignment = 8 : i64} : memref<?xbf16>, vector<4xbf16>
// CHECK: arith.extf %{{.+}} : vector<4xbf16> to vector<4xf32>
// CHECK-LABEL: func.func @lowp_update_arena(
// CHECK-SAME: %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %{{.+}}: index,
// CHECK-NOT: math.sqrt
// CHECK: return
gacc.train_step @lowp params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>, precision = #gacc.precision<bf16>} {
^bb0(%w: tensor<6x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x4xf32>, tensor<6x4xf32> -> tensor<4x6xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
