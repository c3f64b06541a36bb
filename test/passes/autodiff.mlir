// RUN: gacc-opt %s -split-input-file -gacc-autodiff | FileCheck %s

// A linear layer + cross-entropy: the loss adjoint is 1 (the body's loss is
// a sum), the logits' adjoint is softmax − one-hot, the weight gradient is
// its own matmul dyᵀ·x (transposed A) and the bias gradient a row sum
// (accumulated in f64, then rounded to f32). No gradient of the input data
// is computed.

gacc.param @w : tensor<3x2xf32> = #gacc.zeros
gacc.param @b : tensor<3xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @linear_ce
// CHECK: ^bb0(%[[W:.+]]: tensor<3x2xf32>, %[[B:.+]]: tensor<3xf32>, %[[X:.+]]: tensor<4x2xf32>, %[[Y:.+]]: tensor<4xi32>):
// CHECK: %[[Z:.+]] = gacc.linear %[[X]], %[[W]] bias %[[B]]
// CHECK: %[[L:.+]] = gacc.cross_entropy %[[Z]], %[[Y]]
// CHECK: %[[ONE:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<f32>)
// CHECK: %[[DZ:.+]] = linalg.generic {{.+}} ins(%[[Z]], %{{.+}}, %{{.+}}, %[[Y]], %[[ONE]] : {{.+}}) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: math.exp
// CHECK-NOT: linalg.matmul ins(%[[DZ]], %[[W]]
// CHECK: %[[DW:.+]] = linalg.matmul indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}] ins(%[[DZ]], %[[X]] : tensor<4x3xf32>, tensor<4x2xf32>) outs(%{{.+}} : tensor<3x2xf32>)
// CHECK: %[[DB64:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[DZ]] : tensor<4x3xf32>) outs(%{{.+}} : tensor<3xf64>)
// CHECK: arith.extf
// CHECK: %[[DB:.+]] = linalg.generic {{.+}} ins(%[[DB64]] : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: arith.truncf
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
// matmul), masked by relu's rule on the pre-activation.

gacc.param @w1 : tensor<5x2xf32> = #gacc.zeros
gacc.param @w2 : tensor<3x5xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @mlp
// CHECK: ^bb0(%[[W1:.+]]: tensor<5x2xf32>, %[[W2:.+]]: tensor<3x5xf32>, %[[X:.+]]: tensor<4x2xf32>, %{{.+}}: tensor<4xi32>):
// CHECK: %[[H:.+]] = gacc.linear %[[X]], %[[W1]]
// CHECK: %[[A:.+]] = gacc.relu %[[H]]
// CHECK: %[[DZ:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: %[[DA:.+]] = linalg.matmul ins(%[[DZ]], %[[W2]] : tensor<4x3xf32>, tensor<3x5xf32>)
// CHECK: %[[DW2:.+]] = linalg.matmul indexing_maps = {{.+}} ins(%[[DZ]], %[[A]] :
// CHECK: %[[DH:.+]] = linalg.generic {{.+}} ins(%[[H]], %[[DA]] :
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
