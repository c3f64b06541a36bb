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
// fill of a scalar: a parallel loop of one iteration, so that the GPU
// mapping makes it a kernel instead of host code reading device memory;
// the three have the same one output position and share no buffer, so
// one thread does all three, in order. (Canonicalization folds
// one-iteration loops: the second RUN line checks the pass's own output.)
// ONE-THREAD-LABEL: func.func @scalars
// ONE-THREAD: %[[ONE:.*]] = arith.constant 1 : index
// ONE-THREAD: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[ONE]])
// ONE-THREAD: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// ONE-THREAD: memref.store %{{.*}}, %arg1[]
// ONE-THREAD: arith.mulf
// ONE-THREAD: memref.store %{{.*}}, %arg2[]
// ONE-THREAD: memref.store %{{.*}}, %arg3[]
// ONE-THREAD-NOT: scf.parallel
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

// A row maximum and a two-output sum into fresh buffers that fills set
// for them alone (other buffers' fills between): no loop for those
// fills, and each thread starts from the fill's value in a register
// instead of loading it. The fill of the function's argument stays, a
// kernel of its own (the caller's %arg1 may overlap %x, which the others
// read); the maximum and the sums have the same 32 output positions and
// share no buffer: one kernel.
// CHECK-LABEL: func.func @fills_folded
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[MAX:.*]] = memref.alloc() : memref<32xf32>
// CHECK: scf.parallel
// CHECK: memref.store %[[ZERO]], %arg1
// CHECK: %[[S:.*]] = memref.alloc() : memref<32xf32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<32xf32>
// CHECK: scf.parallel (%[[R:.*]]) =
// CHECK-NOT: memref.load %[[MAX]]
// CHECK: memref.store %{{.*}}, %[[MAX]][%[[R]]]
// CHECK-NOT: memref.load %[[S]]
// CHECK-NOT: memref.load %[[T]]
// CHECK: arith.addf %{{.*}}, %[[ZERO]]
// CHECK: memref.store %{{.*}}, %[[S]][%[[R]]]
// CHECK: memref.store %{{.*}}, %[[T]][%[[R]]]
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @fills_folded(%x: memref<32x10xf32>, %arg: memref<32xf32>) -> (memref<32xf32>, memref<32xf32>, memref<32xf32>) {
  %neginf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<32xf32>
  linalg.fill ins(%neginf : f32) outs(%max : memref<32xf32>)
  linalg.fill ins(%zero : f32) outs(%arg : memref<32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x10xf32>) outs(%max : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  %s = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<32xf32>)
  %t = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x10xf32>) outs(%s, %t : memref<32xf32>, memref<32xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32):
    %na = arith.addf %a, %in : f32
    %e = math.exp %in : f32
    %nb = arith.addf %b, %e : f32
    linalg.yield %na, %nb : f32, f32
  }
  return %max, %s, %t : memref<32xf32>, memref<32xf32>, memref<32xf32>
}

// A split sum to a scalar from a fill: the second stage (one thread, its
// loop folded by -canonicalize) starts from the fill's value.
// CHECK-LABEL: func.func @split_from_fill
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<f64>
// CHECK: %[[PART:.*]] = memref.alloc() : memref<512xf64>
// CHECK: scf.parallel
// CHECK-NOT: memref.load %[[OUT]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c512 step %c8 iter_args(%{{.*}} = %[[ZERO]])
// CHECK: memref.store %{{.*}}, %[[OUT]][]
func.func @split_from_fill(%x: memref<256x784xf32>) -> memref<f64> {
  %zero = arith.constant 0.0 : f64
  %out = memref.alloc() : memref<f64>
  linalg.fill ins(%zero : f64) outs(%out : memref<f64>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<256x784xf32>) outs(%out : memref<f64>) {
  ^bb0(%in: f32, %acc: f64):
    %e = arith.extf %in : f32 to f64
    %s = arith.addf %acc, %e : f64
    linalg.yield %s : f64
  }
  return %out : memref<f64>
}

