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
// SMALL: scf.yield
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
// first iteration (a resumable step's loop from %start), and an
// accumulator that two products update (a shared weight).
// CHECK-LABEL: func.func @not_whole_window(
// CHECK: scf.for
// CHECK: gacc.matmul_accumulate
// CHECK: scf.yield
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
