// RUN: gacc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=0}))' -verify-diagnostics
// RUN: gacc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(gacc-parallelize-loops{threads=2 min-iterations=0}))' -verify-diagnostics

// A team of no threads, or a threshold of no iterations: one error on the
// function.
// expected-error @below {{gacc-parallelize-loops: threads and min-iterations must be positive}}
func.func @f(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) {
  linalg.copy ins(%x : memref<64x1024xf32>) outs(%y : memref<64x1024xf32>)
  return
}
