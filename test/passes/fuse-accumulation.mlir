// RUN: gacc-opt %s -split-input-file -gacc-fuse-accumulation | FileCheck %s

// A weight gradient dW = dyᵀ·x (a zero-initialized, transposed-A matmul)
// accumulated into its accumulator becomes one matmul_accumulate into the
// accumulator: no linalg.matmul and no temporary gradient tensor remain.

// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME: %[[DY:[^:]+]]: tensor<4x3xf32>, %[[X:[^:]+]]: tensor<4x2xf32>, %[[ACC:[^:]+]]: tensor<3x2xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK-NOT: linalg.matmul
// CHECK: %[[R:.+]] = gacc.matmul_accumulate %[[DY]], %[[X]] into %[[ACC]] first %[[FIRST]] {transpose_a} : tensor<4x3xf32>, tensor<4x2xf32> into tensor<3x2xf32> -> tensor<3x2xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return %[[R]]
func.func @weight_gradient(%dy: tensor<4x3xf32>, %x: tensor<4x2xf32>, %acc: tensor<3x2xf32>, %first: i1) -> tensor<3x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%dy, %x : tensor<4x3xf32>, tensor<4x2xf32>) outs(%init : tensor<3x2xf32>) -> tensor<3x2xf32>
  %r = gacc.accumulate %dw into %acc first %first : tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// The other transpositions: a transposed B, and an accumulator stored as
// [n, m] (a linalg.generic contraction), computed as Cᵀ = op(B)ᵀ·op(A)ᵀ.

// CHECK-LABEL: func.func @transposes(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x3xf32>, %[[B:[^:]+]]: tensor<2x3xf32>, %[[ACC:[^:]+]]: tensor<4x2xf32>, %[[ACCT:[^:]+]]: tensor<2x4xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK: gacc.matmul_accumulate %[[A]], %[[B]] into %[[ACC]] first %[[FIRST]] {transpose_b} :
// CHECK: gacc.matmul_accumulate %[[B]], %[[A]] into %[[ACCT]] first %[[FIRST]] {transpose_b} :
// CHECK-NOT: linalg.matmul
func.func @transposes(%a: tensor<4x3xf32>, %b: tensor<2x3xf32>, %acc: tensor<4x2xf32>, %acct: tensor<2x4xf32>, %first: i1) -> (tensor<4x2xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<4x3xf32>, tensor<2x3xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = gacc.accumulate %g into %acc first %first : tensor<4x2xf32>
  %et = tensor.empty() : tensor<2x4xf32>
  %initt = linalg.fill ins(%zero : f32) outs(%et : tensor<2x4xf32>) -> tensor<2x4xf32>
  %gt = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (n, m)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x3xf32>, tensor<2x3xf32>) outs(%initt : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %rt = gacc.accumulate %gt into %acct first %first : tensor<2x4xf32>
  return %r, %rt : tensor<4x2xf32>, tensor<2x4xf32>
}

// -----

// A weight shared by the batch of a batched product: its gradient sums
// over the batch and the rows, Σ_b Σ_i x[b, i, k]·dy[b, i, n], a
// contraction whose contracted dimensions (b, i) are consecutive in both
// operands: one GEMM over the operands collapsed to [b·i, k] and
// [b·i, n].

