// RUN: gacc-opt %s -split-input-file -gacc-collapse-dimensions | FileCheck %s

// An elementwise op over contiguous buffers runs as one loop over all its
// elements; a per-channel op over [m, C, H, W] (the channel vector indexed
// by d1) keeps (n) and (c) and runs H·W as one loop.

// CHECK-LABEL: func.func @elementwise_and_channel(
// CHECK-SAME: %[[X:[^:]+]]: memref<2x3x4x5xf32>, %[[M:[^:]+]]: memref<3xf32>, %[[Y:[^:]+]]: memref<2x3x4x5xf32>
// CHECK: %[[XA:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : memref<2x3x4x5xf32> into memref<120xf32>
// CHECK: %[[YA:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1, 2, 3]] : memref<2x3x4x5xf32> into memref<120xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[XA]] : memref<120xf32>) outs(%[[YA]] : memref<120xf32>)
// CHECK: %[[XB:.+]] = memref.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : memref<2x3x4x5xf32> into memref<2x3x20xf32>
// CHECK: %[[YB:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0], [1], [2, 3]] : memref<2x3x4x5xf32> into memref<2x3x20xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XB]], %[[M]] : memref<2x3x20xf32>, memref<3xf32>) outs(%[[YB]] : memref<2x3x20xf32>)
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c)>
func.func @elementwise_and_channel(%x: memref<2x3x4x5xf32>, %m: memref<3xf32>, %y: memref<2x3x4x5xf32>) {
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x3x4x5xf32>) outs(%y : memref<2x3x4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : memref<2x3x4x5xf32>, memref<3xf32>) outs(%y : memref<2x3x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A per-channel reduction (reduction, parallel, reduction, reduction) runs
// H·W as one reduction loop; n stays apart (its neighbour c is parallel).

// CHECK-LABEL: func.func @channel_sum(
// CHECK: %[[XC:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<2x3x4x5xf32> into memref<2x3x20xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[XC]] : memref<2x3x20xf32>) outs(%{{.+}} : memref<3xf32>)
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c)>
func.func @channel_sum(%x: memref<2x3x4x5xf32>, %s: memref<3xf32>) {
  linalg.generic {indexing_maps = [#id4, #ch4], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4x5xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A view whose rows are not contiguous (a padded slice: rows of 6, 4 of
// them used) keeps (h) and (w) apart; so does an op with a strided
// innermost access (a stride-2 tap), which keeps all its dimensions; and
// an op reading linalg.index.

// CHECK-LABEL: func.func @not_contiguous(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.+}}, %{{.+}} : memref<6x4xf32>, memref<6x4xf32, strided<[6, 1], offset: 1>>)
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : memref<6x4xf32, strided<[16, 2]>>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%{{.+}} : memref<6x4xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @not_contiguous(%a: memref<6x4xf32>, %p: memref<6x6xf32>, %q: memref<12x8xf32>, %y: memref<6x4xf32>) {
  %slice = memref.subview %p[0, 1] [6, 4] [1, 1] : memref<6x6xf32> to memref<6x4xf32, strided<[6, 1], offset: 1>>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %slice : memref<6x4xf32>, memref<6x4xf32, strided<[6, 1], offset: 1>>) outs(%y : memref<6x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  }
  %tap = memref.subview %q[0, 0] [6, 4] [2, 2] : memref<12x8xf32> to memref<6x4xf32, strided<[16, 2]>>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%tap : memref<6x4xf32, strided<[16, 2]>>) outs(%y : memref<6x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<6x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  return
}
