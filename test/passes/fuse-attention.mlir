// RUN: gacc-opt %s -split-input-file -gacc-fuse-attention | FileCheck %s

// A bf16 step's attention and its adjoint: one fused forward, whose bf16
// output and fp32 statistics the fused backward reads. Operands are
// rounded to bf16 on the way in (the backward's own q, k and v; CSE merges
// them with the forward's later), results extended to fp32 on the way out;
// the scale is resolved (1/sqrt(16)).
// CHECK-LABEL: func.func @pair(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x2x8x16xf32>, %[[K:[^:]+]]: tensor<2x2x8x16xf32>, %[[V:[^:]+]]: tensor<2x2x8x16xf32>, %[[DO:[^:]+]]: tensor<2x2x8x16xf32>
// CHECK: %[[Q16:.+]] = linalg.generic {{.+}} ins(%[[Q]] : tensor<2x2x8x16xf32>) outs(%{{.+}} : tensor<2x2x8x16xbf16>)
// CHECK: arith.truncf
// CHECK: %[[K16:.+]] = linalg.generic {{.+}} ins(%[[K]] :
// CHECK: %[[V16:.+]] = linalg.generic {{.+}} ins(%[[V]] :
// CHECK: %[[OE:.+]] = tensor.empty() : tensor<2x2x8x16xbf16>
// CHECK: %[[LE:.+]] = tensor.empty() : tensor<2x2x8x1xf32>
// CHECK: %[[F:.+]]:2 = gacc.fused_attention %[[Q16]], %[[K16]], %[[V16]] into %[[OE]], %[[LE]] {causal, scale = 2.500000e-01 : f64} : tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16> into tensor<2x2x8x16xbf16>, tensor<2x2x8x1xf32> -> tensor<2x2x8x16xbf16>, tensor<2x2x8x1xf32>
// CHECK: %[[O:.+]] = linalg.generic {{.+}} ins(%[[F]]#0 : tensor<2x2x8x16xbf16>) outs(%{{.+}} : tensor<2x2x8x16xf32>)
// CHECK: arith.extf
// CHECK: %[[DO16:.+]] = linalg.generic {{.+}} ins(%[[DO]] :
// CHECK: %[[B:.+]]:3 = gacc.fused_attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %[[F]]#0, %[[DO16]], %[[F]]#1 into %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 2.500000e-01 : f64} : {{.+}}, tensor<2x2x8x1xf32> into {{.+}} -> tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>
// CHECK: %[[DQ:.+]] = linalg.generic {{.+}} ins(%[[B]]#0 :
// CHECK: %[[DK:.+]] = linalg.generic {{.+}} ins(%[[B]]#1 :
// CHECK: %[[DV:.+]] = linalg.generic {{.+}} ins(%[[B]]#2 :
// CHECK-NOT: gacc.attention
// CHECK: return %[[O]], %[[DQ]], %[[DK]], %[[DV]]
func.func @pair(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %do: tensor<2x2x8x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %o = gacc.attention %q, %k, %v {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  %g:3 = gacc.attention_backward %q, %k, %v, %o, %do {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %o, %g#0, %g#1, %g#2 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

// -----

// fp16, an explicit scale, not causal; an attention no adjoint reads
// (evaluation) is fused alone, its statistics unread.
// CHECK-LABEL: func.func @forward_only(
// CHECK: gacc.fused_attention %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}}, %{{.+}} {scale = 5.000000e-01 : f64} : tensor<1x2x4x32xf16>, tensor<1x2x4x32xf16>, tensor<1x2x4x32xf16> into tensor<1x2x4x32xf16>, tensor<1x2x4x1xf32>
// CHECK-NOT: gacc.attention
// CHECK: return
func.func @forward_only(%q: tensor<1x2x4x32xf32>) -> tensor<1x2x4x32xf32> attributes {gacc.compute_precision = #gacc.precision<fp16>} {
  %o = gacc.attention %q, %q, %q {scale = 0.5 : f64} : tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>
  return %o : tensor<1x2x4x32xf32>
}

// -----

// An fp32 step (cuDNN's fused attention takes bf16 and fp16 only), and
// head sizes cuDNN does not fuse on every architecture (12: not a
// multiple of 8; 256: over 128), keep the decomposition.
// CHECK-LABEL: func.func @fp32_step(
// CHECK: gacc.attention
// CHECK: gacc.attention_backward
// CHECK-LABEL: func.func @head_12(
// CHECK: gacc.attention
// CHECK: gacc.attention_backward
// CHECK-LABEL: func.func @head_256(
// CHECK: gacc.attention
// CHECK-NOT: gacc.fused_attention
func.func @fp32_step(%q: tensor<2x2x8x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  %g:3 = gacc.attention_backward %q, %q, %q, %o, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %o, %g#0 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}
func.func @head_12(%q: tensor<2x2x8x12xf32>) -> (tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>
  %g:3 = gacc.attention_backward %q, %q, %q, %o, %q {causal} : tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>
  return %o, %g#0 : tensor<2x2x8x12xf32>, tensor<2x2x8x12xf32>
}
func.func @head_256(%q: tensor<1x1x4x256xf32>) -> tensor<1x1x4x256xf32> attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %o = gacc.attention %q, %q, %q : tensor<1x1x4x256xf32>, tensor<1x1x4x256xf32>, tensor<1x1x4x256xf32>
  return %o : tensor<1x1x4x256xf32>
}

// -----

// An adjoint whose output is not an attention's result (or one with
// other attributes than the forward's) stays as it is.
// CHECK-LABEL: func.func @unpaired(
// CHECK: gacc.fused_attention
// CHECK: gacc.attention_backward
func.func @unpaired(%q: tensor<2x2x8x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  %g:3 = gacc.attention_backward %q, %q, %q, %q, %o {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %o, %g#0 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

// -----

// In a bf16 step the adjoint reads the forward's result rounded to bf16
// (gacc-expand-accumulation rounds every value the body computes): the
// pair is fused all the same, the backward reading the bf16 output, which
// the rounding leaves as it is.
// CHECK-LABEL: func.func @rounded_output(
// CHECK: %[[F:.+]]:2 = gacc.fused_attention
// CHECK: gacc.fused_attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %[[F]]#0, %{{.+}}, %[[F]]#1 into
// CHECK-NOT: gacc.attention
// CHECK: return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @rounded_output(%q: tensor<2x2x8x16xf32>, %do: tensor<2x2x8x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  %e = tensor.empty() : tensor<2x2x8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<2x2x8x16xf32>) outs(%e : tensor<2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %x = arith.extf %t : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x2x8x16xf32>
  %g:3 = gacc.attention_backward %q, %q, %q, %r, %do {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %r, %g#0 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

// -----

// The adjoint of other q, k or v than the forward's is not fused with it
// (its own attention then is, alone); q, k and v passed through
// gacc.recompute_inputs, or recomputed by an equivalent op, are the
// forward's.
// CHECK-LABEL: func.func @other_query(
// CHECK: gacc.fused_attention
// CHECK: gacc.attention_backward
// CHECK-LABEL: func.func @recomputed_query(
// CHECK-NOT: gacc.attention_backward
// CHECK: gacc.fused_attention_backward
func.func @other_query(%q: tensor<2x2x8x16xf32>, %p: tensor<2x2x8x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  %g:3 = gacc.attention_backward %p, %q, %q, %o, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %o, %g#0 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}
func.func @recomputed_query(%x: tensor<2x8x2x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %e = tensor.empty() : tensor<2x2x8x16xf32>
  %q = linalg.transpose ins(%x : tensor<2x8x2x16xf32>) outs(%e : tensor<2x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  %kept = gacc.recompute_inputs %x : tensor<2x8x2x16xf32>
  %e2 = tensor.empty() : tensor<2x2x8x16xf32>
  %q2 = linalg.transpose ins(%kept : tensor<2x8x2x16xf32>) outs(%e2 : tensor<2x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %g:3 = gacc.attention_backward %q2, %q2, %q2, %o, %q {causal} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %o, %g#0 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}
