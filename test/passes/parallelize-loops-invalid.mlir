// RUN: not gacc-opt %s -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=0}))' 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not gacc-opt %s -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=2 min-iterations=0}))' 2>&1 | FileCheck %s --check-prefix=MIN

// A team of no threads (or more than the CPU pipeline's 1024), or a
// threshold of no iterations: one error before any function runs, however
// many functions the module has.
// THREADS: error: gacc-parallelize-loops: threads and min-iterations must be positive, got 0 and 32768
// THREADS-NOT: error
// MIN: error: gacc-parallelize-loops: threads and min-iterations must be positive, got 2 and 0
// MIN-NOT: error
// RUN: not gacc-opt %s -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=100000}))' 2>&1 | FileCheck %s --check-prefix=MANY
// MANY: error: gacc-parallelize-loops: threads must be at most 1024, got 100000
// MANY-NOT: error
func.func @f(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) {
  linalg.copy ins(%x : memref<64x1024xf32>) outs(%y : memref<64x1024xf32>)
  return
}

func.func @g(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) {
  linalg.copy ins(%x : memref<64x1024xf32>) outs(%y : memref<64x1024xf32>)
  return
}
