// RUN: gacc-opt %s -split-input-file -gacc-parallelize-loops=threads=2 -cse | FileCheck %s
// RUN: gacc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=4 min-iterations=1}))' | FileCheck %s --check-prefix=FOUR
// RUN: gacc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=1}))' | FileCheck %s --check-prefix=ONE
// RUN: gacc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=3 min-iterations=1},cse))' | FileCheck %s --check-prefix=THREE

// An elementwise op over [64, 1024] (65536 iterations) on two threads: an
// scf.parallel of two slabs of 32 rows, the op on their subviews. On four
// threads, four slabs of 16 rows. On one thread nothing changes.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[X:[^:]+]]: memref<64x1024xf32>, %[[Y:[^:]+]]: memref<64x1024xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK: scf.parallel (%[[I:.+]]) = (%[[C0]]) to (%[[C64]]) step (%[[C32]]) {
// CHECK-NEXT: %[[XS:.+]] = memref.subview %[[X]][%[[I]], 0] [32, 1024] [1, 1]
// CHECK-NEXT: %[[YS:.+]] = memref.subview %[[Y]][%[[I]], 0] [32, 1024] [1, 1]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[XS]] : memref<32x1024xf32, strided<[1024, 1], offset: ?>>) outs(%[[YS]] : memref<32x1024xf32, strided<[1024, 1], offset: ?>>)
// CHECK: arith.maximumf
// CHECK: scf.reduce
// CHECK-NOT: linalg.generic
// CHECK: return
// FOUR-LABEL: func.func @elementwise(
// FOUR: scf.parallel
// FOUR-NEXT: memref.subview %{{.+}}[%{{.+}}, 0] [16, 1024] [1, 1]
// ONE-LABEL: func.func @elementwise(
// ONE-NOT: scf.parallel
// ONE: linalg.generic {{.*}} ins(%{{.+}} : memref<64x1024xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x1024xf32>) outs(%y : memref<64x1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A bias gradient (the sum over 512 rows of each of 256 columns; the
// reduction is the second iteration dimension, the parallel one reads
// the columns) splits its columns, never its reduction: each thread sums
// whole columns in the op's order.
// CHECK-LABEL: func.func @bias_gradient(
// CHECK-SAME: %[[DY:[^:]+]]: memref<512x256xf32>, %[[DB:[^:]+]]: memref<256xf32>
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK: scf.parallel (%[[J:.+]]) = (%{{.+}}) to (%[[C256]]) step (%[[C128]]) {
// CHECK-NEXT: %[[DYS:.+]] = memref.subview %[[DY]][0, %[[J]]] [512, 128] [1, 1]
// CHECK-NEXT: %[[DBS:.+]] = memref.subview %[[DB]][%[[J]]] [128] [1]
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[DYS]] : memref<512x128xf32, strided<[256, 1], offset: ?>>) outs(%[[DBS]] : memref<128xf32, strided<[1], offset: ?>>)
func.func @bias_gradient(%dy: memref<512x256xf32>, %db: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%dy : memref<512x256xf32>) outs(%db : memref<256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// [5, 8192]: two slabs of 3 and 2 rows would leave a thread 60% of the
// work; the 8192 columns split evenly, so they are the slabs.
// CHECK-LABEL: func.func @uneven_rows(
// CHECK: scf.parallel (%[[J:.+]]) =
// CHECK-NEXT: memref.subview %{{.+}}[0, %[[J]]] [5, 4096] [1, 1]
// CHECK-NEXT: memref.subview %{{.+}}[0, %[[J]]] [5, 4096] [1, 1]
// CHECK-NEXT: linalg.copy
func.func @uneven_rows(%x: memref<5x8192xf32>, %y: memref<5x8192xf32>) {
  linalg.copy ins(%x : memref<5x8192xf32>) outs(%y : memref<5x8192xf32>)
  return
}

// -----

// Only one dimension, 40000 rows of an op reading linalg.index: two slabs
// of 20000; upstream tiling offsets the index by the slab's first row.
// CHECK-LABEL: func.func @index_semantics(
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK: linalg.generic
// CHECK: %[[L:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[G:.+]] = affine.apply #{{.+}}(%[[I]])[%[[L]]]
// CHECK-NEXT: arith.index_cast %[[G]]
func.func @index_semantics(%y: memref<40000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%y : memref<40000xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    linalg.yield %f : f32
  }
  return
}