// CHECK-LABEL: func.func @shared_by_batch(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[DY:[^:]+]]: tensor<2x3x5xf32>, %[[ACC:[^:]+]]: tensor<4x5xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK-DAG: %[[XM:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-DAG: %[[DYM:.+]] = tensor.collapse_shape %[[DY]] {{\[\[}}0, 1], [2]] : tensor<2x3x5xf32> into tensor<6x5xf32>
// CHECK: %[[R:.+]] = gacc.matmul_accumulate %[[XM]], %[[DYM]] into %[[ACC]] first %[[FIRST]] {transpose_a} : tensor<6x4xf32>, tensor<6x5xf32> into tensor<4x5xf32>
// CHECK: return %[[R]]
func.func @shared_by_batch(%x: tensor<2x3x4xf32>, %dy: tensor<2x3x5xf32>, %acc: tensor<4x5xf32>, %first: i1) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, i, k, n) -> (b, i, k)>, affine_map<(b, i, k, n) -> (b, i, n)>, affine_map<(b, i, k, n) -> (k, n)>],
                       iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %dy : tensor<2x3x4xf32>, tensor<2x3x5xf32>) outs(%init : tensor<4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %r = gacc.accumulate %g into %acc first %first : tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// A contraction that is no single GEMM (a per-batch weight of a batch
// matmul) accumulates in place: the accumulator is its init, and its body
// starts from 0 at the first reduction point of the window's first
// micro-batch instead of reading a zero-filled tensor.

// CHECK-LABEL: func.func @batched(
// CHECK-SAME: %[[ACC:[^:]+]]: tensor<2x4x5xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.+]] = linalg.generic {{.+}} outs(%[[ACC]] : tensor<2x4x5xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %[[OUT:.+]]: f32):
// CHECK: %[[I:.+]] = linalg.index 3 : index
// CHECK: %[[AT0:.+]] = arith.cmpi eq, %[[I]], %{{.+}} : index
// CHECK: %[[RESET:.+]] = arith.andi %[[FIRST]], %[[AT0]] : i1
// CHECK: %[[BASE:.+]] = arith.select %[[RESET]], %{{.+}}, %[[OUT]] : f32
// CHECK: %[[P:.+]] = arith.mulf
// CHECK: arith.addf %[[BASE]], %[[P]] : f32
// CHECK-NOT: gacc.accumulate
// CHECK: return %[[R]]
func.func @batched(%x: tensor<2x3x4xf32>, %dy: tensor<2x3x5xf32>, %acc: tensor<2x4x5xf32>, %first: i1) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %g = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %dy : tensor<2x3x4xf32>, tensor<2x3x5xf32>) outs(%init : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %r = gacc.accumulate %g into %acc first %first : tensor<2x4x5xf32>
  return %r : tensor<2x4x5xf32>
}

// -----

// A rank-3 accumulator (a [2, 3, 5] weight contracted over its trailing
// dimension's partner): collapsed to a [6, 5] matrix for the GEMM, and the
// result expanded back.

// CHECK-LABEL: func.func @rank3_accumulator(
// CHECK-SAME: %[[DY:[^:]+]]: tensor<4x2x3xf32>, %[[X:[^:]+]]: tensor<4x5xf32>, %[[ACC:[^:]+]]: tensor<2x3x5xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK-DAG: %[[DYM:.+]] = tensor.collapse_shape %[[DY]] {{\[\[}}0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
// CHECK-DAG: %[[ACCM:.+]] = tensor.collapse_shape %[[ACC]] {{\[\[}}0, 1], [2]] : tensor<2x3x5xf32> into tensor<6x5xf32>
// CHECK: %[[R:.+]] = gacc.matmul_accumulate %[[DYM]], %[[X]] into %[[ACCM]] first %[[FIRST]] {transpose_a} : tensor<4x6xf32>, tensor<4x5xf32> into tensor<6x5xf32>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
// CHECK: return %[[E]]
func.func @rank3_accumulator(%dy: tensor<4x2x3xf32>, %x: tensor<4x5xf32>, %acc: tensor<2x3x5xf32>, %first: i1) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(r, a, b, n) -> (r, a, b)>, affine_map<(r, a, b, n) -> (r, n)>, affine_map<(r, a, b, n) -> (a, b, n)>],
                       iterator_types = ["reduction", "parallel", "parallel", "parallel"]}
      ins(%dy, %x : tensor<4x2x3xf32>, tensor<4x5xf32>) outs(%init : tensor<2x3x5xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x5xf32>
  %r = gacc.accumulate %g into %acc first %first : tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}

// -----

// The gradient of a vector parameter (a matrix-vector product's vector, Σ_m
// W[m, k]·dy[m]) has no row group: it is no GEMM, and accumulates in place.

// CHECK-LABEL: func.func @vector_gradient(
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x5xf32>, %[[DY:[^:]+]]: tensor<4xf32>, %[[ACC:[^:]+]]: tensor<5xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK-NOT: gacc.matmul_accumulate
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[DY]], %[[W]] : tensor<4xf32>, tensor<4x5xf32>) outs(%[[ACC]] : tensor<5xf32>)
// CHECK: arith.andi %[[FIRST]]
// CHECK: return %[[R]]
func.func @vector_gradient(%w: tensor<4x5xf32>, %dy: tensor<4xf32>, %acc: tensor<5xf32>, %first: i1) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %g = linalg.vecmat ins(%dy, %w : tensor<4xf32>, tensor<4x5xf32>) outs(%init : tensor<5xf32>) -> tensor<5xf32>
  %r = gacc.accumulate %g into %acc first %first : tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

