// RUN: gacc-opt %s -gacc-plan-memory -o /dev/null | FileCheck %s --check-prefix=ACCUMULATE
// RUN: gacc-opt %s -gacc-plan-memory="defer-window-bytes=1048576" -o /dev/null | FileCheck %s --check-prefix=DEFER
// RUN: gacc-opt %s -gacc-plan-memory="defer-window-bytes=1024" -o /dev/null | FileCheck %s --check-prefix=ACCUMULATE

// The plan of the step that runs: with gacc-defer-weight-gradients, the
// window buffer of the 64 × 32 weight's output gradients (N · m = 8 rows,
// 8 · 64 · 4 = 2048 bytes; the inputs are read from the window input, not
// copied) lives from before the micro-batch loop to the product after it,
// across the forward/backward boundary. Each micro-batch's output gradient
// is written in its rows of that buffer (empty-tensor elimination), not
// in a buffer of its own and copied, so the peak grows by 1600 bytes,
// less than the window buffer's 2048. The cost model defers it: accumulating
// moves 7 · 64 · 32 = 14336 elements per window, deferring
// 2 · 8 · (64 + 32) + 64 · 32 = 3584. With max-window-bytes 1024 (the
// buffers would take 8 · (64 + 32) · 4 = 3072) it is not deferred.
// ACCUMULATE-LABEL: memory plan of @wide on cpu: micro-batch 2 × 4 accumulation steps
// ACCUMULATE:      activations                   704
// ACCUMULATE:      peak                        18688
// DEFER-LABEL: memory plan of @wide on cpu: micro-batch 2 × 4 accumulation steps
// DEFER:      activations                  2688
// DEFER:      peak                        20288

gacc.param @w : tensor<64x32xf32> = #gacc.kaiming_uniform<fan_in = 32>
gacc.train_step @wide params [@w] attributes {
    accum_steps = 4 : i64, micro_batch = 2 : i64, effective_batch = 8 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<64x32xf32>, %x: tensor<2x32xf32>, %y: tensor<2xi32>):
  %z = gacc.linear %x, %w : tensor<2x32xf32>, tensor<64x32xf32> -> tensor<2x64xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x64xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
