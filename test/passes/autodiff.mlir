// RUN: gacc-opt %s -split-input-file -gacc-autodiff | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-autodiff | FileCheck %s --check-prefix=BLOCKS --implicit-check-not='tensor<2x5x5xf32>'

// A linear layer + cross-entropy: the loss adjoint is 1 (the body's loss is
// a sum), the logits' adjoint is softmax − one-hot. gacc.linear has no rule
// of its own: its decomposition (a matmul with the weight transposed, a
// bias generic) is differentiated, so the weight gradient is the matmul
// rule's dyᵀ·x (A transposed) and the bias gradient the generic rule's sum
// over the broadcast dimension (in f64, then rounded to f32). The
// recomputed forward matmul is not needed and is gone; no gradient of the
// input data is computed.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @b : tensor<3xf32> = #gacc.zeros
// CHECK-DAG: #[[$TA:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: gacc.train_step @linear_ce
// CHECK: ^bb0(%[[W:.+]]: tensor<3x2xf32>, %[[B:.+]]: tensor<3xf32>, %[[X:.+]]: tensor<4x2xf32>, %[[Y:.+]]: tensor<4xi32>):
// CHECK: %[[Z:.+]] = gacc.linear %[[X]], %[[W]] bias %[[B]]
// CHECK: %[[L:.+]] = gacc.cross_entropy %[[Z]], %[[Y]]
// CHECK: %[[ONE:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<f32>)
// CHECK: %[[DZ:.+]] = linalg.generic {{.+}} ins(%[[Z]], %{{.+}}, %{{.+}}, %[[Y]], %[[ONE]] : {{.+}}) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: math.exp
// CHECK-NOT: linalg.matmul {{.*}}ins(%[[X]], %[[W]]
// CHECK-DAG: %[[DW:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DZ]], %[[X]] : tensor<4x3xf32>, tensor<4x2xf32>) outs(%{{.+}} : tensor<3x2xf32>)
// CHECK-DAG: %[[DB64:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[DZ]] : tensor<4x3xf32>) outs(%{{.+}} : tensor<3xf64>)
// CHECK-DAG: %[[DB:.+]] = linalg.generic {{.+}} ins(%[[DB64]] : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: gacc.yield %[[L]], %[[DW]], %[[DB]] : tensor<f32>, tensor<3x2xf32>, tensor<3xf32>
gacc.train_step @linear_ce params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %b: tensor<3xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Two layers with relu: the hidden activation's adjoint is dy·W2 (a plain
// matmul), masked by relu's rule on its result (torch's threshold_backward:
// the pre-activation need not be kept).

