// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-recompute-activations | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-recompute-activations -cse | FileCheck %s --check-prefix=CSE
// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-recompute-activations=policy=cheap | FileCheck %s --check-prefix=CHEAP
// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-recompute-activations=policy=none | FileCheck %s --check-prefix=NONE

// A marked relu: its output dies in the forward; the weight gradient reads
// a clone built from the kept input, just before it.
// CHECK-LABEL: gacc.train_step @marked
// CHECK:       %[[R:.*]] = gacc.relu %[[X:[^ ]*]] : tensor<4x8xf32>
// CHECK:       gacc.linear %[[R]]
// CHECK:       gacc.phase_begin backward
// CHECK-NOT:   %[[R]]
// CHECK:       %[[K:.*]] = gacc.recompute_inputs %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:  %[[R2:.*]] = gacc.relu %[[K]] : tensor<4x8xf32>
// CHECK-NEXT:  linalg.matmul {{.*}} ins(%{{.*}}, %[[R2]] :
// CSE keeps the clone apart from the forward op (its input differs).
// CSE-LABEL:   gacc.train_step @marked
// CSE:         gacc.phase_begin backward
// CSE:         gacc.recompute_inputs
// CSE-NEXT:    gacc.relu
// policy=none recomputes nothing, marks or not.
// NONE-NOT:    gacc.recompute_inputs
// The cheap policy keeps an elementwise op whose recomputation would keep
// more alive than it frees: c = a + b of two linear outputs (the backward
// reads neither) would keep both instead of c.
// CHEAP-LABEL: gacc.train_step @wider_inputs
// CHEAP:       gacc.phase_begin backward
// CHEAP-NOT:   gacc.recompute_inputs
// CHEAP:       gacc.yield
// A marked loss is not cloned for the yield (the forward's loss is the
// one yielded), and a marked op without operands stays in the forward.
// CHECK-LABEL: gacc.train_step @marked_loss_and_constant
// CHECK-NOT:   gacc.recompute_inputs
// CHECK:       gacc.yield
// Without marks nothing is recomputed.
// CHECK-LABEL: gacc.train_step @unmarked
// CHECK-NOT:   gacc.recompute_inputs
// CHECK:       gacc.yield

gacc.param @w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.param @b : tensor<16xf32> = #gacc.zeros
gacc.train_step @marked params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %r = gacc.relu %x {gacc.recompute} : tensor<4x8xf32>
  %z = gacc.linear %r, %w bias %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
gacc.train_step @wider_inputs params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %p = gacc.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %q = gacc.linear %x, %w bias %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %c = arith.addf %p, %q : tensor<4x16xf32>
  %l = gacc.cross_entropy %c, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
gacc.train_step @marked_loss_and_constant params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %k = arith.constant {gacc.recompute} dense<2.0> : tensor<4x16xf32>
  %z = gacc.linear %x, %w bias %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %s = arith.mulf %z, %k : tensor<4x16xf32>
  %l = gacc.cross_entropy %s, %y {gacc.recompute} : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
gacc.train_step @unmarked params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  %r = gacc.relu %x : tensor<4x8xf32>
  %z = gacc.linear %r, %w bias %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A marked block (embedding, gelu, layer_norm): the chain is recomputed
// together from the block's inputs (the micro-batch's tokens and the
// parameters); the clones read each other directly, and only values of
// the forward pass through gacc.recompute_inputs.
// CHECK-LABEL: gacc.train_step @block
// CHECK:       gacc.phase_begin backward
// CHECK:       %[[KE:.*]]:2 = gacc.recompute_inputs %arg{{[0-9]+}}, %arg{{[0-9]+}} : tensor<2x5xi32>, tensor<8x4xf32>
// CHECK-NEXT:  %[[E:.*]] = gacc.embedding %[[KE]]#0, %[[KE]]#1 :
// CHECK-NEXT:  %[[A:.*]] = gacc.gelu %[[E]] :
// CHECK-NEXT:  %[[KN:.*]]:2 = gacc.recompute_inputs %arg{{[0-9]+}}, %arg{{[0-9]+}} : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  gacc.layer_norm %[[A]], %[[KN]]#0, %[[KN]]#1 :
// The cheap policy recomputes the embedding, gelu and layer_norm, not the
// linear layer (a contraction) or the loss; the marks are gone after.
// CHEAP-LABEL: gacc.train_step @block
// CHEAP-NOT:   gacc.recompute}
// CHEAP:       gacc.phase_begin backward
// CHEAP:       gacc.recompute_inputs
// CHEAP-NEXT:  gacc.embedding
// CHEAP-NEXT:  gacc.gelu
// CHEAP-NEXT:  gacc.recompute_inputs
// CHEAP-NEXT:  gacc.layer_norm
// CHEAP-NOT:   gacc.linear
// CHEAP:       gacc.yield

gacc.param @emb : tensor<8x4xf32> = #gacc.zeros
gacc.param @g : tensor<4xf32> = #gacc.constant<value = 1.0>
gacc.param @beta : tensor<4xf32> = #gacc.zeros
gacc.param @w : tensor<8x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.train_step @block params [@emb, @g, @beta, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%emb: tensor<8x4xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %w: tensor<8x4xf32>, %t: tensor<2x5xi32>, %y: tensor<2x5xi32>):
  %e = gacc.embedding %t, %emb {gacc.recompute} : tensor<2x5xi32>, tensor<8x4xf32> -> tensor<2x5x4xf32>
  %a = gacc.gelu %e {gacc.recompute} : tensor<2x5x4xf32>
  %n = gacc.layer_norm %a, %g, %beta {gacc.recompute} : tensor<2x5x4xf32>, tensor<4xf32>, tensor<4xf32>
  %z = gacc.linear %n, %w : tensor<2x5x4xf32>, tensor<8x4xf32> -> tensor<2x5x8xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x5x8xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
