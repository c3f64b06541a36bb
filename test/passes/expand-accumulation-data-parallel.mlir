// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-expand-accumulation=unroll | FileCheck %s --check-prefix=UNROLL

// A data_parallel step communicates exactly once per optimizer step: after
// the micro-batch loop, one gacc.all_reduce sums a buffer that packs both
// accumulators (3·2 + 3 elements), the loss sum (at 9) and the count (at
// 10). The count that normalizes, the norm and the update all read the
// reduced values; the accumulators' own buffers keep the local sums.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @b : tensor<3xf32> = #gacc.zeros
// CHECK-LABEL: func.func @dp(
// CHECK-NOT: gacc.all_reduce
// CHECK: %[[R:.+]]:4 = scf.for
// CHECK: gacc.accumulate
// CHECK: gacc.accumulate
// CHECK-NOT: gacc.all_reduce
// CHECK: scf.yield
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<11xf32>
// CHECK: %[[FW:.+]] = tensor.collapse_shape %[[R]]#0 {{\[\[}}0, 1]] : tensor<3x2xf32> into tensor<6xf32>
// CHECK: %[[P0:.+]] = tensor.insert_slice %[[FW]] into %[[EMPTY]][0] [6] [1]
// CHECK: %[[P1:.+]] = tensor.insert_slice %[[R]]#1 into %[[P0]][6] [3] [1]
// CHECK: %[[P2:.+]] = tensor.insert %[[R]]#2 into %[[P1]][%{{.+}}]
// CHECK: %[[P3:.+]] = tensor.insert %[[R]]#3 into %[[P2]][%{{.+}}]
// CHECK: %[[SUM:.+]] = gacc.all_reduce %[[P3]] : tensor<11xf32> -> tensor<11xf32>
// CHECK-NOT: gacc.all_reduce
// CHECK: %[[GW:.+]] = tensor.extract_slice %[[SUM]][0] [6] [1] : tensor<11xf32> to tensor<6xf32>
// CHECK: %[[W:.+]] = tensor.expand_shape %[[GW]] {{\[\[}}0, 1]] output_shape [3, 2]
// CHECK: %[[B:.+]] = tensor.extract_slice %[[SUM]][6] [3] [1] : tensor<11xf32> to tensor<3xf32>
// CHECK: %[[LOSS:.+]] = tensor.extract %[[SUM]][%{{.+}}]
// CHECK: %[[CNT:.+]] = tensor.extract %[[SUM]][%{{.+}}]
// CHECK: %[[COUNT:.+]] = arith.maximumf %[[CNT]], %{{.+}} : f32
// CHECK: gacc.apply_optimizer {{.+}} accumulator(%[[W]]){{.*}}count(%[[COUNT]])
// CHECK: gacc.apply_optimizer {{.+}} accumulator(%[[B]]){{.*}}count(%[[COUNT]])
// CHECK: bufferization.materialize_in_destination %[[R]]#0 in
// CHECK: bufferization.materialize_in_destination %[[R]]#1 in
// CHECK: arith.divf %[[LOSS]], %[[COUNT]] : f32

// Unrolled, the N = 3 micro-batches still share one collective, after the
// last accumulate.
// UNROLL-LABEL: func.func @dp(
// UNROLL-NOT: gacc.all_reduce
// UNROLL-COUNT-6: gacc.accumulate
// UNROLL-NOT: gacc.accumulate
// UNROLL: gacc.all_reduce
// UNROLL-NOT: gacc.all_reduce
// UNROLL: gacc.apply_optimizer
gacc.train_step @dp params [@w, @b] attributes {
    accum_steps = 3 : i64, micro_batch = 4 : i64, data_parallel,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %b: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %w, %b : tensor<f32>, tensor<3x2xf32>, tensor<3xf32>
}

// -----

// Without data_parallel there is no collective at all.
gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: func.func @single(
// CHECK-NOT: gacc.all_reduce
// CHECK: return
gacc.train_step @single params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l, %w : tensor<f32>, tensor<3x2xf32>
}