// Fills that stay: one read before the op, one whose buffer the op also
// reads (through another view), one of a view the op does not write, one
// of the whole buffer where the op writes a view of it.
// CHECK-LABEL: func.func @fills_kept
// CHECK-COUNT-4: memref.store %cst,
// CHECK-NOT: memref.store %cst,
// CHECK: return
func.func @fills_kept(%x: memref<32x10xf32>) -> (f32, memref<32xf32>, memref<32xf32>, memref<32x10xf32>, memref<32x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<32xf32>)
  %v = memref.load %a[%c0] : memref<32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x10xf32>) outs(%a : memref<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %b = memref.alloc() : memref<32xf32>
  %bv = memref.subview %b[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  %bw = memref.subview %b[16] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1], offset: 16>>
  linalg.fill ins(%zero : f32) outs(%bw : memref<16xf32, strided<[1], offset: 16>>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%bv : memref<16xf32, strided<[1]>>) outs(%bw : memref<16xf32, strided<[1], offset: 16>>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  %c = memref.alloc() : memref<32x10xf32>
  %cv = memref.subview %c[0, 0] [16, 10] [1, 1] : memref<32x10xf32> to memref<16x10xf32, strided<[10, 1]>>
  linalg.fill ins(%zero : f32) outs(%cv : memref<16x10xf32, strided<[10, 1]>>)
  %cw = memref.subview %c[16, 0] [16, 10] [1, 1] : memref<32x10xf32> to memref<16x10xf32, strided<[10, 1], offset: 160>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%cw : memref<16x10xf32, strided<[10, 1], offset: 160>>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  %d = memref.alloc() : memref<32x10xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<32x10xf32>)
  %dv = memref.subview %d[0, 0] [16, 10] [1, 1] : memref<32x10xf32> to memref<16x10xf32, strided<[10, 1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%dv : memref<16x10xf32, strided<[10, 1]>>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  return %v, %b, %b, %c, %d : f32, memref<32xf32>, memref<32xf32>, memref<32x10xf32>, memref<32x10xf32>
}

// A bias added in place and the ReLU that reads the sum (64 × 64 threads
// each, every thread on its own element of the sum): one kernel, each
// thread adding, storing, then loading its element back for the ReLU. A
// transposed read of the ReLU's output (another thread's element) is a
// kernel of its own, and so is a free of the sum between them that moves
// after the fused kernel.
// CHECK-LABEL: func.func @fused_chain
// CHECK: scf.parallel
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[H:.*]][
// CHECK: memref.load %[[H]][
// CHECK: arith.maximumf
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[H]]
// CHECK-NEXT: scf.parallel
// CHECK: arith.negf
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @fused_chain(%b: memref<64xf32>, %y: memref<64x64xf32>, %t: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<64xf32>) outs(%h : memref<64x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %a = arith.addf %o, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %h : memref<64x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<64x64xf32>) outs(%t : memref<64x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}

// Aliases that are not views (a memref.transpose) and two function
// arguments (the caller may pass overlapping memory) may share memory:
// no fill folded into an op that reads the filled buffer through the
// alias, and no op fused with one that writes memory it may read. Each op
// is a kernel of its own: five loops, the fill's among them.
// CHECK-LABEL: func.func @aliases_kept
// CHECK-COUNT-5: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @aliases_kept(%x: memref<8x8xf32>, %a: memref<8x8xf32>, %b: memref<8x8xf32>) -> memref<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<8x8xf32>
  %t = memref.transpose %buf (d0, d1) -> (d1, d0) : memref<8x8xf32> to memref<8x8xf32, strided<[1, 8]>>
  linalg.fill ins(%zero : f32) outs(%buf : memref<8x8xf32>)
  // Reads the filled buffer transposed while it adds to it.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x8xf32, strided<[1, 8]>>) outs(%buf : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  // Reads, through the alias, what the op before wrote at other elements.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x8xf32, strided<[1, 8]>>) outs(%x : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  // Writes one argument, then reads another.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<8x8xf32>) {
  ^bb0(%o: f32):
    %n = arith.negf %o : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8x8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return %buf : memref<8x8xf32>
}