gacc.param @w1 : tensor<5x2xf32> = #gacc.zeros
gacc.param @w2 : tensor<3x5xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @mlp
// CHECK: ^bb0(%[[W1:.+]]: tensor<5x2xf32>, %[[W2:.+]]: tensor<3x5xf32>, %[[X:.+]]: tensor<4x2xf32>, %{{.+}}: tensor<4xi32>):
// CHECK: %[[H:.+]] = gacc.linear %[[X]], %[[W1]]
// CHECK: %[[A:.+]] = gacc.relu %[[H]]
// CHECK: %[[DZ:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: %[[DA:.+]] = linalg.matmul ins(%[[DZ]], %[[W2]] : tensor<4x3xf32>, tensor<3x5xf32>)
// CHECK: %[[DW2:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[DZ]], %[[A]] :
// CHECK: %[[DH:.+]] = linalg.generic {{.+}} ins(%[[A]], %[[DA]] :
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: %[[DW1:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[DH]], %[[X]] :
// CHECK: gacc.yield %{{.+}}, %[[DW1]], %[[DW2]] : tensor<f32>, tensor<5x2xf32>, tensor<3x5xf32>
gacc.train_step @mlp params [@w1, @w2] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w1: tensor<5x2xf32>, %w2: tensor<3x5xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w1 : tensor<4x2xf32>, tensor<5x2xf32> -> tensor<4x5xf32>
  %a = gacc.relu %h : tensor<4x5xf32>
  %z = gacc.linear %a, %w2 : tensor<4x5xf32>, tensor<3x5xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A parameter used twice: its adjoints are added.

gacc.param @w : tensor<4x4xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @shared
// CHECK: %[[G1:.+]] = linalg.matmul indexing_maps
// CHECK: %[[G2:.+]] = linalg.matmul indexing_maps
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[G1]], %[[G2]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: arith.addf
// CHECK: gacc.yield %{{.+}}, %[[SUM]] : tensor<f32>, tensor<4x4xf32>
gacc.train_step @shared params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %z = gacc.linear %h, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The sequence ops: embedding's weight gradient is onehot(tokens)ᵀ · dy over
// the flattened positions (a zero-initialized matmul, so that fusion writes
// it into the accumulator); the [2, 5, 7] linear flattens its leading
// dimensions into 10 rows; GELU and layer_norm build their adjoints from
// their inputs; layer_norm's weight and bias gradients are row sums.

gacc.param @emb : tensor<11x6xf32> = #gacc.zeros
gacc.param @w : tensor<7x6xf32> = #gacc.zeros
gacc.param @g : tensor<7xf32> = #gacc.zeros
gacc.param @b : tensor<7xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @seq
// CHECK: ^bb0(%[[EMB:.+]]: tensor<11x6xf32>, %{{.+}}: tensor<7x6xf32>, %{{.+}}: tensor<7xf32>, %{{.+}}: tensor<7xf32>, %[[TOK:.+]]: tensor<2x5xi32>, %{{.+}}: tensor<2x5xi32>):
// CHECK: %[[E:.+]] = gacc.embedding %[[TOK]], %[[EMB]]
// CHECK: %[[H:.+]] = gacc.linear %[[E]]
// CHECK: %[[A:.+]] = gacc.gelu %[[H]]
// CHECK: %[[N:.+]] = gacc.layer_norm %[[A]]
// The layer norm's adjoint: statistics, then dweight/dbias as one f64 row reduction.
// CHECK: %[[LNP:.+]]:2 = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<10x7xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10x7xf32>) outs(%{{.+}}, %{{.+}} : tensor<7xf64>, tensor<7xf64>)
// CHECK: %[[DG:.+]] = linalg.generic {{.+}} ins(%[[LNP]]#0 : tensor<7xf64>) outs(%{{.+}} : tensor<7xf32>)
// CHECK: %[[DBETA:.+]] = linalg.generic {{.+}} ins(%[[LNP]]#1 : tensor<7xf64>) outs(%{{.+}} : tensor<7xf32>)
// GELU's adjoint (exact form: erf and the normal density).
// CHECK: math.erf
// CHECK: math.exp
// The linear's weight gradient over the 10 flattened rows.
// CHECK: %[[E2:.+]] = tensor.collapse_shape %[[E]] {{\[\[}}0, 1], [2]] : tensor<2x5x6xf32> into tensor<10x6xf32>
// CHECK: %[[DW:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%{{.+}}, %[[E2]] : tensor<10x7xf32>, tensor<10x6xf32>) outs(%{{.+}} : tensor<7x6xf32>)
// The embedding's weight gradient: one-hot rows, then a transposed matmul.
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[TOK]] {{\[\[}}0, 1]] : tensor<2x5xi32> into tensor<10xi32>
// CHECK: %[[ONEHOT:.+]] = linalg.generic {{.+}} ins(%[[FLAT]] : tensor<10xi32>) outs(%{{.+}} : tensor<10x11xf32>)
// CHECK: %[[DEMB:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[ONEHOT]], %{{.+}} : tensor<10x11xf32>, tensor<10x6xf32>) outs(%{{.+}} : tensor<11x6xf32>)
// CHECK: gacc.yield %{{.+}}, %[[DEMB]], %[[DW]], %[[DG]], %[[DBETA]] : tensor<f32>, tensor<11x6xf32>, tensor<7x6xf32>, tensor<7xf32>, tensor<7xf32>
gacc.train_step @seq params [@emb, @w, @g, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%emb: tensor<11x6xf32>, %w: tensor<7x6xf32>, %g: tensor<7xf32>, %b: tensor<7xf32>,
     %tok: tensor<2x5xi32>, %tgt: tensor<2x5xi32>):
  %e = gacc.embedding %tok, %emb : tensor<2x5xi32>, tensor<11x6xf32> -> tensor<2x5x6xf32>
  %h = gacc.linear %e, %w : tensor<2x5x6xf32>, tensor<7x6xf32> -> tensor<2x5x7xf32>
  %a = gacc.gelu %h : tensor<2x5x7xf32>
  %n = gacc.layer_norm %a, %g, %b : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
  %l = gacc.cross_entropy %n, %tgt : tensor<2x5x7xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A layer norm of a vector (a parameter here) differentiates as one row
// [1, 4] (it crashed building a collapse with an empty group).

gacc.param @w : tensor<3x4xf32> = #gacc.zeros
gacc.param @v : tensor<4xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @vector_norm
// CHECK: gacc.layer_norm %{{.+}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK: %[[DV:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: gacc.yield %{{.+}}, %{{.+}}, %{{.+}} : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>
gacc.train_step @vector_norm params [@w, @v] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %v: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %n = gacc.layer_norm %v, %v, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %nb = linalg.broadcast ins(%n : tensor<4xf32>) outs(%e : tensor<4x4xf32>) dimensions = [0]
  %a = arith.addf %x, %nb : tensor<4x4xf32>
  %z = gacc.linear %a, %w : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// With fp16 compute the loss is scaled before differentiation: the reverse
