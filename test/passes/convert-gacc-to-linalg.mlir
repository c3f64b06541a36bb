// RUN: gacc-opt %s -split-input-file -convert-gacc-to-linalg | FileCheck %s
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-linalg | FileCheck %s --check-prefix=BLOCKS --implicit-check-not='tensor<2x5x5xf32>'
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-linalg -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN

// The layer ops are replaced by their decompositions
// (linalg::AggregatedOpInterface). linear: x · Wᵀ (a matmul with
// transposed B) into a zero init, then the bias broadcast over rows.

// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x2xf32>, %[[W:[^:]+]]: tensor<3x2xf32>, %[[B:[^:]+]]: tensor<3xf32>)
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[MM:.+]] = linalg.matmul indexing_maps = [#[[$A:.+]], #[[$BT:.+]], #[[$C:.+]]] ins(%[[X]], %[[W]] : tensor<4x2xf32>, tensor<3x2xf32>) outs(%[[Z]] : tensor<4x3xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<3xf32>) outs(%[[MM]] : tensor<4x3xf32>)
// CHECK: arith.addf
// CHECK: return %[[Y]]
func.func @linear(%x: tensor<4x2xf32>, %w: tensor<3x2xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %y = gacc.linear %x, %w bias %b : tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// relu: an elementwise maximum with 0 (NaN propagates, as torch.relu).

// CHECK-LABEL: func.func @relu(
// CHECK: linalg.generic
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
func.func @relu(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = gacc.relu %x : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// cross_entropy: row max, Σ exp(z − max) and the label's logit, then
// Σ_i [y_i ≠ ignore] (max + log Σ − z_y) into a scalar (accumulated in f64,
// rounded to f32).

// CHECK-LABEL: func.func @cross_entropy(
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: %[[S:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %[[MAX]], %{{.+}} :
// CHECK: math.exp
// CHECK: linalg.index 1
// CHECK: %[[L64:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[MAX]], %[[S]]#0, %[[S]]#1, %{{.+}} : {{.+}}) outs(%{{.+}} : tensor<f64>)
// CHECK: math.log
// CHECK: arith.cmpi eq, %{{.+}}, %c-7_i64 : i64
// CHECK: %[[L:.+]] = linalg.generic {{.+}} ins(%[[L64]] : tensor<f64>) outs(%{{.+}} : tensor<f32>)
// CHECK: return %[[L]]
func.func @cross_entropy(%z: tensor<4x3xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %l = gacc.cross_entropy %z, %y {ignore_index = -7 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Layer ops inside a training step's body are left to the step's passes,
// with a warning.
// WARN: warning: gacc.train_step @s is left as it is: convert-gacc-to-linalg lowers the functions gacc-expand-accumulation builds from a step (run gacc-autodiff and gacc-expand-accumulation first)
// WARN-NOT: warning

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @s
// CHECK: gacc.linear
// CHECK: gacc.cross_entropy
gacc.train_step @s params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Sequence ops: embedding gathers rows (tensor.extract of the table inside
// a generic); the [2, 5, 6] linear is a matmul over the 10 flattened rows;
// GELU's exact form uses erf, its tanh form tanh; layer_norm computes row
// statistics (mean, 1/sqrt(var + eps)) then one elementwise kernel.

// CHECK-LABEL: func.func @sequence(
// CHECK-SAME: %[[TOK:[^:]+]]: tensor<2x5xi32>, %[[EMB:[^:]+]]: tensor<11x6xf32>
// CHECK: %[[E:.+]] = linalg.generic {{.+}} ins(%[[TOK]] : tensor<2x5xi32>) outs(%{{.+}} : tensor<2x5x6xf32>)
// CHECK: tensor.extract %[[EMB]][%{{.+}}, %{{.+}}] : tensor<11x6xf32>
// CHECK: %[[E2:.+]] = tensor.collapse_shape %[[E]] {{\[\[}}0, 1], [2]] : tensor<2x5x6xf32> into tensor<10x6xf32>
// CHECK: %[[MM:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[E2]], %{{.+}} : tensor<10x6xf32>, tensor<7x6xf32>)
// CHECK: %[[H:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 5, 7] : tensor<10x7xf32> into tensor<2x5x7xf32>
// CHECK: %[[A:.+]] = linalg.generic {{.+}} ins(%[[H]] : tensor<2x5x7xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NOT: linalg.yield
// CHECK: math.erf
// CHECK: %[[T:.+]] = linalg.generic {{.+}} ins(%[[A]] : tensor<2x5x7xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NOT: linalg.yield
// CHECK: math.tanh
// CHECK: %[[T2:.+]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2]] : tensor<2x5x7xf32> into tensor<10x7xf32>
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[T2]] : tensor<10x7xf32>) outs(%{{.+}} : tensor<10xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<10xf32>)
// CHECK: %[[SQ:.+]] = linalg.generic {{.+}} ins(%[[T2]], %[[MEAN]] : tensor<10x7xf32>, tensor<10xf32>)
// CHECK: %[[RSTD:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<10xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NOT: linalg.yield
// CHECK: math.rsqrt
// CHECK: %[[N:.+]] = linalg.generic {{.+}} ins(%[[T2]], %[[MEAN]], %[[RSTD]], %{{.+}}, %{{.+}} : tensor<10x7xf32>, tensor<10xf32>, tensor<10xf32>, tensor<7xf32>, tensor<7xf32>)
// CHECK: %[[OUT:.+]] = tensor.expand_shape %[[N]]
// CHECK: return %[[OUT]]
func.func @sequence(%tok: tensor<2x5xi32>, %emb: tensor<11x6xf32>, %w: tensor<7x6xf32>,
                    %g: tensor<7xf32>, %b: tensor<7xf32>) -> tensor<2x5x7xf32> {
  %e = gacc.embedding %tok, %emb : tensor<2x5xi32>, tensor<11x6xf32> -> tensor<2x5x6xf32>
  %h = gacc.linear %e, %w : tensor<2x5x6xf32>, tensor<7x6xf32> -> tensor<2x5x7xf32>
  %a = gacc.gelu %h : tensor<2x5x7xf32>
  %t = gacc.gelu %a {approximate = "tanh"} : tensor<2x5x7xf32>
  %n = gacc.layer_norm %t, %g, %b : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
  return %n : tensor<2x5x7xf32>
}

// -----

// A layer norm of a vector normalizes it as one row: [4] as [1, 4] and
// back (it crashed building a collapse with an empty group).

// CHECK-LABEL: func.func @layer_norm_vector(
// CHECK: %[[ROW:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: linalg.generic {{.+}} ins(%[[ROW]] : tensor<1x4xf32>)
// CHECK: %[[V:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: return %[[V]] : tensor<4xf32>
func.func @layer_norm_vector(%x: tensor<4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %n = gacc.layer_norm %x, %w, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// linalg.softmax is an aggregated op too: its upstream decomposition (row
// maximum, exponentials of the shifted values, their sum, the division),
// which no loop lowering would take otherwise.

// CHECK-LABEL: func.func @softmax(
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// conv2d through im2col in the channels-first layout: the padded input
// moved to [C, N, H, W] once, its 3×3 strided taps stacked along a new
// dimension into [C, K, N, OH, OW] and collapsed to the [C·K, N·OH·OW]
// matrix; one matmul of the weight viewed as [O, C·K] by it (rows are
// output channels), the bias per row, back to [N, O, OH, OW].
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x6x6xf32>, %[[W:[^:]+]]: tensor<4x3x3x3xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[CF:.+]] = linalg.transpose ins(%[[P]] : tensor<2x3x8x8xf32>) {{.*}} permutation = [1, 0, 2, 3]
// CHECK: tensor.extract_slice %[[CF]][0, 0, 0, 0] [3, 2, 3, 3] [1, 1, 2, 2]
// CHECK-COUNT-8: tensor.extract_slice %[[CF]]
// CHECK: %[[CAT:.+]] = tensor.concat dim(1) {{.*}} -> tensor<3x9x2x3x3xf32>
// CHECK: %[[COLS:.+]] = tensor.collapse_shape %[[CAT]] {{\[}}[0, 1], [2, 3, 4]] : tensor<3x9x2x3x3xf32> into tensor<27x18xf32>
// CHECK: %[[WM:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[WM]], %[[COLS]] : tensor<4x27xf32>, tensor<27x18xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>) outs(%[[MM]] : tensor<4x18xf32>)
// CHECK: %[[ONHW:.+]] = tensor.expand_shape %[[Y]] {{\[}}[0], [1, 2, 3]] output_shape [4, 2, 3, 3]
// CHECK: linalg.transpose ins(%[[ONHW]] : tensor<4x2x3x3xf32>) {{.*}} permutation = [1, 0, 2, 3]
func.func @conv2d(%x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %y = gacc.conv2d %x, %w bias %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x3x3xf32>
  return %y : tensor<2x4x3x3xf32>
}

// -----

// max_pool2d: the window's taps folded left to right with maxnumf (a tie
// goes to the earlier tap, torch's first argmax).
// CHECK-LABEL: func.func @max_pool2d(
// CHECK: %[[T0:.+]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 3, 3, 3] [1, 1, 2, 2]
// CHECK: %[[T1:.+]] = tensor.extract_slice %{{.*}}[0, 0, 0, 1] [2, 3, 3, 3] [1, 1, 2, 2]
// CHECK: %[[T2:.+]] = tensor.extract_slice %{{.*}}[0, 0, 1, 0] [2, 3, 3, 3] [1, 1, 2, 2]
// CHECK: %[[T3:.+]] = tensor.extract_slice %{{.*}}[0, 0, 1, 1] [2, 3, 3, 3] [1, 1, 2, 2]
// CHECK: %[[M0:.+]] = arith.maxnumf %[[T0]], %[[T1]]
// CHECK: %[[M1:.+]] = arith.maxnumf %[[M0]], %[[T2]]
// CHECK: arith.maxnumf %[[M1]], %[[T3]]
func.func @max_pool2d(%x: tensor<2x3x6x6xf32>) -> tensor<2x3x3x3xf32> {
  %y = gacc.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<2x3x6x6xf32> -> tensor<2x3x3x3xf32>
  return %y : tensor<2x3x3x3xf32>
}

// -----

// attention: heads as a batch, the scores by batch_matmul with kᵀ through
// its indexing map, scaled by 1/sqrt(4) and masked above the diagonal with
// −∞, softmax over the keys (itself decomposed), the values by
// batch_matmul into the result's rows, heads restored. T = 5 is one query
// block (the default is min(T, 128) rows).
// CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[KTMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x2x5x4xf32>
// CHECK: %[[QB:.+]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : tensor<2x2x5x4xf32> into tensor<4x5x4xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[S:.+]] = linalg.batch_matmul indexing_maps = [#[[QMAP]], #[[KTMAP]], #{{.+}}] ins(%[[QB]], %{{.+}} : tensor<4x5x4xf32>, tensor<4x5x4xf32>) outs(%{{.+}} : tensor<4x5x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<4x5x5xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[I:.+]] = linalg.index 1
// CHECK: %[[J:.+]] = linalg.index 2
// CHECK: arith.cmpi ugt, %[[J]], %[[I]]
// CHECK: arith.select
// CHECK: math.exp
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<4x5x5xf32>, tensor<4x5x4xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: tensor.expand_shape {{.*}} into tensor<2x2x5x4xf32>
func.func @attention(%q: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  return %o : tensor<2x2x5x4xf32>
}

// -----

// Causal attention in query blocks of 2 rows over T = 5: rows [0, 2) see
// keys [0, 2), rows [2, 4) keys [0, 4), the last row all 5; the mask
// compares key j with the block's first row + i; each block's product
// with the values has a zero init of its own and is inserted into its
// rows of a result that only tensor.insert_slice writes (no slice of a
// shared zero tensor that CSE could merge).
// CHECK-LABEL: func.func @attention_blocks(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x1x5x4xf32>, %[[K:[^:]+]]: tensor<1x1x5x4xf32>, %[[V:[^:]+]]: tensor<1x1x5x4xf32>
// CHECK-DAG: %[[QB:.+]] = tensor.collapse_shape %[[Q]]
// CHECK-DAG: %[[KB:.+]] = tensor.collapse_shape %[[K]]
// CHECK-DAG: %[[VB:.+]] = tensor.collapse_shape %[[V]]
// CHECK: %[[Q0:.+]] = tensor.extract_slice %[[QB]][0, 0, 0] [1, 2, 4]
// CHECK: %[[K0:.+]] = tensor.extract_slice %[[KB]][0, 0, 0] [1, 2, 4]
// CHECK: linalg.batch_matmul {{.*}} ins(%[[Q0]], %[[K0]] : {{.*}} -> tensor<1x2x2xf32>
// CHECK: %[[I0:.+]] = linalg.index 1
// CHECK: %[[J0:.+]] = linalg.index 2
// CHECK-NEXT: arith.cmpi ugt, %[[J0]], %[[I0]]
// CHECK: %[[V0:.+]] = tensor.extract_slice %[[VB]][0, 0, 0] [1, 2, 4]
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<1x2x4xf32>
// CHECK: %[[F0:.+]] = linalg.fill {{.*}} outs(%[[E0]] :
// CHECK: %[[P0:.+]] = linalg.batch_matmul ins(%{{.+}}, %[[V0]] : tensor<1x2x2xf32>, tensor<1x2x4xf32>) outs(%[[F0]] :
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<1x5x4xf32>
// CHECK: %[[OUT1:.+]] = tensor.insert_slice %[[P0]] into %[[OUT]][0, 0, 0] [1, 2, 4]
// CHECK: %[[Q1:.+]] = tensor.extract_slice %[[QB]][0, 2, 0] [1, 2, 4]
// CHECK: %[[K1:.+]] = tensor.extract_slice %[[KB]][0, 0, 0] [1, 4, 4]
// CHECK: linalg.batch_matmul {{.*}} ins(%[[Q1]], %[[K1]] : {{.*}} -> tensor<1x2x4xf32>
// CHECK: %[[I1:.+]] = linalg.index 1
// CHECK: %[[J1:.+]] = linalg.index 2
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[R1:.+]] = arith.addi %[[I1]], %[[C2]]
// CHECK: arith.cmpi ugt, %[[J1]], %[[R1]]
// CHECK: %[[OUT2:.+]] = tensor.insert_slice %{{.+}} into %[[OUT1]][0, 2, 0] [1, 2, 4]
// CHECK: %[[Q2:.+]] = tensor.extract_slice %[[QB]][0, 4, 0] [1, 1, 4]
// CHECK: linalg.batch_matmul {{.*}} ins(%[[Q2]], %[[KB]] : {{.*}} -> tensor<1x1x5xf32>
// CHECK: linalg.batch_matmul ins(%{{.+}}, %[[VB]] : tensor<1x1x5xf32>, tensor<1x5x4xf32>)
// CHECK: %[[OUT3:.+]] = tensor.insert_slice %{{.+}} into %[[OUT2]][0, 4, 0] [1, 1, 4]
// CHECK: tensor.expand_shape %[[OUT3]]
func.func @attention_blocks(%q: tensor<1x1x5x4xf32>, %k: tensor<1x1x5x4xf32>, %v: tensor<1x1x5x4xf32>) -> tensor<1x1x5x4xf32> {
  %o = gacc.attention %q, %k, %v {causal, query_block = 2 : i64} : tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>
  return %o : tensor<1x1x5x4xf32>
}

// -----

// group_norm on [N, C] (no spatial dimensions): the channels split into 2
// groups, one row per (sample, group), the rows' statistics, the
// normalized rows back to [N, C], the per-channel affine map.
// CHECK-LABEL: func.func @group_norm_2d(
// CHECK-SAME: %[[X:[^:]+]]: tensor<3x4xf32>
// CHECK: %[[G:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [3, 2, 2] : tensor<3x4xf32> into tensor<3x2x2xf32>
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2]] : tensor<3x2x2xf32> into tensor<6x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[ROWS]] : tensor<6x2xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<3x2x2xf32> into tensor<3x4xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xf32>)
func.func @group_norm_2d(%x: tensor<3x4xf32>, %w: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = gacc.group_norm %x, %w, %w {num_groups = 2 : i64} : tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// batch_norm in training: the count of values per channel (Σ mask · H·W),
// 1 / max(count, 1), the masked channel sums over every dimension but the
// channels (d1 parallel), the mean, the masked sum of squared deviations,
// the biased variance, then (x − mean) · rsqrt(var + eps) · weight + bias.
// CHECK-LABEL: func.func @batch_norm(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4x5xf32>, %[[W:[^:]+]]: tensor<3xf32>, %[[K:[^:]+]]: tensor<2xf32>
// CHECK: %[[CNT:.+]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[K]] : tensor<2xf32>) outs(%{{.+}} : tensor<f32>)
// CHECK: arith.constant 2.000000e+01 : f32
// CHECK: %[[INV:.+]] = linalg.generic {{.*}} ins(%[[CNT]] : tensor<f32>)
// CHECK: arith.maximumf
// CHECK: arith.divf
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%[[X]], %[[K]] : tensor<2x3x4x5xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%[[SUM]], %[[INV]] : tensor<3xf32>, tensor<f32>)
// CHECK: %[[SQ:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[K]], %[[MEAN]] : tensor<2x3x4x5xf32>, tensor<2xf32>, tensor<3xf32>)
// CHECK: %[[VAR:.+]] = linalg.generic {{.*}} ins(%[[SQ]], %[[INV]] : tensor<3xf32>, tensor<f32>)
// CHECK: %[[RSTD:.+]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<3xf32>)
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MEAN]], %[[RSTD]], %[[W]], %[[W]] : {{.*}}) outs(%{{.+}} : tensor<2x3x4x5xf32>)
// CHECK-NOT: gacc.batch_norm
gacc.statistic @m : tensor<3xf32> = #gacc.zeros
gacc.statistic @v : tensor<3xf32> = #gacc.constant<value = 1.0>
func.func @batch_norm(%x: tensor<2x3x4x5xf32>, %w: tensor<3xf32>, %k: tensor<2xf32>) -> tensor<2x3x4x5xf32> {
  %y = gacc.batch_norm %x, %w, %w mask %k running(@m, @v) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>
  return %y : tensor<2x3x4x5xf32>
}

