// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-recompute-activations -verify-diagnostics
// RUN: not gacc-opt %s -split-input-file -gacc-recompute-activations=policy=some 2>&1 | FileCheck %s --check-prefix=POLICY
// POLICY: Cannot find option named 'some'!
// Before gacc-autodiff there is no backward to move ops into: said, not a
// silent no-op.
// RUN: gacc-opt %s -split-input-file -gacc-recompute-activations=policy=cheap 2>&1 | FileCheck %s --check-prefix=EARLY
// EARLY: warning: gacc.train_step @effects is left as it is: gacc-recompute-activations moves forward ops into the backward that gacc-autodiff builds (run gacc-autodiff first)

// A marked op with memory effects cannot run a second time.
gacc.param @w : tensor<16x8xf32> = #gacc.kaiming_uniform<fan_in = 8>
gacc.train_step @effects params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<16x8xf32>, %x: tensor<4x8xf32>, %y: tensor<4xi32>):
  // expected-error @below {{'memref.alloc' op is marked gacc.recompute but has memory effects: recomputing it in the backward would repeat them}}
  %m = memref.alloc() {gacc.recompute} : memref<4xf32>
  %z = gacc.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x16xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
