// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=64" | FileCheck %s --check-prefix=M
// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="accum-steps=2" | FileCheck %s --check-prefix=N
// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule="micro-batch=16 accum-steps=3 data-parallel=true" | FileCheck %s --check-prefix=BOTH
// RUN: gacc-opt %s -split-input-file -gacc-set-accumulation-schedule | FileCheck %s --check-prefix=KEEP

// The schedule of gacc-run's --micro-batch / --accum-steps: one option keeps
// the declared effective batch (256 = 4 × 64 = 2 × 128), both set it; the
// body's inputs and the results of the ops that infer their types follow
// the new micro-batch size.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @s
// M-SAME: accum_steps = 4 : i64, effective_batch = 256 : i64, micro_batch = 64 : i64
// M: ^bb0(%{{.+}}: tensor<10x784xf32>, %{{.+}}: tensor<64x784xf32>, %{{.+}}: tensor<64xi32>):
// M: gacc.linear {{.+}} -> tensor<64x10xf32>
// M: gacc.cross_entropy {{.+}} : tensor<64x10xf32>, tensor<64xi32> -> tensor<f32>
// N-LABEL: gacc.train_step @s
// N-SAME: accum_steps = 2 : i64, effective_batch = 256 : i64, micro_batch = 128 : i64
// N: tensor<128x784xf32>
// BOTH-LABEL: gacc.train_step @s
// BOTH-SAME: accum_steps = 3 : i64, data_parallel, effective_batch = 48 : i64, micro_batch = 16 : i64
// BOTH: tensor<16x784xf32>
// KEEP-LABEL: gacc.train_step @s
// KEEP-SAME: accum_steps = 8 : i64, effective_batch = 256 : i64, micro_batch = 32 : i64
// KEEP-NOT: data_parallel
gacc.train_step @s params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %l = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A body of upstream ops follows the micro-batch too: linalg ops get their
// loop sizes from their inputs and new inits (empty, fill) at the new
// shape, a broadcast added to the samples is made again at their size,
// and softmax, reshapes (the batch is the outer part of a merged
// dimension), pads and whole slices are re-typed.

gacc.param @w : tensor<4x3xf32> = #gacc.zeros
gacc.param @b : tensor<3xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @upstream
// M: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2]] : tensor<64x2x2xf32> into tensor<64x4xf32>
// M: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<64x4xf32>, tensor<4x3xf32>) outs(%{{.+}} : tensor<64x3xf32>)
// M: linalg.broadcast ins(%{{.+}} : tensor<3xf32>) outs(%{{.+}} : tensor<64x3xf32>) dimensions = [0]
// M: arith.addf %{{.+}}, %{{.+}} : tensor<64x3xf32>
// M: linalg.softmax dimension(1) ins(%{{.+}} : tensor<64x3xf32>) outs(%{{.+}} : tensor<64x3xf32>)
// M: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<64x3xf32> into tensor<192xf32>
// M: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [64, 3] : tensor<192xf32> into tensor<64x3xf32>
// M: tensor.pad
// M: } : tensor<64x3xf32> to tensor<64x4xf32>
// M: tensor.extract_slice %{{.+}}[0, 0] [64, 3] [1, 1] : tensor<64x4xf32> to tensor<64x3xf32>
// M: gacc.cross_entropy %{{.+}}, %{{.+}} : tensor<64x3xf32>, tensor<64xi32> -> tensor<f32>
gacc.train_step @upstream params [@w, @b] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %b: tensor<3xf32>, %x: tensor<32x2x2xf32>, %y: tensor<32xi32>):
  %c0 = arith.constant 0.0 : f32
  %xf = tensor.collapse_shape %x [[0], [1, 2]] : tensor<32x2x2xf32> into tensor<32x4xf32>
  %e = tensor.empty() : tensor<32x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<32x3xf32>) -> tensor<32x3xf32>
  %m = linalg.matmul ins(%xf, %w : tensor<32x4xf32>, tensor<4x3xf32>) outs(%z : tensor<32x3xf32>) -> tensor<32x3xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<32x3xf32>) dimensions = [0]
  %h = arith.addf %m, %bb : tensor<32x3xf32>
  %s = linalg.softmax dimension(1) ins(%h : tensor<32x3xf32>) outs(%e : tensor<32x3xf32>) -> tensor<32x3xf32>
  %r = tensor.collapse_shape %s [[0, 1]] : tensor<32x3xf32> into tensor<96xf32>
  %r2 = tensor.expand_shape %r [[0, 1]] output_shape [32, 3] : tensor<96xf32> into tensor<32x3xf32>
  %p = tensor.pad %r2 low[0, 1] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<32x3xf32> to tensor<32x4xf32>
  %q = tensor.extract_slice %p[0, 0] [32, 3] [1, 1] : tensor<32x4xf32> to tensor<32x3xf32>
  %l = gacc.cross_entropy %q, %y : tensor<32x3xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}


// -----

// A splat constant shaped like a micro-batch that scales an elementwise
// op's other operand is made again at the new shape (every element is the
// same value), as a fill or an empty tensor would be.

