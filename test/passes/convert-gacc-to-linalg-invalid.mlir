// RUN: gacc-opt %s -split-input-file -convert-gacc-to-linalg -verify-diagnostics

// A dropout without its key has no mask to draw: the error names the pass
// that binds the key (gacc-expand-accumulation, in every micro-batch).
func.func @unkeyed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @below {{has no random key to draw its mask from; gacc-expand-accumulation binds one in every micro-batch}}
  %c = gacc.dropout %x {p = 0.1 : f64} : tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}