// Any other gradient: one elementwise kernel, first ? g : acc + g.

// CHECK-LABEL: func.func @other_gradient(
// CHECK-SAME: %[[G:[^:]+]]: tensor<3xf32>, %[[ACC:[^:]+]]: tensor<3xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK: %[[R:.+]] = linalg.generic {{.+}} iterator_types = ["parallel"]} ins(%[[G]] : tensor<3xf32>) outs(%[[ACC]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: %[[SEL:.+]] = arith.select %[[FIRST]], %[[IN]], %[[SUM]] : f32
// CHECK-NEXT: linalg.yield %[[SEL]] : f32
// CHECK-NOT: gacc.accumulate
func.func @other_gradient(%g: tensor<3xf32>, %acc: tensor<3xf32>, %first: i1) -> tensor<3xf32> {
  %r = gacc.accumulate %g into %acc first %first : tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A matmul whose init is not zero is not a pure gradient: it is not fused.

// CHECK-LABEL: func.func @nonzero_init(
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK-NOT: gacc.matmul_accumulate
func.func @nonzero_init(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>, %c: tensor<3x2xf32>, %acc: tensor<3x2xf32>, %first: i1) -> tensor<3x2xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x2xf32>) outs(%c : tensor<3x2xf32>) -> tensor<3x2xf32>
  %r = gacc.accumulate %m into %acc first %first : tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// The deferred SGD update (momentum, Nesterov, weight decay) is one kernel
// reading the accumulator, parameter and momentum once and writing
// parameter and momentum: g = acc / count + wd·p; b = step == 0 ? g :
// μ·b + g; g = g + μ·b; p = p − lr·g (torch.optim.SGD).

// CHECK-LABEL: func.func @sgd_update(
// CHECK-SAME: %[[P:[^:]+]]: tensor<5xf32>, %[[ACC:[^:]+]]: tensor<5xf32>, %[[M:[^:]+]]: tensor<5xf32>, %[[N:[^:]+]]: f32, %[[LR:[^:]+]]: f32, %[[K:[^:]+]]: i64)
// CHECK: %[[FIRSTSTEP:.+]] = arith.cmpi eq, %[[K]], %{{.+}} : i64
// CHECK: %[[R:.+]]:2 = linalg.generic {{.+}} ins(%[[ACC]] : tensor<5xf32>) outs(%[[P]], %[[M]] : tensor<5xf32>, tensor<5xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[PV:.+]]: f32, %[[MV:.+]]: f32):
// CHECK-NEXT: %[[G:.+]] = arith.divf %[[A]], %[[N]] : f32
// CHECK: %[[WD:.+]] = arith.mulf %{{.+}}, %[[PV]] : f32
// CHECK: %[[GD:.+]] = arith.addf %[[G]], %[[WD]] : f32
// CHECK: %[[KEPT:.+]] = arith.mulf %{{.+}}, %[[MV]] : f32
// CHECK: %[[NEXT:.+]] = arith.addf %[[KEPT]], %[[GD]] : f32
// CHECK: %[[BUF:.+]] = arith.select %[[FIRSTSTEP]], %[[GD]], %[[NEXT]] : f32
// CHECK: %[[NM:.+]] = arith.mulf %{{.+}}, %[[BUF]] : f32
// CHECK: %[[NG:.+]] = arith.addf %[[GD]], %[[NM]] : f32
// CHECK: %[[STEP:.+]] = arith.mulf %[[LR]], %[[NG]] : f32
// CHECK: %[[NP:.+]] = arith.subf %[[PV]], %[[STEP]] : f32
// CHECK: linalg.yield %[[NP]], %[[BUF]] : f32, f32
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @sgd_update(%p: tensor<5xf32>, %acc: tensor<5xf32>, %m: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) -> (tensor<5xf32>, tensor<5xf32>) {
  %p1, %m1 = gacc.apply_optimizer #gacc.sgd<lr = 0.1, momentum = 0.9, weight_decay = 0.01, nesterov = true> param(%p) accumulator(%acc) state(%m) count(%n) lr(%lr) step(%k) : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, f32, f32, i64) -> (tensor<5xf32>, tensor<5xf32>)
  return %p1, %m1 : tensor<5xf32>, tensor<5xf32>
}

// -----

// Plain SGD: no state, p − lr · acc / count.