// -----

// dropout with its key: one elementwise linalg.generic that computes each
// element's mask from its indices. The element's position within its sample
// (d1 · 4 + d2), the sample's index (first + d0), then ten Philox rounds of
// two 32 × 32-bit products each over counter (position div 4, sample, step,
// stream 5) and key (seed mod 2³², seed div 2³²); word (position mod 4) is
// compared with round(0.25 · 2³²) = 2³⁰, and the kept elements are scaled
// by 1/(1 − 0.25).
// CHECK-LABEL: func.func @dropout(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[SEED:[^:]+]]: i64, %[[STEP:[^:]+]]: i64, %[[FIRST:[^:]+]]: i64
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK: %[[SCALE:.+]] = arith.constant 1.33333337 : f32
// CHECK: %[[KEPT:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[ROW64:.+]] = arith.index_castui %[[ROW]] : index to i64
// CHECK: %[[SAMPLE:.+]] = arith.addi %[[FIRST]], %[[ROW64]] : i64
// CHECK: arith.trunci %[[SAMPLE]] : i64 to i32
// CHECK: arith.trunci %[[STEP]] : i64 to i32
// CHECK: arith.constant 5 : i32
// CHECK: arith.trunci %[[SEED]] : i64 to i32
// CHECK: arith.shrui %[[SEED]], %{{.+}} : i64
// CHECK-COUNT-20: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: %[[T:.+]] = arith.constant 1073741824 : i32
// CHECK: %[[KEEP:.+]] = arith.cmpi uge, %{{.+}}, %[[T]] : i32
// CHECK: %[[Y:.+]] = arith.select %[[KEEP]], %[[KEPT]], %{{.+}} : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK-NOT: gacc.dropout
func.func @dropout(%x: tensor<2x3x4xf32>, %seed: i64, %step: i64, %first: i64) -> tensor<2x3x4xf32> {
  %c = gacc.dropout %x key(%seed, %step, %first) {p = 0.25 : f64, stream = 5 : i64} : tensor<2x3x4xf32>
  return %c : tensor<2x3x4xf32>
}