// -----

// What stays serial: an op below min-iterations (16384 < 32768), dynamic
// ranges, only reduction dimensions, and an op already inside an
// scf.parallel. With min-iterations=1 and four threads, the small op is
// split (its 128 rows in four slabs); the others still are not.
// CHECK-LABEL: func.func @serial(
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy ins(%{{.+}} : memref<128x128xf32>)
// CHECK: linalg.copy ins(%{{.+}} : memref<?x65536xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]}
// CHECK: scf.parallel
// CHECK-NEXT: linalg.copy ins(%{{.+}} : memref<256x256xf32>)
// CHECK-NOT: scf.parallel
// FOUR-LABEL: func.func @serial(
// FOUR: scf.parallel
// FOUR-NEXT: memref.subview %{{.+}}[%{{.+}}, 0] [32, 128] [1, 1]
// FOUR-NOT: scf.parallel
// FOUR: linalg.copy ins(%{{.+}} : memref<?x65536xf32>)
// FOUR: linalg.generic {{.*}} iterator_types = ["reduction"]}
// FOUR: scf.parallel
// FOUR-NEXT: linalg.copy ins(%{{.+}} : memref<256x256xf32>)
func.func @serial(%a: memref<128x128xf32>, %b: memref<128x128xf32>,
                  %d: memref<?x65536xf32>, %e: memref<?x65536xf32>,
                  %v: memref<65536xf32>, %s: memref<f32>,
                  %p: memref<256x256xf32>, %q: memref<256x256xf32>) {
  linalg.copy ins(%a : memref<128x128xf32>) outs(%b : memref<128x128xf32>)
  linalg.copy ins(%d : memref<?x65536xf32>) outs(%e : memref<?x65536xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%v : memref<65536xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.copy ins(%p : memref<256x256xf32>) outs(%q : memref<256x256xf32>)
  }
  return
}

// -----

// Three threads over 64 rows: slabs of 22, 22 and 20 rows, the last one's
// size through affine.min (a subview of dynamic size). With the default
// min-iterations its 4096 iterations stay serial.
// THREE-LABEL: func.func @partial_slab(
// THREE: %[[C22:.+]] = arith.constant 22 : index
// THREE: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%{{.+}}) step (%[[C22]]) {
// THREE-NEXT: %[[N:.+]] = affine.min #{{.+}}(%[[I]])
// THREE: memref.subview %{{.+}}[%[[I]], 0] [%[[N]], 64] [1, 1] : memref<64x64xf32> to memref<?x64xf32, strided<[64, 1], offset: ?>>
// CHECK-LABEL: func.func @partial_slab(
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy ins(%{{.+}} : memref<64x64xf32>)
func.func @partial_slab(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
  linalg.copy ins(%x : memref<64x64xf32>) outs(%y : memref<64x64xf32>)
  return
}

// -----

// A parallel dimension that indexes no output (d1 here: every column of a
// row writes the row's one output element) is never split: its slabs would
// write the same outputs. The 5 rows split (3 + 2) although the 8192
// columns would split more evenly; an op whose output no parallel
// dimension indexes, or indexes through a map that is no projected
// permutation (d0 + d1: neighbouring slabs would share outputs), stays
// serial.
// CHECK-LABEL: func.func @parallel_dimension_outside_the_output(
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: %[[N:.+]] = affine.min
// CHECK: memref.subview %{{.+}}[%[[I]], 0] [%[[N]], 8192] [1, 1]
// CHECK: memref.subview %{{.+}}[%[[I]]] [%[[N]]] [1]
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : memref<f32>)
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : memref<65538xf32>)
// CHECK-NOT: scf.parallel
func.func @parallel_dimension_outside_the_output(%x: memref<5x8192xf32>, %y: memref<5xf32>, %s: memref<f32>,
                                                 %w: memref<65536x3xf32>, %v: memref<65538xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<5x8192xf32>) outs(%y : memref<5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<5x8192xf32>) outs(%s : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 + d1)>], iterator_types = ["parallel", "reduction"]}
      ins(%w : memref<65536x3xf32>) outs(%v : memref<65538xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}
