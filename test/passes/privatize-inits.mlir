// RUN: gacc-opt %s -split-input-file -gacc-privatize-inits | FileCheck %s

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

// -----

// Uses in other blocks (a branch of an scf.if) get their clone there; an
// init that an op also reads as an input is privatized only for its uses as
// an init.

// CHECK-LABEL: func.func @nested(
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[A:.+]] = linalg.generic {{.+}} ins(%[[Z]] : tensor<4xf32>) outs(%[[Z]] : tensor<4xf32>)
// CHECK: scf.if
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[Z2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NEXT: linalg.generic {{.+}} ins(%{{.+}} : tensor<4xf32>) outs(%[[Z2]] : tensor<4xf32>)
func.func @nested(%x: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%z : tensor<4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %b = scf.if %c -> tensor<4xf32> {
    %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %r = arith.addf %p, %o : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
