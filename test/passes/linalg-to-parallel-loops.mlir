// RUN: gacc-opt %s -gacc-linalg-to-parallel-loops -canonicalize | FileCheck %s
// RUN: gacc-opt %s -gacc-linalg-to-parallel-loops -cse | FileCheck %s --check-prefix=ONE-THREAD

// A bias gradient over 8432 rows into 128 features (too few threads):
// split 248 ways (the largest divisor of 8432 at most min(8432 / 32,
// 65536 / 128, 512)), thread t = k · 128 + j summing rows k, k + 248, ...
// of feature j from -0.0 (the identity of IEEE addition), 8 rows per iteration (34 = 4 · 8 + 2: an
// epilogue takes the last 2); then one thread per feature adds its 248
// partial sums to the output in order, in a register.
// CHECK-LABEL: func.func @bias_grad
// CHECK-DAG: %[[C34:.*]] = arith.constant 34 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C248:.*]] = arith.constant 248 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[PART:.*]] = memref.alloc() : memref<31744xf32>
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK: %[[K:.*]] = arith.divui %[[T]], %[[C128]]
// CHECK: %[[J:.*]] = arith.remui %[[T]], %[[C128]]
// CHECK: %[[S8:.*]] = scf.for %[[C:.*]] = %{{.*}} to %[[C32]] step %[[C8]] iter_args(%[[A:.*]] = %[[ZERO]]) -> (f32)
// CHECK: %[[M:.*]] = arith.muli %[[C]], %[[C248]]
// CHECK: %[[ROW:.*]] = arith.addi %[[M]], %[[K]]
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[J]]]
// CHECK: arith.addf %[[A]], %[[X]] : f32
// CHECK-COUNT-7: memref.load %arg0
// CHECK: %[[S:.*]] = scf.for %{{.*}} = %[[C32]] to %[[C34]] step %{{.*}} iter_args(%{{.*}} = %[[S8]]) -> (f32)
// CHECK: memref.store %[[S]], %[[PART]][%[[T]]]
// CHECK: scf.parallel (%[[J2:.*]]) =
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[J2]]]
// CHECK: %[[TOTAL:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C248]] step %[[C8]] iter_args(%{{.*}} = %[[INIT]]) -> (f32)
// CHECK: memref.load %[[PART]]
// CHECK: memref.store %[[TOTAL]], %arg1[%[[J2]]]
// CHECK: memref.dealloc %[[PART]]
func.func @bias_grad(%g: memref<8432x128xf32>, %out: memref<128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<8432x128xf32>) outs(%out : memref<128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// Not a sum (a maximum): one thread per row, the row's output loaded
// once, carried in a register through the loop (unrolled by 8; the
// 10-term loop's first 8 are straight-line code after canonicalization)
// and stored once.
// CHECK-LABEL: func.func @row_max
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NEXT: %[[INIT:.*]] = memref.load %arg1[%[[R]]]
// CHECK-NEXT: %[[X0:.*]] = memref.load %arg0[%[[R]], %c0]
// CHECK-NEXT: %[[M0:.*]] = arith.maximumf %[[INIT]], %[[X0]]
// CHECK-NEXT: %[[X1:.*]] = memref.load %arg0[%[[R]], %c1]
// CHECK-NEXT: arith.maximumf %[[M0]], %[[X1]]
// CHECK: %[[MAX:.*]] = scf.for %[[K:.*]] = %c8 to %c10 step %c1 iter_args
// CHECK: memref.store %[[MAX]], %arg1[%[[R]]]
func.func @row_max(%x: memref<32x10xf32>, %out: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x10xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}

// A short sum to a scalar (32 terms, too few to split), a rank-0 op and a
// fill of a scalar: each a parallel loop of one iteration, so that the GPU
// mapping makes it a kernel instead of host code reading device memory.
// (Canonicalization folds one-iteration loops: the second RUN line checks
// the pass's own output.)
// ONE-THREAD-LABEL: func.func @scalars
// ONE-THREAD: %[[ONE:.*]] = arith.constant 1 : index
// ONE-THREAD: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[ONE]])
// ONE-THREAD: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// ONE-THREAD: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}})
// ONE-THREAD: arith.mulf
// ONE-THREAD: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}})
// ONE-THREAD: memref.store %{{.*}}, %arg3[]
// ONE-THREAD-NOT: linalg
func.func @scalars(%x: memref<32xf32>, %sum: memref<f32>, %a: memref<f32>, %z: memref<f64>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<32xf32>) outs(%sum : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>],
                  iterator_types = []}
      outs(%a : memref<f32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %o : f32
    linalg.yield %m : f32
  }
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%z : memref<f64>)
  return
}

