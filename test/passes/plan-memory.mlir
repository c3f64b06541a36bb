// RUN: gacc-opt %s -gacc-plan-memory -o /dev/null | FileCheck %s --check-prefix=CPU
// RUN: gacc-opt %s -gacc-plan-memory="target=cuda" -o /dev/null | FileCheck %s --check-prefix=CUDA
// RUN: gacc-opt %s -gacc-plan-memory="micro-batch=3" -o /dev/null | FileCheck %s --check-prefix=RAGGED
// RUN: gacc-opt %s -gacc-plan-memory | FileCheck %s --check-prefix=UNCHANGED
// RUN: gacc-opt %s -gacc-plan-memory="micro-batch=8" -o /dev/null | FileCheck %s --check-prefix=ONE

// The plan of a linear layer and cross-entropy, worked out by hand from
// the bufferized step (micro-batch m = 4, N = 2, SGD with momentum).
//
// On the cpu target every buffer rounded up to 64 bytes.
//   parameters:   w 16·8·4 = 512, b 16·4 = 64                  ->  576
//   accumulators and momentum: the same                        ->  576 each
//   window inputs: x 2·4·8·4 = 256, y 2·4·4 = 32 -> 64         ->  320
//   activations live at gacc.phase_begin backward: the logits 4·16·4 = 256, the
//     row maxima and the row sums of exponentials (4·4 -> 64 each), the
//     micro-batch's loss (4 -> 64)                              ->  448
//   temporaries at the peak (the first backward op, the logits'
//     gradient): 4·16·4 = 256                                   ->  256
//   peak: 3·576 + 320 + 448 + 256                               = 2752
//   step arena: the transient buffers pack without gaps, so it is
//     the peak's activations and temporaries: 448 + 256          =  704
//   held at most: the persistent bytes and the arena             = 2752
// CPU-LABEL: memory plan of @small on cpu: micro-batch 4 × 2 accumulation steps
// CPU-NEXT:  at the peak                 bytes        MiB
// CPU-NEXT:  parameters                    576
// CPU-NEXT:  gradient accumulators         576
// CPU-NEXT:  optimizer state               576
// CPU-NEXT:  persistent statistics           0
// CPU-NEXT:  window inputs (N x m samples) 320
// CPU-NEXT:  activations                   448
// CPU-NEXT:  temporaries                   256
// CPU-NEXT:  workspace                       0
// CPU-NEXT:  peak                         2752
// CPU-NEXT:  peak at linalg.generic in the backward ({{.*}}plan-memory.mlir:[[@LINE+46]]:8)
// CPU-NEXT:  activations live across the forward/backward boundary: 448 bytes
// CPU-NEXT:  step arena (the transient buffers at compile-time offsets): 704 bytes ({{.*}}, +0.0% of the peak's transient bytes)
// CPU-NEXT:  held at most (persistent, arena, other buffers): 2752 bytes

// On the cuda target, blocks of 256 bytes; scalars (the loss) in the 1 MiB scalar pool;
// the 32 MiB cuBLAS workspace.
//   parameters: w 512, b 64 -> 256                              ->  768
//   window inputs: x 256, y 32 -> 256                           ->  512
//   activations: logits 256, maxima 256, sums 256, loss 0       ->  768
//   temporaries: 256
//   workspace: 33554432 + 1048576                               = 34603008
//   peak: 3·768 + 512 + 768 + 256 + 34603008                    = 34606848
// CUDA-LABEL: memory plan of @small on cuda
// CUDA:      parameters                    768
// CUDA:      window inputs (N x m samples) 512
// CUDA-NEXT: activations                   768
// CUDA-NEXT: temporaries                   256
// CUDA-NEXT: workspace                34603008
// CUDA-NEXT: peak                     34606848

// Ragged: m = 3 does not divide the effective batch of 8: N = ceil(8/3) = 3.
//   window inputs: x 3·3·8·4 = 288 -> 320, y 3·3·4 = 36 -> 64  ->  384
//   activations: logits 3·16·4 = 192, maxima, sums, loss 64 each -> 384
//   temporaries: 192
//   peak: 3·576 + 384 + 384 + 192                               = 2688
// RAGGED-LABEL: memory plan of @small on cpu: micro-batch 3 × 3 accumulation steps
// RAGGED:      window inputs (N x m samples) 384
// RAGGED-NEXT: activations                   384
// RAGGED-NEXT: temporaries                   192
// RAGGED-NEXT: workspace                       0
// RAGGED-NEXT: peak                         2688

// An analysis: the module comes out as it went in.
// UNCHANGED: gacc.train_step @small
// UNCHANGED-SAME: accum_steps = 2
// UNCHANGED-NOT: func.func

gacc.param @w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @b : tensor<16xf32> = #gacc.zeros
gacc.train_step @small params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64, effective_batch = 8 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// With one micro-batch of 8 the loop folds away; the phase markers still
// place the peak in the backward (it was reported in the setup).
// ONE-LABEL: memory plan of @small on cpu: micro-batch 8 × 1 accumulation steps
// ONE:       peak at linalg.generic in the backward ({{.*}}plan-memory.mlir:
