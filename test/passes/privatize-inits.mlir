// RUN: gacc-opt %s -gacc-privatize-inits | FileCheck %s

// A zero-filled init shared by two matmuls (as CSE leaves identical fills)
// is cloned for the second, so each writes its own buffer; the empty
// tensor the fills share is cloned in turn.

// CHECK-LABEL: func.func @shared_init(
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<2x2xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3x2xf32>) outs(%[[Z]] : tensor<2x2xf32>)
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[Z2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<2x2xf32>)
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3x2xf32>) outs(%[[Z2]] : tensor<2x2xf32>)
func.func @shared_init(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %c: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  %q = linalg.matmul ins(%a, %c : tensor<2x3xf32>, tensor<3x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %p, %q : tensor<2x2xf32>, tensor<2x2xf32>
}