// -----

// dropout with p = 0 is its input: no mask is drawn.
// CHECK-LABEL: func.func @no_dropout(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>
// CHECK-NEXT: return %[[X]] : tensor<2x3xf32>
func.func @no_dropout(%x: tensor<2x3xf32>, %k: i64) -> tensor<2x3xf32> {
  %c = gacc.dropout %x key(%k, %k, %k) {p = 0.0 : f64} : tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// -----

// Non-causal attention in query blocks of 3 rows over T = 5: every block
// reads all 5 keys, and nothing is masked.
// CHECK-LABEL: func.func @attention_blocks_noncausal(
// CHECK-NOT: linalg.index
// CHECK: linalg.batch_matmul {{.*}} -> tensor<4x3x5xf32>
// CHECK-NOT: linalg.index
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<4x3x5xf32>, tensor<4x5x4xf32>)
// CHECK-NOT: linalg.index
// CHECK: linalg.batch_matmul {{.*}} -> tensor<4x2x5xf32>
// CHECK-NOT: linalg.index
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<4x2x5xf32>, tensor<4x5x4xf32>)
// CHECK-NOT: linalg.index
// CHECK: return
func.func @attention_blocks_noncausal(%q: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %o = gacc.attention %q, %q, %q {query_block = 3 : i64} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  return %o : tensor<2x2x5x4xf32>
}

