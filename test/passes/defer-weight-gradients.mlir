// RUN: gacc-opt %s -split-input-file -gacc-defer-weight-gradients | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-defer-weight-gradients=max-window-bytes=1024 | FileCheck %s --check-prefix=SMALL

// A 784 -> 256 layer at m = 8, N = 32: accumulating moves 63 · 256 · 784
// elements per window, deferring 2 · 256 · (256 + 784) + 256 · 784. The
// output gradient is copied into a [256, 256] window buffer carried by the
// loop at rows [8i, 8i + 8); the input is a slice of the window input, so
// the product reads the input collapsed to [256, 784]. The accumulator
// passes through the loop; one product with first = true follows it.
// CHECK-LABEL: func.func @wide_layer(
// CHECK-SAME: %[[IN:[^:]+]]: tensor<32x8x784xf32>, %[[ACC0:[^:]+]]: tensor<256x784xf32>
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<256x256xf32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %[[IN]] {{\[}}[0, 1], [2]] : tensor<32x8x784xf32> into tensor<256x784xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]], %[[W:.*]] = %[[EMPTY]])
// CHECK-NOT: gacc.matmul_accumulate
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[C8]] : index
// CHECK: %[[W1:.*]] = tensor.insert_slice %{{.*}} into %[[W]][%[[ROW]], 0] [8, 256] [1, 1] : tensor<8x256xf32> into tensor<256x256xf32>
// CHECK: scf.yield %[[ACC]], %[[W1]]
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[DW:.*]] = gacc.matmul_accumulate %[[LOOP]]#1, %[[X]] into %[[LOOP]]#0 first %[[TRUE]] {transpose_a} : tensor<256x256xf32>, tensor<256x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
// CHECK: return %[[DW]]
// The window buffers take 32 · 8 · (256 + 784) · 4 bytes: over 1024.
// SMALL-LABEL: func.func @wide_layer(
// SMALL: scf.for
// SMALL: gacc.matmul_accumulate
// SMALL-NEXT: scf.yield
// SMALL-NOT: gacc.matmul_accumulate
// SMALL: return
func.func @wide_layer(%in: tensor<32x8x784xf32>, %acc0: tensor<256x784xf32>, %w: tensor<256x784xf32>) -> tensor<256x784xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %r = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %acc0) -> (tensor<256x784xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %x = tensor.extract_slice %in[%i, 0, 0] [1, 8, 784] [1, 1, 1] : tensor<32x8x784xf32> to tensor<8x784xf32>
    %e = tensor.empty() : tensor<8x256xf32>
    %dy = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%x, %w : tensor<8x784xf32>, tensor<256x784xf32>) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<8x256xf32>, tensor<8x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    scf.yield %a : tensor<256x784xf32>
  }
  return %r : tensor<256x784xf32>
}

// -----

// A micro-batch of 512 rows into a 64 x 64 weight: accumulating moves
// 7 · 64 · 64 elements, deferring 2 · 4 · 512 · 128 + 64 · 64: the
// product stays in the loop. Neither operand is a window slice here.
// CHECK-LABEL: func.func @tall_micro_batch(
// CHECK: scf.for
// CHECK: gacc.matmul_accumulate %{{.*}}, %{{.*}} into %{{.*}} first %{{.*}} {transpose_a}
// CHECK: scf.yield
// CHECK-NOT: gacc.matmul_accumulate
func.func @tall_micro_batch(%dy: tensor<512x64xf32>, %x: tensor<512x64xf32>, %acc0: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %acc0) -> (tensor<64x64xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<512x64xf32>, tensor<512x64xf32> into tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %a : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// Not deferred: a window whose accumulator does not restart at the loop's
// first iteration (a resumable step's loop from %start; a loop with static
// bounds whose `first` is another iteration), an accumulator that two
// products update (a shared weight), a product with transpose_b.
// CHECK-LABEL: func.func @not_whole_window(
// CHECK: scf.for
// CHECK: gacc.matmul_accumulate
// CHECK-NEXT: scf.yield
// CHECK-LABEL: func.func @restarts_later(
// CHECK: scf.for
// CHECK: gacc.matmul_accumulate
// CHECK-NEXT: scf.yield
// CHECK-LABEL: func.func @transposed_b(
// CHECK: scf.for
// CHECK: gacc.matmul_accumulate
// CHECK-NEXT: scf.yield
// CHECK-LABEL: func.func @shared_weight(
// CHECK: scf.for
// CHECK: gacc.matmul_accumulate
// CHECK: gacc.matmul_accumulate
// CHECK: scf.yield
// CHECK-NOT: gacc.matmul_accumulate
func.func @not_whole_window(%dy: tensor<2x256xf32>, %x: tensor<2x784xf32>, %acc0: tensor<256x784xf32>, %start: index) -> tensor<256x784xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %start to %c8 step %c1 iter_args(%acc = %acc0) -> (tensor<256x784xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<2x256xf32>, tensor<2x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    scf.yield %a : tensor<256x784xf32>
  }
  return %r : tensor<256x784xf32>
}