// A bias gradient and its accumulate with the weight gradient's GEMM
// between them: with the GEMM named among the gemm-callees (it reads A and
// B, reads and writes C, and none of them is what the gradient writes),
// one kernel after the GEMM; without it, or where the GEMM writes what the
// gradient reads, two.
// GEMM-LABEL: func.func @across_gemm
// GEMM-NOT: scf.parallel
// GEMM: call @gacc_cublas_sgemm
// GEMM: scf.parallel
// GEMM: arith.addf
// GEMM: memref.store
// GEMM: arith.addf
// GEMM: memref.store
// GEMM-NOT: scf.parallel
// GEMM-LABEL: func.func @gemm_writes_input
// GEMM: scf.parallel
// GEMM: call @gacc_cublas_sgemm
// GEMM: scf.parallel
// CHECK-LABEL: func.func @across_gemm
// CHECK: scf.parallel
// CHECK: call @gacc_cublas_sgemm
// CHECK: scf.parallel
// RUN: gacc-opt %s -gacc-linalg-to-parallel-loops=gemm-callees=gacc_cublas_sgemm | FileCheck %s --check-prefix=GEMM
func.func private @gacc_cublas_sgemm(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32)
func.func @across_gemm(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?xf32, strided<[?, ?], offset: ?>>, %c: memref<?x?xf32, strided<[?, ?], offset: ?>>, %acc: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : i32
  // The output gradient, a buffer of the function (the caller's %c may
  // overlap an argument, never it).
  %dy = memref.alloc() : memref<32x16xf32>
  %g = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<32x16xf32>) outs(%g : memref<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  func.call @gacc_cublas_sgemm(%a, %b, %c, %i0, %i0, %zero) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32) -> ()
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%g : memref<16xf32>) outs(%acc : memref<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  memref.dealloc %g : memref<16xf32>
  memref.dealloc %dy : memref<32x16xf32>
  return
}
func.func @gemm_writes_input(%dy: memref<32x16xf32>, %a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?xf32, strided<[?, ?], offset: ?>>, %acc: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : i32
  %g = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<32x16xf32>) outs(%g : memref<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  %dyc = memref.cast %dy : memref<32x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  func.call @gacc_cublas_sgemm(%a, %b, %dyc, %i0, %i0, %zero) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32) -> ()
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%g : memref<16xf32>) outs(%acc : memref<16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  memref.dealloc %g : memref<16xf32>
  return
}

// One op writes an argument, the next reads another at the same elements:
// two kernels, as the caller might pass overlapping memory; one with
// distinct-arguments (abi::kDistinctArguments: gacc-run never does).
// RUN: gacc-opt %s -gacc-linalg-to-parallel-loops=distinct-arguments=true | FileCheck %s --check-prefix=DISTINCT
// CHECK-LABEL: func.func @two_arguments
// CHECK-COUNT-2: scf.parallel
// DISTINCT-LABEL: func.func @two_arguments
// DISTINCT: scf.parallel
// DISTINCT: arith.negf
// DISTINCT: arith.addf
// DISTINCT-NOT: scf.parallel
// DISTINCT: return
func.func @two_arguments(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<8x8xf32>) {
  ^bb0(%o: f32):
    %n = arith.negf %o : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  return
}

// Three ops of the same positions on arguments of their own: one kernel,
// which takes five [8, 8] descriptors (5 · 56 bytes) and the 128 bytes
// kept for its index arguments, 408 bytes in all. With
// max-parameter-bytes=300 the third op would take the kernel past it
// (the first two take 296): two kernels.
// RUN: gacc-opt %s -gacc-linalg-to-parallel-loops="distinct-arguments=true max-parameter-bytes=300" | FileCheck %s --check-prefix=PARAMS
// DISTINCT-LABEL: func.func @parameter_limit
// DISTINCT-COUNT-1: scf.parallel
// DISTINCT-NOT: scf.parallel
// DISTINCT: return
// PARAMS-LABEL: func.func @parameter_limit
// PARAMS: scf.parallel
// PARAMS: arith.negf
// PARAMS: arith.addf
// PARAMS-NOT: arith.mulf
// PARAMS: }
// PARAMS: scf.parallel
// PARAMS: arith.mulf
// PARAMS-NOT: scf.parallel
// PARAMS: return
func.func @parameter_limit(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>, %d: memref<8x8xf32>, %e: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<8x8xf32>) {
  ^bb0(%o: f32):
    %n = arith.negf %o : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%d : memref<8x8xf32>) outs(%e : memref<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %p = arith.mulf %o, %in : f32
    linalg.yield %p : f32
  }
  return
}