// A squared norm to a scalar: split 512 ways (consecutive threads read
// consecutive elements), the partial sums added in order by one thread.
// CHECK-LABEL: func.func @sum_squares
// ONE-THREAD-LABEL: func.func @sum_squares
// CHECK: %[[PART:.*]] = memref.alloc() : memref<512xf64>
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %c392 step %c8
// CHECK: arith.remui %{{.*}}, %c784
// CHECK: arith.divui %{{.*}}, %c784
// CHECK: scf.for %{{.*}} = %{{.*}} to %c512 step %c8
// CHECK: memref.dealloc %[[PART]]
func.func @sum_squares(%x: memref<256x784xf32>, %out: memref<f64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<256x784xf32>) outs(%out : memref<f64>) {
  ^bb0(%in: f32, %acc: f64):
    %e = arith.extf %in : f32 to f64
    %q = arith.mulf %e, %e : f64
    %s = arith.addf %acc, %q : f64
    linalg.yield %s : f64
  }
  return
}

// Two sums in one op (a layer norm's weight and bias gradients, f64): both
// split alike, one partials buffer each, combined by the same threads.
// CHECK-LABEL: func.func @two_sums
// CHECK: %[[P0:.*]] = memref.alloc() : memref<31744xf64>
// CHECK: %[[P1:.*]] = memref.alloc() : memref<31744xf64>
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (f64, f64)
// CHECK: memref.store %{{.*}}, %[[P0]]
// CHECK: memref.store %{{.*}}, %[[P1]]
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (f64, f64)
// CHECK: memref.dealloc %[[P0]]
// CHECK: memref.dealloc %[[P1]]
func.func @two_sums(%g: memref<8432x128xf32>, %x: memref<8432x128xf32>, %dw: memref<128xf64>, %db: memref<128xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g, %x : memref<8432x128xf32>, memref<8432x128xf32>) outs(%dw, %db : memref<128xf64>, memref<128xf64>) {
  ^bb0(%gi: f32, %xi: f32, %w: f64, %b: f64):
    %p = arith.mulf %gi, %xi : f32
    %pe = arith.extf %p : f32 to f64
    %ge = arith.extf %gi : f32 to f64
    %nw = arith.addf %w, %pe : f64
    %nb = arith.addf %ge, %b : f64
    linalg.yield %nw, %nb : f64, f64
  }
  return
}

// Two outputs, one of them not a sum (a maximum): neither is split.
// CHECK-LABEL: func.func @sum_and_max
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: arith.addf
// CHECK: arith.maximumf
func.func @sum_and_max(%g: memref<8432x16xf32>, %s: memref<16xf32>, %m: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<8432x16xf32>) outs(%s, %m : memref<16xf32>, memref<16xf32>) {
  ^bb0(%gi: f32, %a: f32, %b: f32):
    %ns = arith.addf %a, %gi : f32
    %nm = arith.maximumf %b, %gi : f32
    linalg.yield %ns, %nm : f32, f32
  }
  return
}

// Two sums where the second adds the first's running value: not a split
// (stage 1 would start that term from zero), one thread per output.
// CHECK-LABEL: func.func @chained_sums
// CHECK-NOT: memref.alloc
// CHECK: scf.for {{.*}} -> (f32, f32)
func.func @chained_sums(%g: memref<1024x4xf32>, %s: memref<4xf32>, %t: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<1024x4xf32>) outs(%s, %t : memref<4xf32>, memref<4xf32>) {
  ^bb0(%gi: f32, %a: f32, %b: f32):
    %na = arith.addf %a, %gi : f32
    %nb = arith.addf %b, %na : f32
    linalg.yield %na, %nb : f32, f32
  }
  return
}

// An output indexed by a reduction dimension (legal linalg, but not one
// thread per output element): left to convert-linalg-to-parallel-loops.
// CHECK-LABEL: func.func @output_on_reduction
// CHECK: linalg.generic
func.func @output_on_reduction(%x: memref<8x4xf32>, %o: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x4xf32>) outs(%o : memref<8x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// An element-wise op becomes one parallel loop over its elements; an op
// with a dynamic shape is left to convert-linalg-to-parallel-loops.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c8)
// CHECK-NEXT: %[[V:.*]] = memref.load %arg0[%[[I]]]
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]]
// CHECK-NEXT: memref.store %[[SQ]], %arg0[%[[I]]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg1 : memref<?xf32>)
func.func @left_alone(%x: memref<8xf32>, %y: memref<?xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      outs(%x : memref<8xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %o : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%y : memref<?xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %acc, %in : f32
    linalg.yield %t : f32
  }
  return
}