// CHECK-LABEL: func.func @plain_sgd(
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<5xf32>) outs(%{{.+}} : tensor<5xf32>)
// CHECK: arith.divf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
func.func @plain_sgd(%p: tensor<5xf32>, %acc: tensor<5xf32>, %n: f32, %lr: f32, %k: i64) -> tensor<5xf32> {
  %p1 = gacc.apply_optimizer #gacc.sgd<lr = 0.1> param(%p) accumulator(%acc) count(%n) lr(%lr) step(%k) : (tensor<5xf32>, tensor<5xf32>, f32, f32, i64) -> tensor<5xf32>
  return %p1 : tensor<5xf32>
}

// -----

// Adam with a clipping coefficient and no weight decay for this parameter:
// g = acc / count · clip; the moments start from zero on the first step;
// bias corrections 1 − βᵗ with t = step + 1.

// CHECK-LABEL: func.func @adam_update(
// CHECK-SAME: %[[P:[^:]+]]: tensor<5xf32>, %[[ACC:[^:]+]]: tensor<5xf32>, %[[M:[^:]+]]: tensor<5xf32>, %[[V:[^:]+]]: tensor<5xf32>, %[[N:[^:]+]]: f32, %[[CLIP:[^:]+]]: f32, %[[LR:[^:]+]]: f32, %[[K:[^:]+]]: i64)
// CHECK: %[[T:.+]] = arith.sitofp %{{.+}} : i64 to f32
// CHECK: %[[R:.+]]:3 = linalg.generic {{.+}} ins(%[[ACC]] : tensor<5xf32>) outs(%[[P]], %[[M]], %[[V]] : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>)
// CHECK: %[[G0:.+]] = arith.divf %{{.+}}, %[[N]] : f32
// CHECK: %[[G:.+]] = arith.mulf %[[G0]], %[[CLIP]] : f32
// CHECK: math.powf %{{.+}}, %[[T]] : f32
// CHECK: math.sqrt
// CHECK: linalg.yield
// CHECK-NOT: weight_decay
func.func @adam_update(%p: tensor<5xf32>, %acc: tensor<5xf32>, %m: tensor<5xf32>, %v: tensor<5xf32>, %n: f32, %clip: f32, %lr: f32, %k: i64) -> tensor<5xf32> {
  %p1, %m1, %v1 = gacc.apply_optimizer #gacc.adam<lr = 1.0e-3, weight_decay = 0.1> param(%p) accumulator(%acc) state(%m, %v) count(%n) clip(%clip) lr(%lr) step(%k) {no_weight_decay} : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, f32, f32, f32, i64) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>)
  return %p1 : tensor<5xf32>
}

// -----

// A conv2d weight gradient: the GEMM computes it in the weight's matrix
// view [O, C·KH·KW] and expand_shape restores [O, C, KH, KW]. The reshape
// moves to the accumulator (collapsed to the same view) and the GEMM
// accumulates into it.

// CHECK-LABEL: func.func @reshaped_gradient(
// CHECK-SAME: %[[DY:[^:]+]]: tensor<8x4xf32>, %[[COLS:[^:]+]]: tensor<8x18xf32>, %[[ACC:[^:]+]]: tensor<4x2x3x3xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK: %[[VIEW:.+]] = tensor.collapse_shape %[[ACC]] {{\[}}[0], [1, 2, 3]] : tensor<4x2x3x3xf32> into tensor<4x18xf32>
// CHECK: %[[R:.+]] = gacc.matmul_accumulate %[[DY]], %[[COLS]] into %[[VIEW]] first %[[FIRST]] {transpose_a}
// CHECK: %[[W:.+]] = tensor.expand_shape %[[R]] {{\[}}[0], [1, 2, 3]] output_shape [4, 2, 3, 3]
// CHECK-NOT: linalg.matmul
// CHECK: return %[[W]]
func.func @reshaped_gradient(%dy: tensor<8x4xf32>, %cols: tensor<8x18xf32>, %acc: tensor<4x2x3x3xf32>, %first: i1) -> tensor<4x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x18xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x18xf32>) -> tensor<4x18xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%dy, %cols : tensor<8x4xf32>, tensor<8x18xf32>) outs(%init : tensor<4x18xf32>) -> tensor<4x18xf32>
  %g = tensor.expand_shape %dw [[0], [1, 2, 3]] output_shape [4, 2, 3, 3] : tensor<4x18xf32> into tensor<4x2x3x3xf32>
  %r = gacc.accumulate %g into %acc first %first : tensor<4x2x3x3xf32>
  return %r : tensor<4x2x3x3xf32>
}
