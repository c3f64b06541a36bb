// RUN: gacc-opt %s -gacc-reassociate-reductions | FileCheck %s

// The combiner of each reduced output gets `reassoc` (LLVM may then keep
// several partial sums); elementwise arithmetic, the ops that feed the
// combiner and ops without reduction iterators keep their flags.

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// CHECK-LABEL: func.func @sum_of_squares(
// CHECK: linalg.generic
// CHECK: %[[SQ:.*]] = arith.mulf %{{[^ ]+}}, %{{[^ ]+}} : f32{{$}}
// CHECK: arith.addf %{{.*}}, %[[SQ]] fastmath<reassoc> : f32
func.func @sum_of_squares(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id2, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// Flags already present are kept; the second output's maximum gets
// reassoc too.
// CHECK-LABEL: func.func @two_outputs(
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,nnan> : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @two_outputs(%x: memref<4x8xf32>, %sum: memref<4xf32>,
                       %max: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id2, #row, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%sum, %max : memref<4xf32>, memref<4xf32>) {
  ^bb0(%in: f32, %s0: f32, %m0: f32):
    %s = arith.addf %s0, %in fastmath<nnan> : f32
    %m = arith.maximumf %m0, %in : f32
    linalg.yield %s, %m : f32, f32
  }
  return
}

// A named reduction (linalg.reduce) is matched the same way.
// CHECK-LABEL: func.func @named(
// CHECK: linalg.reduce
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @named(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.reduce ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>)
      dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// No reduction iterators: nothing changes.
// CHECK-LABEL: func.func @elementwise(
// CHECK: arith.addf %{{[^ ]+}}, %{{[^ ]+}} : f32{{$}}
func.func @elementwise(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}
