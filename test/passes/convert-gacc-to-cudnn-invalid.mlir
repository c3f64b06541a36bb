// RUN: gacc-opt %s -split-input-file -convert-gacc-to-cudnn -verify-diagnostics

// The tensor form has no call: it must be bufferized first.
func.func @tensors(%q: tensor<1x1x4x16xbf16>, %l: tensor<1x1x4x1xf32>) -> tensor<1x1x4x16xbf16> {
  // expected-error @below {{failed to legalize operation 'gacc.fused_attention'}}
  %f:2 = gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16> into tensor<1x1x4x16xbf16>, tensor<1x1x4x1xf32> -> tensor<1x1x4x16xbf16>, tensor<1x1x4x1xf32>
  return %f#0 : tensor<1x1x4x16xbf16>
}

// -----

// The entry point's name is taken by a function of another type: one
// error naming it, and the op is left as it was.
// expected-error @below {{matched function 'gacc_cudnn_attention_forward_f16' but with different type}}
func.func private @gacc_cudnn_attention_forward_f16(i32)

func.func @taken(%q: memref<1x1x4x16xf16>, %l: memref<1x1x4x1xf32>) {
  // expected-error @below {{failed to legalize operation 'gacc.fused_attention'}}
  gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : memref<1x1x4x16xf16>, memref<1x1x4x16xf16>, memref<1x1x4x16xf16> into memref<1x1x4x16xf16>, memref<1x1x4x1xf32>
  return
}

// -----

// A buffer the entry point cannot address (another memory space): one
// error at the op, before converting (not an invalid memref.cast, nor a
// second "failed to legalize").
func.func @space(%q: memref<1x1x4x16xf16, 1>, %l: memref<1x1x4x1xf32>) {
  // expected-error @below {{has a buffer cuDNN's entry point cannot take (another memory space, or a layout that is not strided)}}
  gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : memref<1x1x4x16xf16, 1>, memref<1x1x4x16xf16, 1>, memref<1x1x4x16xf16, 1> into memref<1x1x4x16xf16, 1>, memref<1x1x4x1xf32>
  return
}
