// RUN: gacc-opt %s -split-input-file -convert-gacc-to-blas -verify-diagnostics

// The entry point's name is taken by a function of another type: the
// product is not converted (and nothing of its call is left behind).
// expected-error @below {{matched function 'gacc_sgemm' but with different type}}
func.func private @gacc_sgemm(i32)

func.func @taken(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  // expected-error @below {{failed to legalize operation 'gacc.matmul_accumulate'}}
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}

// -----

// expected-error @below {{matched function 'gacc_sgemm' but with different type}}
func.func private @gacc_sgemm(i32)

func.func @taken_plain(%a: memref<3x4xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>) {
  // expected-error @below {{failed to legalize operation 'linalg.matmul'}}
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x2xf32>) outs(%c : memref<3x2xf32>)
  return
}
