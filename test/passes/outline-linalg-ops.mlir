// RUN: gacc-opt %s -split-input-file -gacc-outline-linalg-ops | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Each linalg op on buffers moves into a private noinline function of its
// own; the constant its body uses from above is remade inside (so that the
// factor stays a constant for LLVM), the buffers become arguments. The two
// scalings of @step are the same op on other buffers and share one
// function; the addition is another op and gets another. An op inside the
// micro-batch loop is outlined too, and the loop's bound stays where it is.
// Every memref argument is a whole buffer (an argument of the step), so
// their aligned pointers are recorded as noalias: fields 1 and 8, each 2-D
// descriptor having 3 + 2·2 = 7 fields (allocated and aligned pointer,
// offset, two sizes, two strides).

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x8xf32>, %[[B:[^:]+]]: memref<4x8xf32>, %[[C:[^:]+]]: memref<4x8xf32>
// CHECK: call @step_generic_0(%[[A]], %[[B]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: call @step_generic_0(%[[B]], %[[C]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: scf.for
// CHECK-NEXT: call @step_generic_2(%[[A]], %[[B]], %[[C]])
// CHECK-NOT: linalg.generic
// CHECK: return

// CHECK: func.func private @step_generic_0(%[[X:.+]]: memref<4x8xf32>, %[[Y:.+]]: memref<4x8xf32>) attributes {gacc.noalias_pointers = array<i64: 1, 8>, passthrough = ["noinline"]}
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[X]] : memref<4x8xf32>) outs(%[[Y]] : memref<4x8xf32>)
// CHECK: arith.mulf %{{.+}}, %[[TWO]] : f32
// CHECK: return
// CHECK-NOT: func.func private @step_generic_1(
// CHECK: func.func private @step_generic_2(%{{.+}}: memref<4x8xf32>, %{{.+}}: memref<4x8xf32>, %{{.+}}: memref<4x8xf32>) attributes {gacc.noalias_pointers = array<i64: 1, 8, 15>, passthrough = ["noinline"]}
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

// -----

// The views an op reads and writes through move into its function, so
// that two views of one buffer are one argument (LLVM then sees one base
// pointer and both offsets): the shifted sum of two slices of %x takes %x
// once, and the view of the micro-batch (a subview at the loop's induction
// variable) takes the variable as a scalar argument, after the buffer
// (what the views read comes first), then the fill's value: one
// descriptor, whose aligned pointer is field 1.

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @views(
// CHECK-SAME: %[[X:[^:]+]]: memref<4x9xf32>, %[[Y:[^:]+]]: memref<4x8xf32>, %[[S:[^:]+]]: f32
// CHECK: call @views_generic_0(%[[X]], %[[Y]]) : (memref<4x9xf32>, memref<4x8xf32>) -> ()
// CHECK: scf.for %[[I:[^ ]+]] =
// CHECK-NEXT: call @views_fill_1(%[[X]], %[[I]], %[[S]]) : (memref<4x9xf32>, index, f32) -> ()
// CHECK-NOT: memref.subview

// CHECK: func.func private @views_generic_0(%[[XA:.+]]: memref<4x9xf32>, %[[YA:.+]]: memref<4x8xf32>) attributes {gacc.noalias_pointers = array<i64: 1, 8>, passthrough = ["noinline"]}
// CHECK-DAG: %[[L:.+]] = memref.subview %[[XA]][0, 0] [4, 8] [1, 1]
// CHECK-DAG: %[[R:.+]] = memref.subview %[[XA]][0, 1] [4, 8] [1, 1]
// CHECK: linalg.generic {{.+}} ins(%[[L]], %[[R]] : {{.+}}) outs(%[[YA]] : memref<4x8xf32>)
// CHECK: func.func private @views_fill_1(%[[XB:.+]]: memref<4x9xf32>, %[[IA:.+]]: index, %[[SA:.+]]: f32) attributes {gacc.noalias_pointers = array<i64: 1>, passthrough = ["noinline"]}
// CHECK: %[[ROW:.+]] = memref.subview %[[XB]][%[[IA]], 0] [1, 9] [1, 1]
// CHECK: linalg.fill ins(%[[SA]] : f32) outs(%[[ROW]] :
func.func @views(%x: memref<4x9xf32>, %y: memref<4x8xf32>, %s: f32) {
  %l = memref.subview %x[0, 0] [4, 8] [1, 1] : memref<4x9xf32> to memref<4x8xf32, strided<[9, 1]>>
  %r = memref.subview %x[0, 1] [4, 8] [1, 1] : memref<4x9xf32> to memref<4x8xf32, strided<[9, 1], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %r : memref<4x8xf32, strided<[9, 1]>>, memref<4x8xf32, strided<[9, 1], offset: 1>>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 9] [1, 1] : memref<4x9xf32> to memref<1x9xf32, strided<[9, 1], offset: ?>>
    linalg.fill ins(%s : f32) outs(%row : memref<1x9xf32, strided<[9, 1], offset: ?>>)
  }
  return
}

// -----

// A linalg op on tensors is left where it is. A memref that is not a whole
// buffer (a loop-carried one, which may be the memory of another argument)
// records no noalias pointer for the op; neither does an op with a strided
// innermost access (a pooling tap, kept as LLVM's checked loops:
// hasUnitInnerStrides).

// CHECK-LABEL: func.func @mixed(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: func.func private @mixed_copy_0(%{{.+}}: memref<4xf32>, %{{.+}}: memref<4xf32>) attributes {passthrough = ["noinline"]}
// CHECK: func.func private @mixed_copy_1(%{{.+}}: memref<8xf32>, %{{.+}}: memref<4xf32>) attributes {passthrough = ["noinline"]}
// CHECK: memref.subview %{{.+}}[0] [4] [2]
func.func @mixed(%t: tensor<4xf32>, %m: memref<4xf32>, %w: memref<8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %r = linalg.fill ins(%zero : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %last = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %m) -> (memref<4xf32>) {
    linalg.copy ins(%acc : memref<4xf32>) outs(%m : memref<4xf32>)
    scf.yield %acc : memref<4xf32>
  }
  %even = memref.subview %w[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  linalg.copy ins(%even : memref<4xf32, strided<[2]>>) outs(%m : memref<4xf32>)
  return %r : tensor<4xf32>
}

// -----

// The same op in two functions (a step and its predict function compute
// the same forward layers) is one outlined function: it follows the first
// caller and keeps that caller's name.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @shared_step(
// CHECK: call @shared_step_generic_0(
// CHECK: func.func private @shared_step_generic_0(
// CHECK-LABEL: func.func @shared_predict(
// CHECK: call @shared_step_generic_0(
// CHECK-NOT: func.func private @shared_predict_generic
func.func @shared_step(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  }
  return
}
func.func @shared_predict(%p: memref<4xf32>, %q: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : memref<4xf32>) outs(%q : memref<4xf32>) {
  ^bb0(%u: f32, %v: f32):
    %w = arith.negf %u : f32
    linalg.yield %w : f32
  }
  return
}
