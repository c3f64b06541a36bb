// RUN: gacc-opt %s -split-input-file -gacc-mark-gemm-inputs | FileCheck %s

// In a function of compute precision bf16, a product whose operands are
// rounded to bf16 (a linalg op yielding an extf from bf16) is marked, also
// when an operand reaches it through a reshape and a transpose (values
// moved, not changed); the function's own mark is consumed.

// CHECK-LABEL: func.func @rounded(
// CHECK-NOT: gacc.compute_precision
// CHECK: linalg.matmul {gacc.gemm_inputs = #gacc.precision<bf16>}
// CHECK: linalg.batch_matmul {gacc.gemm_inputs = #gacc.precision<bf16>}
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @rounded(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %q: tensor<2x2x8xf32>) -> (tensor<4x2xf32>, tensor<2x2x2xf32>)
    attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %e = tensor.empty() : tensor<4x8xf32>
  %x16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %ew = tensor.empty() : tensor<8x2xf32>
  %w16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x2xf32>) outs(%ew : tensor<8x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %g = math.tanh %a : f32
    %t = arith.truncf %g : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<8x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = linalg.matmul ins(%x16, %w16 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %x3 = tensor.expand_shape %x16 [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  %et = tensor.empty() : tensor<2x8x2xf32>
  %xt = linalg.transpose ins(%x3 : tensor<2x2x8xf32>) outs(%et : tensor<2x8x2xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<2x2x2xf32>
  %c0 = arith.constant 0.0 : f32
  %s = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %b = linalg.batch_matmul ins(%x3, %xt : tensor<2x2x8xf32>, tensor<2x8x2xf32>) outs(%s : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %y, %b : tensor<4x2xf32>, tensor<2x2x2xf32>
}

// -----

// A product with an operand that is not rounded (a softmax's result, as in
// attention's forward, or a function argument) is not marked; nor is any
// product of a function without the mark (fp32). A fill or constant exact
// in bf16 (0.5) holds bf16 values, one that is not (0.1) does not.

// CHECK-LABEL: func.func @not_rounded(
// CHECK-NOT: gacc.compute_precision
// CHECK: linalg.softmax
// CHECK: linalg.batch_matmul ins(
// CHECK: linalg.matmul {gacc.gemm_inputs = #gacc.precision<bf16>} ins(
// CHECK: linalg.matmul ins(
// CHECK: linalg.matmul ins(
// CHECK-LABEL: func.func @fp32(
// CHECK: linalg.matmul ins(
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @not_rounded(%s: tensor<2x2x2xf32>, %v32: tensor<2x2x8xf32>, %x: tensor<4x8xf32>) -> (tensor<2x2x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
    attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %ev = tensor.empty() : tensor<2x2x8xf32>
  %v = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v32 : tensor<2x2x8xf32>) outs(%ev : tensor<2x2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<2x2x8xf32>
  %e = tensor.empty() : tensor<2x2x2xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x2x2xf32>) outs(%e : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %o0 = tensor.empty() : tensor<2x2x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x2x2xf32>, tensor<2x2x8xf32>) outs(%o0 : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  %ex = tensor.empty() : tensor<4x8xf32>
  %c05 = arith.constant 0.5 : f32
  %half = linalg.fill ins(%c05 : f32) outs(%ex : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w = arith.constant dense<0.5> : tensor<8x2xf32>
  %w01 = arith.constant dense<0.1> : tensor<8x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y1 = linalg.matmul ins(%half, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y2 = linalg.matmul ins(%half, %w01 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y3 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o, %y1, %y2, %y3 : tensor<2x2x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}
func.func @fp32() -> tensor<4x2xf32> {
  %c05 = arith.constant 0.5 : f32
  %ex = tensor.empty() : tensor<4x8xf32>
  %half = linalg.fill ins(%c05 : f32) outs(%ex : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %w16 = arith.constant dense<0.5> : tensor<8x2xf32>
  %y = linalg.matmul ins(%half, %w16 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// fp16: the weight-gradient GEMM fused into its accumulator
// (gacc.matmul_accumulate) reads rounded values through a slice; the mark
// names fp16. A bf16 rounding does not make fp16 values.

// CHECK-LABEL: func.func @half(
// CHECK-NOT: gacc.compute_precision
// CHECK: gacc.matmul_accumulate {{.+}} {gacc.gemm_inputs = #gacc.precision<fp16>, transpose_a}
// CHECK: gacc.matmul_accumulate
// CHECK-NOT: gemm_inputs
// CHECK-SAME: tensor<4x3xf32>, tensor<4x2xf32> into tensor<3x2xf32> -> tensor<3x2xf32>
#id1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @half(%a: tensor<8x3xf32>, %b: tensor<4x2xf32>, %c: tensor<3x2xf32>, %first: i1) -> (tensor<3x2xf32>, tensor<3x2xf32>)
    attributes {gacc.compute_precision = #gacc.precision<fp16>} {
  %e = tensor.empty() : tensor<8x3xf32>
  %a16 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.truncf %x : f32 to f16
    %r = arith.extf %t : f16 to f32
    linalg.yield %r : f32
  } -> tensor<8x3xf32>
  %ab = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.truncf %x : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<8x3xf32>
  %eb = tensor.empty() : tensor<4x2xf32>
  %b16 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x2xf32>) outs(%eb : tensor<4x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.truncf %x : f32 to f16
    %r = arith.extf %t : f16 to f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %s = tensor.extract_slice %a16[0, 0] [4, 3] [1, 1] : tensor<8x3xf32> to tensor<4x3xf32>
  %r1 = gacc.matmul_accumulate %s, %b16 into %c first %first {transpose_a} : tensor<4x3xf32>, tensor<4x2xf32> into tensor<3x2xf32> -> tensor<3x2xf32>
  %sb = tensor.extract_slice %ab[0, 0] [4, 3] [1, 1] : tensor<8x3xf32> to tensor<4x3xf32>
  %r2 = gacc.matmul_accumulate %sb, %b16 into %c first %first {transpose_a} : tensor<4x3xf32>, tensor<4x2xf32> into tensor<3x2xf32> -> tensor<3x2xf32>
  return %r1, %r2 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// What does not hold bf16 values everywhere: an insert into, a
// concatenation with, or padding with an unrounded value; a linalg result
// that yields its init, that does not write every element (a strided
// output map), or a reduction whose init is unrounded; a loop-carried
// value; a fill of a value bf16 cannot hold (0.1). None of these products
// is marked, and a mark the input carries on an unproven product (here in
// an fp32 function too) is dropped.

// CHECK-LABEL: func.func @negatives(
// CHECK-NOT: gemm_inputs
// CHECK: return
// CHECK-LABEL: func.func @stale(
// CHECK-NOT: gemm_inputs
// CHECK: return
#m = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @negatives(%x: tensor<4x8xf32>, %u: tensor<4x8xf32>, %pad: f32, %v4: tensor<4xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
    attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %y = arith.extf %t : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %w = arith.constant dense<0.5> : tensor<8x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  // A rounded slice inserted into an unrounded tensor.
  %top = tensor.extract_slice %r[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %ins = tensor.insert_slice %top into %u[0, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
  %p1 = linalg.matmul ins(%ins, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // A rounded half concatenated with an unrounded one.
  %uh = tensor.extract_slice %u[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %cat = tensor.concat dim(0) %top, %uh : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %p2 = linalg.matmul ins(%cat, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // Rounded values padded with an unrounded scalar.
  %padded = tensor.pad %top low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pad : f32
  } : tensor<2x8xf32> to tensor<4x8xf32>
  %p3 = linalg.matmul ins(%padded, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // A generic that yields its (unrounded) init.
  %own = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x8xf32>) outs(%u : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  %p4 = linalg.matmul ins(%own, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // Rounded values written to every other column of an unrounded tensor.
  %half = tensor.extract_slice %r[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %strided = linalg.generic {indexing_maps = [#m, affine_map<(d0, d1) -> (d0, d1 * 2)>], iterator_types = ["parallel", "parallel"]}
      ins(%half : tensor<4x4xf32>) outs(%u : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  %p5 = linalg.matmul ins(%strided, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // A reduction yielding rounded elements into an unrounded init (which
  // it keeps where the reduction is empty).
  %last = linalg.generic {indexing_maps = [#m, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<4x8xf32>) outs(%v4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %lastm = tensor.expand_shape %last [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %w1 = arith.constant dense<0.5> : tensor<1x2xf32>
  %p6 = linalg.matmul ins(%lastm, %w1 : tensor<4x1xf32>, tensor<1x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // A loop-carried value.
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p7 = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %r) -> tensor<4x8xf32> {
    scf.yield %acc : tensor<4x8xf32>
  }
  %p7m = linalg.matmul ins(%p7, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  // A fill of 0.1.
  %c01 = arith.constant 0.1 : f32
  %tenth = linalg.fill ins(%c01 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p8 = linalg.matmul ins(%tenth, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %p1, %p2, %p3, %p4, %p5, %p6, %p7m, %p8 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}
func.func @stale(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = linalg.matmul {gacc.gemm_inputs = #gacc.precision<bf16>} ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Operands kept from the forward through gacc.recompute_inputs (a block
// of gacc.linear_cross_entropy or gacc.attention recomputed in the
// backward) hold what they held: the recomputed product is marked.

// CHECK-LABEL: func.func @recomputed(
// CHECK: linalg.matmul {gacc.gemm_inputs = #gacc.precision<bf16>}
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @recomputed(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32>
    attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %e = tensor.empty() : tensor<4x8xf32>
  %x16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %ew = tensor.empty() : tensor<8x2xf32>
  %w16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x2xf32>) outs(%ew : tensor<8x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<8x2xf32>
  %kept:2 = gacc.recompute_inputs %x16, %w16 : tensor<4x8xf32>, tensor<8x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = linalg.matmul ins(%kept#0, %kept#1 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
