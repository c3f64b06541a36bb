// RUN: gacc-opt %s -convert-gacc-to-cudnn -verify-diagnostics

// The tensor form has no call: it must be bufferized first.
func.func @tensors(%q: tensor<1x1x4x16xbf16>, %l: tensor<1x1x4x1xf32>) -> tensor<1x1x4x16xbf16> {
  // expected-error @below {{failed to legalize operation 'gacc.fused_attention'}}
  %f:2 = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16> into tensor<1x1x4x16xbf16>, tensor<1x1x4x1xf32> -> tensor<1x1x4x16xbf16>, tensor<1x1x4x1xf32>
  return %f#0 : tensor<1x1x4x16xbf16>
}