// -----

// attention_backward (gacc.attention's adjoint) in query blocks of 3 rows
// over T = 5 (causal: rows [0, 3) see keys [0, 3), rows [3, 5) all 5).
// q, k and v come through gacc.recompute_inputs, and each block
// recomputes its probabilities P. The last block comes first: it reads
// every key, so its products dv = Pᵀ·dO and dk = dSᵀ·q (dP = dO·vᵀ,
// D = rowsum(P ⊙ dP), dS) start the sums whole, and block 0 adds into
// their rows [0, 3) in place; dq's rows are inserted into a tensor that
// only insert_slice writes. No [2, 5, 5] tensor exists, and nothing is
// rounded in an fp32 function.
// CHECK-DAG: #[[$TA:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$TB:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// BLOCKS-LABEL: func.func @attention_backward(
// BLOCKS-NOT: arith.truncf
// BLOCKS: return
// CHECK-LABEL: func.func @attention_backward(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x1x5x4xf32>, %[[K:[^:]+]]: tensor<2x1x5x4xf32>, %[[V:[^:]+]]: tensor<2x1x5x4xf32>
// CHECK: %[[KEPT:.+]]:3 = gacc.recompute_inputs %[[Q]], %[[K]], %[[V]] :
// CHECK-DAG: %[[QB:.+]] = tensor.collapse_shape %[[KEPT]]#0
// CHECK-DAG: %[[KB:.+]] = tensor.collapse_shape %[[KEPT]]#1
// CHECK-DAG: %[[VB:.+]] = tensor.collapse_shape %[[KEPT]]#2
// Block 1 (rows 3 and 4, every key).
// CHECK: %[[QR1:.+]] = tensor.extract_slice %[[QB]][0, 3, 0] [2, 2, 4]
// CHECK: linalg.batch_matmul indexing_maps = [#{{.+}}, #[[$TB]], #{{.+}}] ins(%[[QR1]], %[[KB]] : tensor<2x2x4xf32>, tensor<2x5x4xf32>)
// CHECK: math.exp
// CHECK: %[[DV1:.+]] = linalg.batch_matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[P1:[^,]+]], %{{.+}} : tensor<2x2x5xf32>, tensor<2x2x4xf32>) outs(%{{.+}} : tensor<2x5x4xf32>)
// CHECK: %[[DP1:.+]] = linalg.batch_matmul indexing_maps = [#{{.+}}, #[[$TB]], #{{.+}}] ins(%{{.+}}, %[[VB]] : tensor<2x2x4xf32>, tensor<2x5x4xf32>)
// CHECK: %[[D1:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DP1]], %[[P1]] : tensor<2x2x5xf32>, tensor<2x2x5xf32>) outs(%{{.+}} : tensor<2x2xf32>)
// CHECK: %[[DS1:.+]] = linalg.generic {{.+}} ins(%[[DP1]], %[[P1]], %[[D1]] :
// CHECK: %[[DQ1P:.+]] = linalg.batch_matmul ins(%[[DS1]], %[[KB]] : tensor<2x2x5xf32>, tensor<2x5x4xf32>)
// CHECK: %[[DQE:.+]] = tensor.empty() : tensor<2x5x4xf32>
// CHECK: %[[DQ1:.+]] = tensor.insert_slice %[[DQ1P]] into %[[DQE]][0, 3, 0] [2, 2, 4]
// CHECK: %[[DK1:.+]] = linalg.batch_matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DS1]], %{{.+}} : tensor<2x2x5xf32>, tensor<2x2x4xf32>) outs(%{{.+}} : tensor<2x5x4xf32>)
// Block 0 (rows 0 to 2, keys 0 to 2).
// CHECK: %[[QR0:.+]] = tensor.extract_slice %[[QB]][0, 0, 0] [2, 3, 4]
// CHECK: %[[KR0:.+]] = tensor.extract_slice %[[KB]][0, 0, 0] [2, 3, 4]
// CHECK: linalg.batch_matmul indexing_maps = [#{{.+}}, #[[$TB]], #{{.+}}] ins(%[[QR0]], %[[KR0]] :
// CHECK: %[[DV1S:.+]] = tensor.extract_slice %[[DV1]][0, 0, 0] [2, 3, 4]
// CHECK: %[[DV0P:.+]] = linalg.batch_matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[P0:[^,]+]], %{{.+}} : tensor<2x3x3xf32>, tensor<2x3x4xf32>) outs(%[[DV1S]] :
// CHECK: %[[DV:.+]] = tensor.insert_slice %[[DV0P]] into %[[DV1]][0, 0, 0] [2, 3, 4]
// CHECK: %[[DS0:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[P0]], %{{.+}} :
// CHECK: %[[DQ:.+]] = tensor.insert_slice %{{.+}} into %[[DQ1]][0, 0, 0] [2, 3, 4]
// CHECK: %[[DK1S:.+]] = tensor.extract_slice %[[DK1]][0, 0, 0] [2, 3, 4]
// CHECK: %[[DK0P:.+]] = linalg.batch_matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DS0]], %{{.+}} : tensor<2x3x3xf32>, tensor<2x3x4xf32>) outs(%[[DK1S]] :
// CHECK: %[[DK:.+]] = tensor.insert_slice %[[DK0P]] into %[[DK1]][0, 0, 0] [2, 3, 4]
// CHECK-DAG: %[[EQ:.+]] = tensor.expand_shape %[[DQ]]
// CHECK-DAG: %[[EK:.+]] = tensor.expand_shape %[[DK]]
// CHECK-DAG: %[[EV:.+]] = tensor.expand_shape %[[DV]]
// CHECK: return %[[EQ]], %[[EK]], %[[EV]]
func.func @attention_backward(%q: tensor<2x1x5x4xf32>, %k: tensor<2x1x5x4xf32>, %v: tensor<2x1x5x4xf32>, %o: tensor<2x1x5x4xf32>, %do: tensor<2x1x5x4xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>) {
  %g:3 = gacc.attention_backward %q, %k, %v, %o, %do {causal, query_block = 3 : i64} : tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>
  return %g#0, %g#1, %g#2 : tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>
}

