// RUN: gacc-opt %s -split-input-file -gacc-fuse-elementwise | FileCheck %s

// A chain of elementwise ops becomes one generic that applies the same
// scalar ops in the same order.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x3xf32>, %[[Y:[^:]+]]: tensor<4x3xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[Y]] : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[A]] : f32
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[T]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#id = affine_map<(i, j) -> (i, j)>
func.func @chain(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %y : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}

// -----

// A producer with two users is not fused: it would be computed twice.

// CHECK-LABEL: func.func @shared(
// CHECK: %[[T:.+]] = linalg.generic
// CHECK: math.tanh
// CHECK: linalg.generic {{.+}} ins(%[[T]]
// CHECK: linalg.generic {{.+}} ins(%[[T]]
#id = affine_map<(i) -> (i)>
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %u, %v : tensor<4xf32>, tensor<4xf32>
}

// -----

// A producer that a reduction reads through a projected map (once per
// point of the reduced dimension j) is not fused: it would be recomputed
// for every j.

// CHECK-LABEL: func.func @reduction_consumer(
// CHECK: %[[T:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4xf32>)
// CHECK: math.tanh
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %[[T]] : tensor<4x3xf32>, tensor<4xf32>)
func.func @reduction_consumer(%x: tensor<4xf32>, %y: tensor<4x3xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%y, %t : tensor<4x3xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
