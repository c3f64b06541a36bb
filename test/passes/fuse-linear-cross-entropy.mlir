// RUN: gacc-opt %s -split-input-file -gacc-fuse-linear-cross-entropy=min-logits-bytes=0 | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-fuse-linear-cross-entropy=min-logits-bytes=441 | FileCheck %s --check-prefix=SMALL
// RUN: gacc-opt %s -split-input-file -gacc-fuse-linear-cross-entropy | FileCheck %s --check-prefix=SMALL

// A head and its cross-entropy become one op, the bias, ignore_index and
// label smoothing carried over and the head gone. Its logits take 440
// bytes: below a threshold of 441 bytes (and the default 64 MiB) nothing
// changes.
// CHECK-LABEL: func.func @head(
// CHECK-SAME: %[[H:[^:]+]]: tensor<2x5x7xf32>, %[[W:[^:]+]]: tensor<11x7xf32>, %[[B:[^:]+]]: tensor<11xf32>, %[[Y:[^:]+]]: tensor<2x5xi32>
// CHECK-NOT: gacc.linear %
// CHECK: %[[L:.+]] = gacc.linear_cross_entropy %[[H]], %[[W]], %[[Y]] bias %[[B]] {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64} : tensor<2x5x7xf32>, tensor<11x7xf32>, tensor<2x5xi32>, tensor<11xf32> -> tensor<f32>
// CHECK-NOT: gacc.cross_entropy
// CHECK: return %[[L]]
// SMALL-LABEL: func.func @head(
// SMALL: gacc.linear %
// SMALL: gacc.cross_entropy
// SMALL-NOT: gacc.linear_cross_entropy
func.func @head(%h: tensor<2x5x7xf32>, %w: tensor<11x7xf32>, %b: tensor<11xf32>, %y: tensor<2x5xi32>) -> tensor<f32> {
  %z = gacc.linear %h, %w bias %b : tensor<2x5x7xf32>, tensor<11x7xf32>, tensor<11xf32> -> tensor<2x5x11xf32>
  %l = gacc.cross_entropy %z, %y {ignore_index = 0 : i64, label_smoothing = 0.1 : f64} : tensor<2x5x11xf32>, tensor<2x5xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Logits that something else reads as well are computed whole anyway:
// nothing is fused.
// CHECK-LABEL: func.func @logits_read_twice(
// CHECK: %[[Z:.+]] = gacc.linear %
// CHECK: gacc.cross_entropy %[[Z]]
// CHECK-NOT: gacc.linear_cross_entropy
func.func @logits_read_twice(%h: tensor<4x7xf32>, %w: tensor<11x7xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<4x11xf32>) {
  %z = gacc.linear %h, %w : tensor<4x7xf32>, tensor<11x7xf32> -> tensor<4x11xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x11xf32>, tensor<4xi32> -> tensor<f32>
  return %l, %z : tensor<f32>, tensor<4x11xf32>
}

// -----

// Logits that are not a gacc.linear's stay as they are.
// CHECK-LABEL: func.func @not_a_head(
// CHECK: gacc.cross_entropy %
// CHECK-NOT: gacc.linear_cross_entropy
func.func @not_a_head(%z: tensor<4x11xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %l = gacc.cross_entropy %z, %y : tensor<4x11xf32>, tensor<4xi32> -> tensor<f32>
  return %l : tensor<f32>
}