// -----

// In a bf16 step's function (gacc.compute_precision) each block's P and dS
// are rounded to bf16 before their products, 2 blocks: 4 roundings, and
// nothing else is.
// CHECK-LABEL: func.func @attention_backward_bf16(
// CHECK-COUNT-4: arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @attention_backward_bf16(%q: tensor<2x1x5x4xf32>, %do: tensor<2x1x5x4xf32>) -> tensor<2x1x5x4xf32> attributes {gacc.compute_precision = #gacc.precision<bf16>} {
  %g:3 = gacc.attention_backward %q, %q, %q, %q, %do {causal, query_block = 3 : i64} : tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>
  return %g#0 : tensor<2x1x5x4xf32>
}

// -----

// linear_cross_entropy in blocks of 2 rows over 5 (2, 2, 1): each block
// slices its input rows and labels, computes its logits (a matmul with
// the weight transposed through its indexing map, the bias added), their
// row statistics and its loss, added in f64 into the sum of the blocks
// before it (the init of the next block's reduction), rounded once to f32.
// No [5, 7] tensor exists (BLOCKS).
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-linalg | FileCheck %s --check-prefix=BLOCKS
// CHECK-LABEL: func.func @linear_cross_entropy(
// CHECK-SAME: %[[X:[^:]+]]: tensor<5x4xf32>, %[[W:[^:]+]]: tensor<7x4xf32>, %[[B:[^:]+]]: tensor<7xf32>, %[[Y:[^:]+]]: tensor<5xi32>
// CHECK: %[[X0:.+]] = tensor.extract_slice %[[X]][0, 0] [2, 4]
// CHECK: %[[Y0:.+]] = tensor.extract_slice %[[Y]][0] [2]
// CHECK: %[[Z0:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[X0]], %[[W]] : tensor<2x4xf32>, tensor<7x4xf32>)
// CHECK: %[[ZB0:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<7xf32>) outs(%[[Z0]] : tensor<2x7xf32>)
// CHECK: %[[S0:.+]]:2 = linalg.generic {{.+}} ins(%[[ZB0]], %{{.+}}, %[[Y0]] :
// CHECK: %[[L0:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[S0]]#0, %[[S0]]#1, %[[Y0]] : {{.+}}) outs(%{{.+}} : tensor<f64>)
// CHECK: %[[X1:.+]] = tensor.extract_slice %[[X]][2, 0] [2, 4]
// CHECK: linalg.matmul {{.+}} ins(%[[X1]], %[[W]] :
// CHECK: %[[L1:.+]] = linalg.generic {{.+}} outs(%[[L0]] : tensor<f64>)
// CHECK: %[[X2:.+]] = tensor.extract_slice %[[X]][4, 0] [1, 4]
// CHECK: linalg.matmul {{.+}} ins(%[[X2]], %[[W]] : tensor<1x4xf32>, tensor<7x4xf32>)
// CHECK: %[[L2:.+]] = linalg.generic {{.+}} outs(%[[L1]] : tensor<f64>)
// CHECK: %[[L:.+]] = linalg.generic {{.+}} ins(%[[L2]] : tensor<f64>) outs(%{{.+}} : tensor<f32>)
// CHECK: return %[[L]]
// BLOCKS-LABEL: func.func @linear_cross_entropy(
// BLOCKS-NOT: tensor<5x7xf32>
// BLOCKS: return
func.func @linear_cross_entropy(%x: tensor<5x4xf32>, %w: tensor<7x4xf32>, %b: tensor<7xf32>, %y: tensor<5xi32>) -> tensor<f32> {
  %l = gacc.linear_cross_entropy %x, %w, %y bias %b {row_block = 2 : i64} : tensor<5x4xf32>, tensor<7x4xf32>, tensor<5xi32>, tensor<7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Without row_block, a block holds as many rows as keep its logits within
// 2^24 elements: for 50304 classes, 333 rows (1000 rows: blocks of 333,
// 333, 333 and 1).
// CHECK-LABEL: func.func @linear_cross_entropy_default_block(
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [333, 2]
// CHECK: tensor.extract_slice %{{.+}}[333, 0] [333, 2]
// CHECK: tensor.extract_slice %{{.+}}[666, 0] [333, 2]
// CHECK: tensor.extract_slice %{{.+}}[999, 0] [1, 2]
// CHECK-NOT: tensor.extract_slice %{{.+}} [{{[0-9]+}}, 2]
func.func @linear_cross_entropy_default_block(%x: tensor<1000x2xf32>, %w: tensor<50304x2xf32>, %y: tensor<1000xi32>) -> tensor<f32> {
  %l = gacc.linear_cross_entropy %x, %w, %y : tensor<1000x2xf32>, tensor<50304x2xf32>, tensor<1000xi32> -> tensor<f32>
  return %l : tensor<f32>
}
