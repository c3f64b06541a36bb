// RUN: gacc-opt %s -gacc-plan-memory -o /dev/null | FileCheck %s --check-prefix=RECOMPUTE
// RUN: sed 's/ {gacc.recompute}//' %s | gacc-opt -gacc-plan-memory -o /dev/null | FileCheck %s --check-prefix=KEEP

// The plan with and without recomputing the relu (micro-batch m = 4,
// N = 2, SGD with momentum; cpu blocks of 64 bytes), by hand:
//   parameters, accumulators, momentum: w 512 + b 64 each          3·576
//   window inputs: x 2·4·8·4 = 256, y 2·4·4 = 32 -> 64                320
//   activations live at gacc.phase_begin backward, kept:
//     the relu's output 4·8·4 = 128, the logits 4·16·4 = 256, the row
//     maxima, the row sums of exponentials and the loss (64 each)     576
//   recomputed: the relu's output dies after the linear layer in the
//     forward; its input is the window's slice (no buffer of its own) 448
//   temporaries at the peak (the logits' gradient, the first backward
//     op; the recomputed relu comes later, for the weight gradient)  256
//   peak kept:       3·576 + 320 + 576 + 256                       = 2880
//   peak recomputed: 3·576 + 320 + 448 + 256                       = 2752
// KEEP:      activations                   576
// KEEP-NEXT: temporaries                   256
// KEEP-NEXT: workspace                       0
// KEEP-NEXT: peak                         2880
// KEEP:      activations live across the forward/backward boundary: 576 bytes
// RECOMPUTE:      activations                   448
// RECOMPUTE-NEXT: temporaries                   256
// RECOMPUTE-NEXT: workspace                       0
// RECOMPUTE-NEXT: peak                         2752
// RECOMPUTE:      activations live across the forward/backward boundary: 448 bytes

gacc.param @w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @b : tensor<16xf32> = #gacc.zeros
gacc.train_step @small params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64, effective_batch = 8 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %r = gacc.relu %x {gacc.recompute} : tensor<4x8xf32>
  %z = gacc.linear %r, %w bias %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