gacc.param @w : tensor<10x784xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @splat
// M: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<64x10xf32>
// M: arith.mulf %{{.+}}, %[[HALF]] : tensor<64x10xf32>
gacc.train_step @splat params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %half = arith.constant dense<0.5> : tensor<32x10xf32>
  %s = arith.mulf %z, %half : tensor<32x10xf32>
  %l = gacc.cross_entropy %s, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A slice of a reshaped micro-batch follows it: the reshape is remade and
// the slice compares with the type the reshape had before (this used to
// crash).

gacc.param @w : tensor<10x8xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @reshaped_slice
// M: tensor.expand_shape {{.+}} into tensor<64x1x8xf32>
// M: tensor.extract_slice {{.+}} [64, 1, 8] [1, 1, 1] : tensor<64x1x8xf32> to tensor<64x1x8xf32>
gacc.train_step @reshaped_slice params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<10x8xf32>, %x: tensor<32x8xf32>, %y: tensor<32xi32>):
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [32, 1, 8] : tensor<32x8xf32> into tensor<32x1x8xf32>
  %all = tensor.extract_slice %x3[0, 0, 0] [32, 1, 8] [1, 1, 1] : tensor<32x1x8xf32> to tensor<32x1x8xf32>
  %z = gacc.linear %all, %w : tensor<32x1x8xf32>, tensor<10x8xf32> -> tensor<32x1x10xf32>
  %z2 = tensor.collapse_shape %z [[0, 1], [2]] : tensor<32x1x10xf32> into tensor<32x10xf32>
  %l = gacc.cross_entropy %z2, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A broadcast to the micro-batch's size that no sample reaches keeps its
// size (the sum of 32 copies of @v stays 32 copies: the size is the
// model's, not the micro-batch's); one added to the samples is made again
// at the new size, and the one it replaced is erased.