// pass is seeded with the run-time loss scale instead of 1.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @scaled
// CHECK: %[[L:.+]] = gacc.cross_entropy
// CHECK: %[[S:.+]] = gacc.loss_scale : tensor<f32>
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[S]] : {{.+}}) outs(%{{.+}} : tensor<4x3xf32>)
gacc.train_step @scaled params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    precision = #gacc.precision<fp16>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A residual connection written with arith.addf: its scalar rule passes the
// adjoint to both operands (one elementwise generic each, the identity then
// vanishing), and the two adjoints of the hidden activation are added.

gacc.param @w : tensor<4x4xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @residual
// CHECK: %[[H:.+]] = gacc.linear
// CHECK: %[[R:.+]] = gacc.relu %[[H]]
// CHECK: %[[S:.+]] = arith.addf %[[H]], %[[R]] : tensor<4x4xf32>
// CHECK: %[[DS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x4xf32>)
// CHECK: %[[DR:.+]] = linalg.generic {{.+}} ins(%[[R]], %[[DS]] :
// CHECK: arith.cmpf ogt
// CHECK: %[[DH:.+]] = linalg.generic {{.+}} ins(%[[DS]], %[[DR]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: linalg.matmul indexing_maps = {{.+}} ins(%[[DH]], %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>)
gacc.train_step @residual params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %r = gacc.relu %h : tensor<4x4xf32>
  %s = arith.addf %h, %r : tensor<4x4xf32>
  %l = gacc.cross_entropy %s, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Elementwise math on tensors: the adjoint of math.tanh is one elementwise
// generic that recomputes tanh and applies its scalar rule dy·(1 − y²);
// arith.mulf's rule multiplies by the other operand.

gacc.param @w : tensor<4x3xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @elementwise
// CHECK: %[[M:.+]] = arith.mulf %{{.+}}, %{{.+}} : tensor<4x3xf32>
// CHECK: %[[T:.+]] = math.tanh %[[M]] : tensor<4x3xf32>
// CHECK: %[[DM:.+]] = linalg.generic {{.+}} ins(%[[M]], %{{.+}} : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[DY:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[Y:.+]] = math.tanh %[[A]] : f32
// CHECK-NEXT: %[[Y2:.+]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[C1]], %[[Y2]] : f32
// CHECK-NEXT: %[[G:.+]] = arith.mulf %[[DY]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[G]] : f32
// CHECK: %[[DW:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[DM]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: gacc.yield %{{.+}}, %[[DW]] : tensor<f32>, tensor<4x3xf32>
gacc.train_step @elementwise params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %m = arith.mulf %w, %x : tensor<4x3xf32>
  %t = math.tanh %m : tensor<4x3xf32>
  %l = gacc.cross_entropy %t, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A linalg.generic whose parameter input is broadcast over the rows: the
// input's adjoint is a generic over the same iteration space whose output
// is indexed like the input, the row dimension becoming a reduction
// (accumulated in f64). The body recomputes the forward scalar ops it
// needs.