func.func @restarts_later(%dy: tensor<2x256xf32>, %x: tensor<2x784xf32>, %acc0: tensor<256x784xf32>) -> tensor<256x784xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0) -> (tensor<256x784xf32>) {
    %first = arith.cmpi eq, %i, %c1 : index
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<2x256xf32>, tensor<2x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    scf.yield %a : tensor<256x784xf32>
  }
  return %r : tensor<256x784xf32>
}

func.func @transposed_b(%dy: tensor<2x256xf32>, %x: tensor<784x2xf32>, %acc0: tensor<256x784xf32>) -> tensor<256x784xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0) -> (tensor<256x784xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a, transpose_b} : tensor<2x256xf32>, tensor<784x2xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    scf.yield %a : tensor<256x784xf32>
  }
  return %r : tensor<256x784xf32>
}

func.func @shared_weight(%dy: tensor<2x256xf32>, %x: tensor<2x784xf32>, %acc0: tensor<256x784xf32>) -> tensor<256x784xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %false = arith.constant false
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0) -> (tensor<256x784xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<2x256xf32>, tensor<2x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    %b = gacc.matmul_accumulate %dy, %x into %a first %false {transpose_a} : tensor<2x256xf32>, tensor<2x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    scf.yield %b : tensor<256x784xf32>
  }
  return %r : tensor<256x784xf32>
}

// -----

// Two deferrals in a loop from 2 by 3 (4 iterations) with another carried
// value between them: the micro-batch index is (iv − 2) / 3, the rows of
// the window at index · 2; neither operand is read in place (the window
// shortcut needs a loop from 0 by 1); the products follow the loop in
// order, each into its own accumulator, and the loss sum stays in place.
// The two products share their operands: one window buffer for each.
// CHECK-LABEL: func.func @two_weights(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<256x784xf32>, %[[L0:[^:]+]]: f32, %[[B0:[^:]+]]: tensor<784x256xf32>
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[R:.*]]:5 = scf.for %[[I:.*]] = %[[C2]] to %{{.*}} step %[[C3]] iter_args(%[[A:.*]] = %[[A0]], %[[L:.*]] = %[[L0]], %[[B:.*]] = %[[B0]], %[[W0:.*]] = %{{.*}}, %[[W1:.*]] = %{{.*}})
// CHECK-NOT: gacc.matmul_accumulate
// CHECK: %[[D:.*]] = arith.subi %[[I]], %[[C2]] : index
// CHECK: %[[K:.*]] = arith.divui %[[D]], %[[C3]] : index
// CHECK: %[[ROW:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK: tensor.insert_slice %{{.*}} into %[[W0]][%[[ROW]], 0] [2, 256]
// CHECK: tensor.insert_slice %{{.*}} into %[[W1]][%{{.*}}, 0] [2, 784]
// CHECK-NOT: tensor.insert_slice
// CHECK: scf.yield %[[A]], %{{.*}}, %[[B]],
// CHECK: %[[P0:.*]] = gacc.matmul_accumulate %[[R]]#3, %[[R]]#4 into %[[R]]#0 first %{{.*}} {transpose_a} : tensor<8x256xf32>, tensor<8x784xf32>
// CHECK: %[[P1:.*]] = gacc.matmul_accumulate %[[R]]#4, %[[R]]#3 into %[[R]]#2 first %{{.*}} {transpose_a} : tensor<8x784xf32>, tensor<8x256xf32>
// CHECK: return %[[P0]], %[[R]]#1, %[[P1]]
func.func @two_weights(%a0: tensor<256x784xf32>, %l0: f32, %b0: tensor<784x256xf32>, %dy: tensor<2x256xf32>, %x: tensor<2x784xf32>) -> (tensor<256x784xf32>, f32, tensor<784x256xf32>) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c14 = arith.constant 14 : index
  %one = arith.constant 1.0 : f32
  %r:3 = scf.for %i = %c2 to %c14 step %c3 iter_args(%a = %a0, %l = %l0, %b = %b0) -> (tensor<256x784xf32>, f32, tensor<784x256xf32>) {
    %first = arith.cmpi eq, %c2, %i : index
    %na = gacc.matmul_accumulate %dy, %x into %a first %first {transpose_a} : tensor<2x256xf32>, tensor<2x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    %nl = arith.addf %l, %one : f32
    %nb = gacc.matmul_accumulate %x, %dy into %b first %first {transpose_a} : tensor<2x784xf32>, tensor<2x256xf32> into tensor<784x256xf32> -> tensor<784x256xf32>
    scf.yield %na, %nl, %nb : tensor<256x784xf32>, f32, tensor<784x256xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<256x784xf32>, f32, tensor<784x256xf32>
}