gacc.param @w : tensor<6x5xf32> = #gacc.zeros
gacc.param @v : tensor<5xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @unrelated_broadcast
// M: linalg.broadcast ins(%{{.+}} : tensor<5xf32>) outs(%{{.+}} : tensor<32x5xf32>) dimensions = [0]
// M: linalg.reduce ins(%{{.+}} : tensor<32x5xf32>)
// M-NOT: tensor<32x5xf32>
// M: linalg.broadcast ins(%{{.+}} : tensor<5xf32>) outs(%{{.+}} : tensor<64x5xf32>) dimensions = [0]
// M-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<64x5xf32>
gacc.train_step @unrelated_broadcast params [@w, @v] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<6x5xf32>, %v: tensor<5xf32>, %x: tensor<32x6xf32>, %y: tensor<32xi32>):
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x5xf32>) -> tensor<32x5xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<32x6xf32>, tensor<6x5xf32>) outs(%f : tensor<32x5xf32>) -> tensor<32x5xf32>
  %vb = linalg.broadcast ins(%v : tensor<5xf32>) outs(%e : tensor<32x5xf32>) dimensions = [0]
  %e5 = tensor.empty() : tensor<5xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
  %s = linalg.reduce ins(%vb : tensor<32x5xf32>) outs(%f5 : tensor<5xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %sb = linalg.broadcast ins(%s : tensor<5xf32>) outs(%e : tensor<32x5xf32>) dimensions = [0]
  %lg = arith.addf %mm, %sb : tensor<32x5xf32>
  %l = gacc.cross_entropy %lg, %y : tensor<32x5xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A weight broadcast along a batch_matmul's batch loop follows the samples
// that loop reads; a splat constant written over a whole column block of
// the samples is made at their new size, and the destination's type is the
// result's; a chain of casts through a dynamic shape back to the static one
// follows the micro-batch.

gacc.param @w : tensor<4x5xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @broadcast_input
// M: linalg.broadcast ins(%{{.+}} : tensor<4x5xf32>) outs(%{{.+}} : tensor<64x4x5xf32>) dimensions = [0]
// M: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<64x3x4xf32>, tensor<64x4x5xf32>) outs(%{{.+}} : tensor<64x3x5xf32>)
// M: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<64x2xf32>
// M: tensor.insert_slice %[[HALF]] into %{{.+}}[0, 1] [64, 2] [1, 1] : tensor<64x2xf32> into tensor<64x5xf32>
// M: tensor.cast %{{.+}} : tensor<64x5xf32> to tensor<?x?xf32>
// M: tensor.cast %{{.+}} : tensor<?x?xf32> to tensor<64x5xf32>
// M: gacc.cross_entropy %{{.+}}, %{{.+}} : tensor<64x5xf32>, tensor<64xi32> -> tensor<f32>
gacc.train_step @broadcast_input params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x5xf32>, %x: tensor<32x3x4xf32>, %y: tensor<32xi32>):
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<32x4x5xf32>
  %wb = linalg.broadcast ins(%w : tensor<4x5xf32>) outs(%eb : tensor<32x4x5xf32>) dimensions = [0]
  %ez = tensor.empty() : tensor<32x3x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ez : tensor<32x3x5xf32>) -> tensor<32x3x5xf32>
  %bm = linalg.batch_matmul ins(%x, %wb : tensor<32x3x4xf32>, tensor<32x4x5xf32>) outs(%z : tensor<32x3x5xf32>) -> tensor<32x3x5xf32>
  %er = tensor.empty() : tensor<32x5xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<32x5xf32>) -> tensor<32x5xf32>
  %r = linalg.reduce ins(%bm : tensor<32x3x5xf32>) outs(%fr : tensor<32x5xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %half = arith.constant dense<0.5> : tensor<32x2xf32>
  %i = tensor.insert_slice %half into %r[0, 1] [32, 2] [1, 1] : tensor<32x2xf32> into tensor<32x5xf32>
  %d = tensor.cast %i : tensor<32x5xf32> to tensor<?x?xf32>
  %c = tensor.cast %d : tensor<?x?xf32> to tensor<32x5xf32>
  %l = gacc.cross_entropy %c, %y : tensor<32x5xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A broadcast follows the samples it meets through the init of a linalg op
// (a bias added into the matmul's result, as upstream FoldAddIntoDest
// writes it), through an elementwise op (tanh of the bias), and in a
// tensor.concat along another dimension; a slice of samples written over
// a whole fill makes the fill again at their size.

gacc.param @w : tensor<5x3xf32> = #gacc.zeros
gacc.param @b : tensor<3xf32> = #gacc.zeros
gacc.param @c : tensor<2xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @meets_samples
// M: %[[CB:.+]] = linalg.broadcast ins(%{{.+}} : tensor<2xf32>) outs(%{{.+}} : tensor<64x2xf32>)
// M: tensor.concat dim(1) %{{.+}}, %[[CB]] : (tensor<64x3xf32>, tensor<64x2xf32>) -> tensor<64x5xf32>
// M: %[[BB:.+]] = linalg.broadcast ins(%{{.+}} : tensor<3xf32>) outs(%{{.+}} : tensor<64x3xf32>)
// M: %[[BB2:.+]] = linalg.broadcast ins(%{{.+}} : tensor<3xf32>) outs(%{{.+}} : tensor<64x3xf32>)
// M: linalg.generic {{.+}} ins(%[[BB]] : tensor<64x3xf32>) outs(%{{.+}} : tensor<64x3xf32>)
// M: %[[T:.+]] = math.tanh %[[BB2]] : tensor<64x3xf32>
// M: arith.addf %{{.+}}, %[[T]] : tensor<64x3xf32>
// M: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<64x3xf32>)
// M: tensor.insert_slice %{{.+}} into %[[F]][0, 0] [64, 3] [1, 1] : tensor<64x3xf32> into tensor<64x3xf32>
gacc.train_step @meets_samples params [@w, @b, @c] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<5x3xf32>, %b: tensor<3xf32>, %c: tensor<2xf32>, %x: tensor<32x3xf32>, %y: tensor<32xi32>):
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<32x2xf32>
  %cb = linalg.broadcast ins(%c : tensor<2xf32>) outs(%e2 : tensor<32x2xf32>) dimensions = [0]
  %xc = tensor.concat dim(1) %x, %cb : (tensor<32x3xf32>, tensor<32x2xf32>) -> tensor<32x5xf32>
  %e = tensor.empty() : tensor<32x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x3xf32>) -> tensor<32x3xf32>
  %mm = linalg.matmul ins(%xc, %w : tensor<32x5xf32>, tensor<5x3xf32>) outs(%f : tensor<32x3xf32>) -> tensor<32x3xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<32x3xf32>) dimensions = [0]
  %biased = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%bb : tensor<32x3xf32>) outs(%mm : tensor<32x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<32x3xf32>
  %t = math.tanh %bb : tensor<32x3xf32>
  %lg = arith.addf %biased, %t : tensor<32x3xf32>
  %g = linalg.fill ins(%zero : f32) outs(%e : tensor<32x3xf32>) -> tensor<32x3xf32>
  %i = tensor.insert_slice %lg into %g[0, 0] [32, 3] [1, 1] : tensor<32x3xf32> into tensor<32x3xf32>
  %l = gacc.cross_entropy %i, %y : tensor<32x3xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A gather of each sample's own row (the samples taken from above the
// region) sizes the loop that indexes them.

gacc.param @w : tensor<3x4xf32> = #gacc.zeros
// M-LABEL: gacc.train_step @row_gather
// M: linalg.generic {{.+}} outs(%{{.+}} : tensor<64x4xf32>)
// M: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<64x4xf32>
gacc.train_step @row_gather params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<3x4xf32>, %x: tensor<32x4xf32>, %y: tensor<32xi32>):
  %e4 = tensor.empty() : tensor<32x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e4 : tensor<32x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %k = arith.subi %c3, %j : index
    %v = tensor.extract %x[%i, %k] : tensor<32x4xf32>
    linalg.yield %v : f32
  } -> tensor<32x4xf32>
  %z = gacc.linear %r, %w : tensor<32x4xf32>, tensor<3x4xf32> -> tensor<32x3xf32>
  %l = gacc.cross_entropy %z, %y : tensor<32x3xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
