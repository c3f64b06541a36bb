// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=64" | FileCheck %s --check-prefix=M
// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="accum-steps=2" | FileCheck %s --check-prefix=N
// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=16 accum-steps=3 data-parallel=true" | FileCheck %s --check-prefix=BOTH
// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule | FileCheck %s --check-prefix=KEEP

// The schedule of gacc-run's --micro-batch / --accum-steps: one option keeps
// the declared effective batch (256 = 4 × 64 = 2 × 128), both set it; the
// body's inputs and the results of the ops that infer their types follow
// the new micro-batch size.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @s
// M-SAME: accum_steps = 4 : i64, effective_batch = 256 : i64, micro_batch = 64 : i64
// M: ^bb0(%{{.+}}: tensor<10x784xf32>, %{{.+}}: tensor<64x784xf32>, %{{.+}}: tensor<64xi32>):
// M: gacc.linear {{.+}} -> tensor<64x10xf32>
// M: gacc.cross_entropy {{.+}} : tensor<64x10xf32>, tensor<64xi32> -> tensor<f32>
// N-LABEL: gacc.train_step @s
// N-SAME: accum_steps = 2 : i64, effective_batch = 256 : i64, micro_batch = 128 : i64
// N: tensor<128x784xf32>
// BOTH-LABEL: gacc.train_step @s
// BOTH-SAME: accum_steps = 3 : i64, data_parallel, effective_batch = 48 : i64, micro_batch = 16 : i64
// BOTH: tensor<16x784xf32>
// KEEP-LABEL: gacc.train_step @s
// KEEP-SAME: accum_steps = 8 : i64, effective_batch = 256 : i64, micro_batch = 32 : i64
// KEEP-NOT: data_parallel
gacc.train_step @s params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %l = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
