// RUN: gacc-opt %s -gacc-reductions-innermost | FileCheck %s

// A bias gradient, Σ over the rows: iterators [reduction, parallel] become
// [parallel, reduction] with both maps permuted, the body unchanged.
// CHECK-DAG: #[[ROWMAJOR_T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[MID:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @bias_grad
// CHECK: linalg.generic {indexing_maps = [#[[ROWMAJOR_T]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%arg0 : memref<8x4xf32>) outs(%arg1 : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
func.func @bias_grad(%g: memref<8x4xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<8x4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// Three dimensions [reduction, parallel, reduction] → [d1, d0, d2]: the
// reductions keep their relative order.
// CHECK-LABEL: func.func @middle_parallel
// CHECK: indexing_maps = [#[[MID]], #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]
func.func @middle_parallel(%x: memref<2x3x5xf32>, %out: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>],
                  iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : memref<2x3x5xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// Already parallel-first, all-parallel and all-reduction generics stay.
// CHECK-LABEL: func.func @unchanged
// CHECK: indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel"]
// CHECK: iterator_types = ["reduction"]
func.func @unchanged(%x: memref<4x8xf32>, %row: memref<4xf32>, %v: memref<4xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%row : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %acc, %in : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%row : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%v : memref<4xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %acc, %in : f32
    linalg.yield %t : f32
  }
  return
}