gacc.param @b : tensor<3xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @broadcast
// CHECK: %[[DB64:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #[[$COL:.+]]], iterator_types = ["reduction", "parallel"]} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) outs(%{{.+}} : tensor<3xf64>)
// CHECK: arith.mulf
// CHECK: math.tanh
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: %[[DB:.+]] = linalg.generic {{.+}} ins(%[[DB64]] : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: gacc.yield %{{.+}}, %[[DB]] : tensor<f32>, tensor<3xf32>
gacc.train_step @broadcast params [@b] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%b: tensor<3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4x3xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.mulf %a, %c : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A contraction written as linalg.generic: its weight's adjoint is again a
// contraction (a product of two operands summed over the rows), so it
// accumulates in f32 like a GEMM, which gacc-fuse-accumulation can write
// into the accumulator.

gacc.param @w : tensor<3x5xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @contraction
// CHECK: %[[DW:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<4x5xf32>, tensor<4x3xf32>) outs(%{{.+}} : tensor<3x5xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %[[OUT:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.mulf
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[OUT]], %[[P]] : f32
// CHECK-NOT: f64
// CHECK: gacc.yield %{{.+}}, %[[DW]] : tensor<f32>, tensor<3x5xf32>
gacc.train_step @contraction params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x5xf32>, %x: tensor<4x5xf32>, %y: tensor<4xi32>):
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x5xf32>, tensor<3x5xf32>) outs(%z : tensor<4x3xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// linalg.matmul keeps matrix products: with B = the weight (plain layout)
// dB = Aᵀ·dC; with a transposed weight dB = dCᵀ·A; an activation's adjoint
// dA = dC·Bᵀ. linalg.batch_matmul's weight gradient is a batch_matmul with
// transposed operands.

gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.param @v : tensor<3x3xf32> = #gacc.zeros
gacc.param @bw : tensor<2x3x3xf32> = #gacc.zeros
// CHECK-DAG: #[[$BK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$BN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: gacc.train_step @matmuls
// CHECK: ^bb0(%[[W:.+]]: tensor<4x3xf32>, %[[V:.+]]: tensor<3x3xf32>, %[[BW:.+]]: tensor<2x3x3xf32>, %[[X:.+]]: tensor<2x4xf32>,
// CHECK: %[[H:.+]] = linalg.matmul ins(%[[X]], %[[W]]
// CHECK: %[[O:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[H]], %[[V]]
// CHECK: %[[E:.+]] = tensor.expand_shape %[[O]]
// CHECK: %[[BO:.+]] = linalg.batch_matmul ins(%[[E]], %[[BW]]
// CHECK-DAG: %[[DBW:.+]] = linalg.batch_matmul indexing_maps = [#[[$BK]], #[[$BN]], #{{.+}}] ins(%[[E]], %{{.+}} : tensor<2x1x3xf32>, tensor<2x1x3xf32>) outs(%{{.+}} : tensor<2x3x3xf32>)
// CHECK-DAG: %[[DE:.+]] = linalg.batch_matmul indexing_maps = {{.+}} ins(%{{.+}}, %[[BW]] :
// CHECK: %[[DO:.+]] = tensor.collapse_shape %[[DE]]
// CHECK: %[[DH:.+]] = linalg.matmul ins(%[[DO]], %[[V]] : tensor<2x3xf32>, tensor<3x3xf32>)
// CHECK: %[[DV:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[DO]], %[[H]] :
// CHECK: %[[DW:.+]] = linalg.matmul indexing_maps = [#[[$TA2:.+]], #{{.+}}, #{{.+}}] ins(%[[X]], %[[DH]] :
// CHECK: gacc.yield %{{.+}}, %[[DW]], %[[DV]], %[[DBW]]
gacc.train_step @matmuls params [@w, @v, @bw] attributes {
    accum_steps = 1 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %v: tensor<3x3xf32>, %bw: tensor<2x3x3xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi32>):
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  %o = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>]
      ins(%h, %v : tensor<2x3xf32>, tensor<3x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  %ex = tensor.expand_shape %o [[0, 1], [2]] output_shape [2, 1, 3] : tensor<2x3xf32> into tensor<2x1x3xf32>
  %e3 = tensor.empty() : tensor<2x1x3xf32>
  %z3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %bo = linalg.batch_matmul ins(%ex, %bw : tensor<2x1x3xf32>, tensor<2x3x3xf32>) outs(%z3 : tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
  %f = tensor.collapse_shape %bo [[0, 1], [2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
  %l = gacc.cross_entropy %f, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// linalg.softmax's closed form, y ⊙ (dy − Σ dy ⊙ y), from its result; and a
// maximum reduction (linalg.reduce with arith.maximumf): the terms equal to
// the result share its adjoint, counted first.

gacc.param @p : tensor<4x3x2xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @softmax_max
// CHECK: %[[MX:.+]] = linalg.reduce { arith.maximumf }
// CHECK: %[[SM:.+]] = linalg.softmax dimension(1) ins(%[[MX]]
// CHECK: %[[DOT:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %[[SM]] : tensor<4x3xf32>, tensor<4x3xf32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[DX:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[SM]], %[[DOT]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK-NEXT: arith.mulf
// The tie count [init = max] + Σ [term = max], then each term's share.
// CHECK: %[[CNT:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[MX]] :
// CHECK: arith.cmpf oeq
// CHECK: %[[DP:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[DX]], %[[MX]], %[[CNT]] :
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: gacc.yield %{{.+}}, %[[DP]] : tensor<f32>, tensor<4x3x2xf32>
gacc.train_step @softmax_max params [@p] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%p: tensor<4x3x2xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %init = arith.constant dense<-1.0e30> : tensor<4x3xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%p : tensor<4x3x2xf32>) outs(%init : tensor<4x3xf32>) dimensions = [2]
  %e = tensor.empty() : tensor<4x3xf32>
  %sm = linalg.softmax dimension(1) ins(%mx : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %o = arith.mulf %sm, %x : tensor<4x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The tensor ops move the adjoint back: a collapse is expanded, a slice is
// written into zeros at its place (insert_slice), a constant pad sliced off,
// concatenated operands sliced apart.

gacc.param @a : tensor<2x6xf32> = #gacc.zeros
gacc.param @c : tensor<2x1x3xf32> = #gacc.zeros
gacc.param @q : tensor<1x1xf32> = #gacc.zeros
gacc.param @k : tensor<2x1xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @tensor_ops
// CHECK: ^bb0(%[[A:.+]]: tensor<2x6xf32>, %[[C:.+]]: tensor<2x1x3xf32>, %[[Q:.+]]: tensor<1x1xf32>, %[[K:.+]]: tensor<2x1xf32>,
// CHECK-DAG: %[[DK:.+]] = tensor.extract_slice %{{.+}}[0, 2] [2, 1] [1, 1] : tensor<2x3xf32> to tensor<2x1xf32>
// CHECK-DAG: %[[DQ:.+]] = tensor.extract_slice %{{.+}}[1, 2] [1, 1] [1, 1] : tensor<2x3xf32> to tensor<1x1xf32>
// CHECK-DAG: %[[DC:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 1, 3] : tensor<2x3xf32> into tensor<2x1x3xf32>
// CHECK-DAG: %[[DA:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 1] [2, 3] [1, 2] : tensor<2x3xf32> into tensor<2x6xf32>
// CHECK: gacc.yield %{{.+}}, %[[DA]], %[[DC]], %[[DQ]], %[[DK]]
gacc.train_step @tensor_ops params [@a, @c, @q, @k] attributes {
    accum_steps = 1 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%a: tensor<2x6xf32>, %c: tensor<2x1x3xf32>, %q: tensor<1x1xf32>, %kp: tensor<2x1xf32>, %x: tensor<2x3xf32>, %y: tensor<2xi32>):
  %s = tensor.extract_slice %a[0, 1] [2, 3] [1, 2] : tensor<2x6xf32> to tensor<2x3xf32>
  %k = tensor.collapse_shape %c [[0, 1], [2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %q low[1, 2] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<1x1xf32> to tensor<2x3xf32>
  %t = arith.addf %s, %k : tensor<2x3xf32>
  %u = arith.addf %t, %p : tensor<2x3xf32>
  %x2 = tensor.extract_slice %x[0, 0] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>
  %j = tensor.concat dim(1) %x2, %kp : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %w = arith.addf %u, %j : tensor<2x3xf32>
  %v = arith.mulf %w, %x : tensor<2x3xf32>
  %l = gacc.cross_entropy %v, %y : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A precision change: the adjoint of arith.extf rounds the adjoint to the
// narrower type (truncf), that of arith.truncf widens it back (extf), as
// PyTorch's .to(dtype) backward does.

gacc.param @w : tensor<4x3xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @precision
// CHECK: %[[DH:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x3xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[DW:.+]] = linalg.generic {{.+}} ins(%[[DH]] : tensor<4x3xbf16>) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: gacc.yield %{{.+}}, %[[DW]] : tensor<f32>, tensor<4x3xf32>
gacc.train_step @precision params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %h = arith.truncf %w : tensor<4x3xf32> to tensor<4x3xbf16>
  %e = arith.extf %h : tensor<4x3xbf16> to tensor<4x3xf32>
  %m = arith.mulf %e, %x : tensor<4x3xf32>
  %l = gacc.cross_entropy %m, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Two slices of one value (as the taps of a convolution or a pool): the
// first slice's adjoint is written into zeros, the second is added into
// the slice it covers, without a second zero tensor or a full-size add.
// CHECK-LABEL: gacc.train_step @taps
// CHECK:       gacc.phase_begin backward
// CHECK:       %[[Z:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK:       %[[S1:.+]] = tensor.insert_slice %{{.*}} into %[[Z]][0, 1] [4, 3] [1, 2]
// CHECK-NOT:   linalg.fill {{.*}} tensor<4x6xf32>
// CHECK:       %[[OLD:.+]] = tensor.extract_slice %[[S1]][0, 0] [4, 3] [1, 2]
// CHECK:       %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[OLD]], %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK:       tensor.insert_slice %[[SUM]] into %[[S1]][0, 0] [4, 3] [1, 2]
gacc.param @w : tensor<4x6xf32> = #gacc.zeros
gacc.train_step @taps params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x6xf32>, %x: tensor<4x6xf32>, %y: tensor<4xi32>):
  %h = arith.mulf %w, %x : tensor<4x6xf32>
  %a = tensor.extract_slice %h[0, 0] [4, 3] [1, 2] : tensor<4x6xf32> to tensor<4x3xf32>
  %b = tensor.extract_slice %h[0, 1] [4, 3] [1, 2] : tensor<4x6xf32> to tensor<4x3xf32>
  %c = arith.addf %a, %b : tensor<4x3xf32>
  %l = gacc.cross_entropy %c, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// dropout's adjoint is dropout of the output's adjoint with the same p and
// stream (at the model level neither has a key; gacc-expand-accumulation
// gives both the same one), so the backward draws the forward's mask again
// instead of keeping it.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @dropout
// CHECK: %[[Z:.+]] = gacc.linear
// CHECK: %[[D:.+]] = gacc.dropout %[[Z]] {p = 3.000000e-01 : f64, stream = 4 : i64} : tensor<4x3xf32>
// CHECK: gacc.cross_entropy %[[D]]
// CHECK: gacc.phase_begin backward
// CHECK: %[[DD:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: %[[DZ:.+]] = gacc.dropout %[[DD]] {p = 3.000000e-01 : f64, stream = 4 : i64} : tensor<4x3xf32>
// CHECK: %[[DW:.+]] = linalg.matmul {{.+}} ins(%[[DZ]], %{{.+}} : tensor<4x3xf32>, tensor<4x2xf32>)
// CHECK: gacc.yield %{{.+}}, %[[DW]]
gacc.train_step @dropout params [@w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %d = gacc.dropout %z {p = 0.3 : f64, stream = 4 : i64} : tensor<4x3xf32>
  %l = gacc.cross_entropy %d, %y : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// batch_norm's hand-written adjoint (torch's batch_norm_backward): one pass
// over the activations sums Σ dy and Σ dy·x̂ per channel (two f64 outputs),
// which are the bias and weight gradients; one elementwise pass computes dx
// from dy, x, the mask, the statistics, the weight and both sums. Nothing
// differentiates the statistics' own reductions.

// CHECK-LABEL: gacc.train_step @batch_norm
// CHECK: %[[C:.+]] = tensor.expand_shape %{{.+}} output_shape [4, 3, 2]
// CHECK: gacc.batch_norm %[[C]]
// CHECK: gacc.phase_begin backward
// CHECK: %[[DY:.+]] = tensor.expand_shape %{{.+}} output_shape [4, 3, 2] : tensor<4x6xf32> into tensor<4x3x2xf32>
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {{.+}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[DY]], %[[C]], %{{.+}}, %{{.+}} : tensor<4x3x2xf32>, tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>) outs(%{{.+}}, %{{.+}} : tensor<3xf64>, tensor<3xf64>)
// CHECK: %[[DB:.+]] = linalg.generic {{.+}} ins(%[[SUMS]]#0 : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: %[[DG:.+]] = linalg.generic {{.+}} ins(%[[SUMS]]#1 : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: %[[DX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DY]], %[[C]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DB]], %[[DG]], %{{.+}} : {{.+}}) outs(%{{.+}} : tensor<4x3x2xf32>)
// CHECK-NOT: iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: %[[DH:.+]] = tensor.collapse_shape %[[DX]]
// CHECK: %[[DW1:.+]] = linalg.matmul {{.+}} ins(%[[DH]], %{{.+}} : tensor<4x6xf32>, tensor<4x5xf32>)
// CHECK: gacc.yield %{{.+}}, %[[DW1]], %[[DG]], %[[DB]], %{{.+}} :
gacc.param @w1 : tensor<6x5xf32> = #gacc.zeros
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @b : tensor<3xf32> = #gacc.zeros
gacc.param @w2 : tensor<2x6xf32> = #gacc.zeros
gacc.statistic @mean : tensor<3xf32> = #gacc.zeros
gacc.statistic @var : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @batch_norm params [@w1, @g, @b, @w2] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w1: tensor<6x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %w2: tensor<2x6xf32>, %x: tensor<4x5xf32>, %y: tensor<4xi32>):
  %h = gacc.linear %x, %w1 : tensor<4x5xf32>, tensor<6x5xf32> -> tensor<4x6xf32>
  %c = tensor.expand_shape %h [[0], [1, 2]] output_shape [4, 3, 2] : tensor<4x6xf32> into tensor<4x3x2xf32>
  %n = gacc.batch_norm %c, %g, %b running(@mean, @var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>
  %f = tensor.collapse_shape %n [[0], [1, 2]] : tensor<4x3x2xf32> into tensor<4x6xf32>
  %z = gacc.linear %f, %w2 : tensor<4x6xf32>, tensor<2x6xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// gacc.attention's own adjoint: one gacc.attention_backward of the
// forward's operands, its result and the result's adjoint, with the
// forward's attributes (its blocks are its decomposition's,
// convert-gacc-to-linalg.mlir). Nothing T × T exists yet (BLOCKS).
// CHECK-LABEL: gacc.train_step @attention
// BLOCKS-LABEL: gacc.train_step @attention
// BLOCKS: gacc.yield
// CHECK: %[[ATT:.+]] = gacc.attention %[[Q:.+]], %[[K:.+]], %[[V:.+]] {causal, query_block = 3 : i64}
// CHECK: gacc.phase_begin backward
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[DQ:[^,]+]], %[[DK:[^,]+]], %[[DV:[^ ]+]] = gacc.attention_backward %[[Q]], %[[K]], %[[V]], %[[ATT]], %{{.+}} {causal, query_block = 3 : i64} : tensor<2x1x5x4xf32>
// CHECK-DAG: tensor.collapse_shape %[[DQ]]
// CHECK-DAG: tensor.collapse_shape %[[DK]]
// CHECK-DAG: tensor.collapse_shape %[[DV]]
gacc.param @wq : tensor<4x4xf32> = #gacc.zeros
gacc.param @wk : tensor<4x4xf32> = #gacc.zeros
gacc.param @wv : tensor<4x4xf32> = #gacc.zeros
gacc.train_step @attention params [@wq, @wk, @wv] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%wq: tensor<4x4xf32>, %wk: tensor<4x4xf32>, %wv: tensor<4x4xf32>,
     %x: tensor<2x5x4xf32>, %tgt: tensor<2x5xi32>):
  %q0 = gacc.linear %x, %wq : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %k0 = gacc.linear %x, %wk : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %v0 = gacc.linear %x, %wv : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %q = tensor.expand_shape %q0 [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %k = tensor.expand_shape %k0 [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %v = tensor.expand_shape %v0 [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %o = gacc.attention %q, %k, %v {causal, query_block = 3 : i64} : tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>
  %o0 = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<2x1x5x4xf32> into tensor<2x5x4xf32>
  %l = gacc.cross_entropy %o0, %tgt : tensor<2x5x4xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// gacc.linear_cross_entropy's own adjoint, in blocks of 2 rows over 5
// (2, 2, 1). The input, weight and bias come through
// gacc.recompute_inputs; each block computes its logits again (x·Wᵀ + b),
// then dz = softmax − one-hot, d input = dz·W inserted into its rows of a
// tensor only insert_slice writes, dW = dzᵀ·x accumulated from block to
// block through the matmul's init, the bias gradient summed in f64 from
// block to block and rounded once. No [5, 7] tensor exists (BLOCKS).
// CHECK-DAG: #[[$TA:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: gacc.train_step @head
// BLOCKS-LABEL: gacc.train_step @head
// BLOCKS-NOT: tensor<5x7xf32>
// BLOCKS: gacc.yield
// CHECK: %[[H:.+]] = gacc.linear %{{.+}}, %[[W1:[^ ]+]] :
// CHECK: %[[L:.+]] = gacc.linear_cross_entropy %[[H]], %[[W:[^,]+]], %[[Y:[^ ]+]] bias %[[B:[^ ]+]] {row_block = 2 : i64}
// CHECK: gacc.phase_begin backward
// CHECK: %[[KEPT:.+]]:3 = gacc.recompute_inputs %[[H]], %[[W]], %[[B]] :
// Block 0: rows 0 and 1.
// CHECK: %[[X0:.+]] = tensor.extract_slice %[[KEPT]]#0[0, 0] [2, 4]
// CHECK: %[[Y0:.+]] = tensor.extract_slice %[[Y]][0] [2]
// CHECK: %[[Z0:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[X0]], %[[KEPT]]#1 : tensor<2x4xf32>, tensor<7x4xf32>)
// CHECK: %[[ZB0:.+]] = linalg.generic {{.+}} ins(%[[KEPT]]#2 : tensor<7xf32>) outs(%[[Z0]] : tensor<2x7xf32>)
// CHECK: %[[DZ0:.+]] = linalg.generic {{.+}} ins(%[[ZB0]], %{{.+}}, %{{.+}}, %[[Y0]], %{{.+}} : {{.+}}) outs(%{{.+}} : tensor<2x7xf32>)
// CHECK: %[[DX0:.+]] = linalg.matmul ins(%[[DZ0]], %[[KEPT]]#1 : tensor<2x7xf32>, tensor<7x4xf32>)
// CHECK: %[[DXE:.+]] = tensor.empty() : tensor<5x4xf32>
// CHECK: %[[DXA:.+]] = tensor.insert_slice %[[DX0]] into %[[DXE]][0, 0] [2, 4]
// CHECK: %[[DW0:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DZ0]], %[[X0]] : tensor<2x7xf32>, tensor<2x4xf32>) outs(%{{.+}} : tensor<7x4xf32>)
// CHECK: %[[DB0:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[DZ0]] : tensor<2x7xf32>) outs(%{{.+}} : tensor<7xf64>)
// Block 1: rows 2 and 3, added into dW and the bias sum.
// CHECK: %[[X1:.+]] = tensor.extract_slice %[[KEPT]]#0[2, 0] [2, 4]
// CHECK: %[[DZ1:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : {{.+}}) outs(%{{.+}} : tensor<2x7xf32>)
// CHECK: %[[DXB:.+]] = tensor.insert_slice %{{.+}} into %[[DXA]][2, 0] [2, 4]
// CHECK: %[[DW1:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DZ1]], %[[X1]] : tensor<2x7xf32>, tensor<2x4xf32>) outs(%[[DW0]] : tensor<7x4xf32>)
// CHECK: %[[DB1:.+]] = linalg.generic {{.+}} ins(%[[DZ1]] : tensor<2x7xf32>) outs(%[[DB0]] : tensor<7xf64>)
// Block 2: row 4.
// CHECK: %[[X2:.+]] = tensor.extract_slice %[[KEPT]]#0[4, 0] [1, 4]
// CHECK: %[[DZ2:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : {{.+}}) outs(%{{.+}} : tensor<1x7xf32>)
// CHECK: %[[DX:.+]] = tensor.insert_slice %{{.+}} into %[[DXB]][4, 0] [1, 4]
// CHECK: %[[DW:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DZ2]], %[[X2]] : tensor<1x7xf32>, tensor<1x4xf32>) outs(%[[DW1]] : tensor<7x4xf32>)
// CHECK: %[[DB64:.+]] = linalg.generic {{.+}} ins(%[[DZ2]] : tensor<1x7xf32>) outs(%[[DB1]] : tensor<7xf64>)
// CHECK: %[[DB:.+]] = linalg.generic {{.+}} ins(%[[DB64]] : tensor<7xf64>) outs(%{{.+}} : tensor<7xf32>)
// The layer below reads the assembled input gradient.
// CHECK: %[[DW1G:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[DX]], %{{.+}} : tensor<5x4xf32>, tensor<5x3xf32>)
// CHECK: gacc.yield %[[L]], %[[DW1G]], %[[DW]], %[[DB]]
gacc.param @w1 : tensor<4x3xf32> = #gacc.zeros
gacc.param @w : tensor<7x4xf32> = #gacc.zeros
gacc.param @b : tensor<7xf32> = #gacc.zeros
gacc.train_step @head params [@w1, @w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 5 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w1: tensor<4x3xf32>, %w: tensor<7x4xf32>, %b: tensor<7xf32>, %x: tensor<5x3xf32>, %y: tensor<5xi32>):
  %h = gacc.linear %x, %w1 : tensor<5x3xf32>, tensor<4x3xf32> -> tensor<5x4xf32>
  %l = gacc.linear_cross_entropy %h, %w, %y bias %b {row_block = 2 : i64} : tensor<5x4xf32>, tensor<7x4xf32>, tensor<5xi32>, tensor<7xf32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// gacc.embedding's adjoint over a vocabulary whose one-hot rows take more
// than 2^24 elements: 10 positions of 4194304 entries are built in blocks
// of 4, 4 and 2 positions, each block's product dW += onehotᵀ·dy adding
// into the one before it. No [10, 4194304] tensor exists (BLOCKS).
// CHECK-DAG: #[[$TA:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: gacc.train_step @big_table
// BLOCKS-LABEL: gacc.train_step @big_table
// BLOCKS-NOT: tensor<10x4194304xf32>
// BLOCKS: gacc.yield
// CHECK: gacc.phase_begin backward
// CHECK: %[[I0:.+]] = tensor.extract_slice %{{.+}}[0] [4] [1] : tensor<10xi32> to tensor<4xi32>
// CHECK: %[[H0:.+]] = linalg.generic {{.+}} ins(%[[I0]] : tensor<4xi32>) outs(%{{.+}} : tensor<4x4194304xf32>)
// CHECK: %[[D0:.+]] = tensor.extract_slice %{{.+}}[0, 0] [4, 1] [1, 1] : tensor<10x1xf32> to tensor<4x1xf32>
// CHECK: %[[G0:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%[[H0]], %[[D0]] : tensor<4x4194304xf32>, tensor<4x1xf32>)
// CHECK: %[[I1:.+]] = tensor.extract_slice %{{.+}}[4] [4] [1]
// CHECK: %[[G1:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%{{.+}}, %{{.+}} : tensor<4x4194304xf32>, tensor<4x1xf32>) outs(%[[G0]] : tensor<4194304x1xf32>)
// CHECK: %[[I2:.+]] = tensor.extract_slice %{{.+}}[8] [2] [1]
// CHECK: %[[G2:.+]] = linalg.matmul indexing_maps = [#[[$TA]], #{{.+}}, #{{.+}}] ins(%{{.+}}, %{{.+}} : tensor<2x4194304xf32>, tensor<2x1xf32>) outs(%[[G1]] : tensor<4194304x1xf32>)
// CHECK: gacc.yield %{{.+}}, %[[G2]]
gacc.param @table : tensor<4194304x1xf32> = #gacc.zeros
gacc.train_step @big_table params [@table] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%table: tensor<4194304x1xf32>, %tok: tensor<2x5xi32>, %y: tensor<2x5xi32>):
  %e = gacc.embedding %tok, %table : tensor<2x5xi32>, tensor<4194304x1xf32> -> tensor<2x5x1xf32>
  %l = gacc.cross_entropy %e, %y : tensor<2x5x1xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
