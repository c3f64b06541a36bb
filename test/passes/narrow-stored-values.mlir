// RUN: gacc-opt %s -split-input-file -gacc-narrow-stored-values | FileCheck %s

// In a bf16 function, two rounded values (linalg ops yielding an extf from
// bf16) become bf16 tensors: each op yields the rounded value into a bf16
// init, an elementwise reader extends its argument in its body, and the
// product takes both as bf16 operands (its body extends them). The
// function's mark stays for gacc-mark-gemm-inputs.

// CHECK-LABEL: func.func @rounded(
// CHECK-SAME: gacc.compute_precision = #gacc.precision<bf16>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xbf16>
// CHECK: %[[X:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4x8xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T]] : bf16
// CHECK-NEXT: } -> tensor<4x8xbf16>
// CHECK: %[[W:.*]] = linalg.generic
// CHECK: } -> tensor<8x2xbf16>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[AE:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: math.tanh %[[AE]] : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @rounded(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x8xf32>)
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
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = linalg.matmul ins(%x16, %w16 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x16 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  return %y, %g : tensor<4x2xf32>, tensor<4x8xf32>
}

// -----

// A rounded value the function returns keeps fp32, and so does the other
// operand of its product, rounded as it is: a product takes two bf16
// operands or none.

// CHECK-LABEL: func.func @returned(
// CHECK-NOT: xbf16>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>)
// CHECK-NOT: xbf16>
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @returned(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x8xf32>)
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
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = linalg.matmul ins(%x16, %w16 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y, %x16 : tensor<4x2xf32>, tensor<4x8xf32>
}

// -----

// Views, a transpose and gacc.recompute_inputs pass the narrowed type on;
// an insertion into a zero fill takes a bf16 fill as its destination (the
// fp32 fill, read by nothing else, is erased), and a concatenation of
// rounded values is narrowed with them; a weight
// gradient's gacc.matmul_accumulate takes two bf16 factors into its fp32
// accumulator. A value that is not rounded (%dz, computed in fp32 and
// never rounded) keeps fp32, and with it the product it feeds.

// CHECK-LABEL: func.func @moved(
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: } -> tensor<4x8xbf16>
// CHECK: %[[V:.*]] = tensor.expand_shape %[[R]] {{.*}} : tensor<4x8xbf16> into tensor<2x2x8xbf16>
// CHECK: %[[TE:.*]] = tensor.empty() : tensor<2x8x2xbf16>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[V]] : tensor<2x2x8xbf16>) outs(%[[TE]] : tensor<2x8x2xbf16>)
// CHECK: gacc.recompute_inputs %[[T]] : tensor<2x8x2xbf16>
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32)
// CHECK: %[[C:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: %[[F:.*]] = linalg.fill ins(%[[C]] : bf16) outs(%{{.*}} : tensor<4x16xbf16>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[R]] into %[[F]][0, 0] [4, 8] [1, 1] : tensor<4x8xbf16> into tensor<4x16xbf16>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[R]] into %[[I0]][0, 8] [4, 8] [1, 1] : tensor<4x8xbf16> into tensor<4x16xbf16>
// CHECK: gacc.matmul_accumulate %[[I1]], %[[I1]] into %{{.*}} first %{{.*}} {transpose_a} : tensor<4x16xbf16>, tensor<4x16xbf16> into tensor<16x16xf32>
// CHECK: %[[U:.*]] = linalg.generic
// CHECK: } -> tensor<4x8xf32>
// CHECK: gacc.matmul_accumulate %{{.*}}, %[[U]] into %{{.*}} first %{{.*}} {transpose_a} : tensor<4x16xf32>, tensor<4x8xf32> into tensor<16x8xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @moved(%x: tensor<4x8xf32>, %dz: tensor<4x16xf32>, %acc: tensor<16x16xf32>, %acc2: tensor<16x8xf32>, %first: i1)
    -> (tensor<2x8x2xf32>, tensor<16x16xf32>, tensor<16x8xf32>)
    attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %e = tensor.empty() : tensor<4x8xf32>
  %x16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %x3 = tensor.expand_shape %x16 [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  %et = tensor.empty() : tensor<2x8x2xf32>
  %xt = linalg.transpose ins(%x3 : tensor<2x2x8xf32>) outs(%et : tensor<2x8x2xf32>) permutation = [0, 2, 1]
  %kept = gacc.recompute_inputs %xt : tensor<2x8x2xf32>
  %e3 = tensor.empty() : tensor<2x8x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%kept : tensor<2x8x2xf32>) outs(%e3 : tensor<2x8x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<2x8x2xf32>
  %c0 = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<4x16xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%e16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %i0 = tensor.insert_slice %x16 into %zero[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %i1 = tensor.insert_slice %x16 into %i0[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %g = gacc.matmul_accumulate %i1, %i1 into %acc first %first {transpose_a} : tensor<4x16xf32>, tensor<4x16xf32> into tensor<16x16xf32> -> tensor<16x16xf32>
  %u16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    %t = arith.truncf %h : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %g2 = gacc.matmul_accumulate %dz, %u16 into %acc2 first %first {transpose_a} : tensor<4x16xf32>, tensor<4x8xf32> into tensor<16x8xf32> -> tensor<16x8xf32>
  return %y, %g, %g2 : tensor<2x8x2xf32>, tensor<16x16xf32>, tensor<16x8xf32>
}

// -----

// fp16 works the same way; a function without a low precision is left
// alone.

// CHECK-LABEL: func.func @half(
// CHECK: linalg.generic
// CHECK: } -> tensor<4x8xf16>
// CHECK-LABEL: func.func @fp32(
// CHECK-NOT: xbf16>
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @half(%x: tensor<4x8xf32>) -> tensor<4x8xf32>
    attributes {gacc.compute_precision = #gacc.precision<fp16>} {
  %e = tensor.empty() : tensor<4x8xf32>
  %x16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to f16
    %r = arith.extf %t : f16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x16 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}
func.func @fp32(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %x16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x16 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

// One empty as an insertion's destination and as the init of another
// insertion's zero fill: both get destinations of their own and the fp32
// ones, read by nothing else, are erased (each once).

// CHECK-LABEL: func.func @shared_destination(
// CHECK-NOT: tensor.empty() : tensor<4x16xf32>
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32)
// CHECK: tensor.insert_slice {{.*}} : tensor<4x8xbf16> into tensor<4x16xbf16>
// CHECK: tensor.insert_slice {{.*}} : tensor<4x8xbf16> into tensor<4x16xbf16>
// CHECK: tensor.empty() : tensor<4x16xf32>
// CHECK-NOT: tensor.empty() : tensor<4x16xf32>
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_destination(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
    attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %e = tensor.empty() : tensor<4x8xf32>
  %x16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %r = arith.extf %t : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %c0 = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<4x16xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%e16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %i0 = tensor.insert_slice %x16 into %zero[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %i1 = tensor.insert_slice %x16 into %e16[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %g0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%i0 : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4x16xf32>
  %g1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%i1 : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4x16xf32>
  return %g0, %g1 : tensor<4x16xf32>, tensor<4x16xf32>
}
