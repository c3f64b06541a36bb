// Input of interleaved-kernels.test: two chains of elementwise ops with
// different output positions (300 and 96), interleaved, and an op whose
// input the other chain's later op writes.

#id = affine_map<(d0) -> (d0)>

// A1  a = x·x           (300)
// B1  b = y + 1         (96)
// A2  o1 = a + x        (300: joins A1's kernel across B1)
// B2  o2 = b·b          (96: joins B1's kernel across A2)
// C1  p = x + 2         (300: joins the first kernel across B2)
// D   o2b = p[0..96)·b  (96: joins the second kernel across C1, which then
//                        runs before it, as the first kernel ends at C1)
// E   o3 = p·a          (300: may not join the first kernel, which would
//                        then run after D, the reader of its p)
func.func @kernel(%x: memref<300xf32>, %y: memref<96xf32>, %o1: memref<300xf32>,
                  %o2: memref<96xf32>, %o2b: memref<96xf32>, %o3: memref<300xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<300xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<300xf32>) outs(%a : memref<300xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc() : memref<96xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : memref<96xf32>) outs(%b : memref<96xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %one : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %x : memref<300xf32>, memref<300xf32>) outs(%o1 : memref<300xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %r = arith.addf %in, %in2 : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : memref<96xf32>) outs(%o2 : memref<96xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  }
  %p = memref.alloc() : memref<300xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<300xf32>) outs(%p : memref<300xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %two : f32
    linalg.yield %r : f32
  }
  %ph = memref.subview %p[0] [96] [1] : memref<300xf32> to memref<96xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%ph, %b : memref<96xf32, strided<[1]>>, memref<96xf32>) outs(%o2b : memref<96xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %r = arith.mulf %in, %in2 : f32
    linalg.yield %r : f32
  }
  memref.dealloc %b : memref<96xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %a : memref<300xf32>, memref<300xf32>) outs(%o3 : memref<300xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %r = arith.mulf %in, %in2 : f32
    linalg.yield %r : f32
  }
  memref.dealloc %a : memref<300xf32>
  memref.dealloc %p : memref<300xf32>
  return
}

func.func @value(%i: index) -> f32 {
  %a = arith.constant 1103515245 : i64
  %c = arith.constant 12345 : i64
  %m = arith.constant 2147483647 : i64
  %s = arith.constant 4.656612875e-10 : f32
  %h = arith.constant 0.5 : f32
  %i64 = arith.index_cast %i : index to i64
  %t = arith.muli %i64, %a : i64
  %u = arith.addi %t, %c : i64
  %v = arith.andi %u, %m : i64
  %f = arith.sitofp %v : i64 to f32
  %g = arith.mulf %f, %s : f32
  %r = arith.subf %g, %h : f32
  return %r : f32
}

func.func private @printI64(i64)
func.func private @printNewline()

// Counts the elements of `got` [n] that differ from `want` in any bit.
func.func @mismatches(%got: memref<?xf32>, %want: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %got, %c0 : memref<?xf32>
  %bad = scf.for %i = %c0 to %n step %c1 iter_args(%b = %c0) -> index {
    %g = memref.load %got[%i] : memref<?xf32>
    %w = memref.load %want[%i] : memref<?xf32>
    %ok = arith.cmpf oeq, %g, %w : f32
    %inc = arith.select %ok, %c0, %c1 : index
    %nb = arith.addi %b, %inc : index
    scf.yield %nb : index
  }
  %b64 = arith.index_cast %bad : index to i64
  func.call @printI64(%b64) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c96 = arith.constant 96 : index
  %c300 = arith.constant 300 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %x = memref.alloc() : memref<300xf32>
  %y = memref.alloc() : memref<96xf32>
  scf.for %i = %c0 to %c300 step %c1 {
    %v = func.call @value(%i) : (index) -> f32
    memref.store %v, %x[%i] : memref<300xf32>
  }
  scf.for %j = %c0 to %c96 step %c1 {
    %k = arith.addi %j, %c300 : index
    %v = func.call @value(%k) : (index) -> f32
    memref.store %v, %y[%j] : memref<96xf32>
  }
  %o1 = memref.alloc() : memref<300xf32>
  %o2 = memref.alloc() : memref<96xf32>
  %o2b = memref.alloc() : memref<96xf32>
  %o3 = memref.alloc() : memref<300xf32>
  func.call @kernel(%x, %y, %o1, %o2, %o2b, %o3) : (memref<300xf32>, memref<96xf32>, memref<300xf32>, memref<96xf32>, memref<96xf32>, memref<300xf32>) -> ()
  // The same values from scalar loops in the ops' order.
  %w1 = memref.alloc() : memref<300xf32>
  %w2 = memref.alloc() : memref<96xf32>
  %w2b = memref.alloc() : memref<96xf32>
  %w3 = memref.alloc() : memref<300xf32>
  scf.for %i = %c0 to %c300 step %c1 {
    %v = memref.load %x[%i] : memref<300xf32>
    %a = arith.mulf %v, %v : f32
    %r1 = arith.addf %a, %v : f32
    memref.store %r1, %w1[%i] : memref<300xf32>
    %p = arith.addf %v, %two : f32
    %r3 = arith.mulf %p, %a : f32
    memref.store %r3, %w3[%i] : memref<300xf32>
  }
  scf.for %j = %c0 to %c96 step %c1 {
    %v = memref.load %y[%j] : memref<96xf32>
    %b = arith.addf %v, %one : f32
    %r2 = arith.mulf %b, %b : f32
    memref.store %r2, %w2[%j] : memref<96xf32>
    %xv = memref.load %x[%j] : memref<300xf32>
    %p = arith.addf %xv, %two : f32
    %r2b = arith.mulf %p, %b : f32
    memref.store %r2b, %w2b[%j] : memref<96xf32>
  }
  %g1 = memref.cast %o1 : memref<300xf32> to memref<?xf32>
  %e1 = memref.cast %w1 : memref<300xf32> to memref<?xf32>
  func.call @mismatches(%g1, %e1) : (memref<?xf32>, memref<?xf32>) -> ()
  %g2 = memref.cast %o2 : memref<96xf32> to memref<?xf32>
  %e2 = memref.cast %w2 : memref<96xf32> to memref<?xf32>
  func.call @mismatches(%g2, %e2) : (memref<?xf32>, memref<?xf32>) -> ()
  %g2b = memref.cast %o2b : memref<96xf32> to memref<?xf32>
  %e2b = memref.cast %w2b : memref<96xf32> to memref<?xf32>
  func.call @mismatches(%g2b, %e2b) : (memref<?xf32>, memref<?xf32>) -> ()
  %g3 = memref.cast %o3 : memref<300xf32> to memref<?xf32>
  %e3 = memref.cast %w3 : memref<300xf32> to memref<?xf32>
  func.call @mismatches(%g3, %e3) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
