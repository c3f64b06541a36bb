// RUN: gacc-opt %s -gacc-outline-linalg-ops | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Each linalg op on buffers moves into a private noinline function of its
// own; the constant its body uses from above is remade inside (so that the
// factor stays a constant for LLVM), the buffers become arguments. The two
// scalings of @step are the same op on other buffers and share one
// function; the addition is another op and gets another. An op inside the
// micro-batch loop is outlined too, and the loop's bound stays where it is.

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x8xf32>, %[[B:[^:]+]]: memref<4x8xf32>, %[[C:[^:]+]]: memref<4x8xf32>
// CHECK: call @step_generic_0(%[[A]], %[[B]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: call @step_generic_0(%[[B]], %[[C]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: scf.for
// CHECK-NEXT: call @step_generic_2(%[[A]], %[[B]], %[[C]])
// CHECK-NOT: linalg.generic
// CHECK: return

// CHECK: func.func private @step_generic_0(%[[X:.+]]: memref<4x8xf32>, %[[Y:.+]]: memref<4x8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[X]] : memref<4x8xf32>) outs(%[[Y]] : memref<4x8xf32>)
// CHECK: arith.mulf %{{.+}}, %[[TWO]] : f32
// CHECK: return
// CHECK-NOT: func.func private @step_generic_1(
// CHECK: func.func private @step_generic_2(%{{.+}}: memref<4x8xf32>, %{{.+}}: memref<4x8xf32>, %{{.+}}: memref<4x8xf32>) attributes {passthrough = ["noinline"]}
// CHECK: arith.addf
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %two : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %two : f32
    linalg.yield %y : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}

// A linalg op on tensors is left where it is; a scalar it reads from the
// function's arguments becomes an argument of the outlined function.

// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %[[T:[^:]+]]: tensor<4xf32>, %[[M:[^:]+]]: memref<4xf32>, %[[S:[^:]+]]: f32
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[T]] : tensor<4xf32>)
// CHECK: call @mixed_fill_0(%[[S]], %[[M]]) : (f32, memref<4xf32>) -> ()
func.func @mixed(%t: tensor<4xf32>, %m: memref<4xf32>, %s: f32) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.fill ins(%zero : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  linalg.fill ins(%s : f32) outs(%m : memref<4xf32>)
  return %r : tensor<4xf32>
}
