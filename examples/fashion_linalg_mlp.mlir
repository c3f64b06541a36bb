// The 784-256-10 Fashion-MNIST MLP written in upstream MLIR only, with
// gacc's cross-entropy as the loss: linalg.matmul with the weights stored
// [in, out], and one linalg.generic per layer adding the bias (broadcast
// over the rows) and, for the hidden layer, applying ReLU as a select (the
// adjoint of arith.select passes the gradient where x > 0, as torch.relu's
// does). gacc-autodiff differentiates all of it; the weight gradients are
// matmuls that gacc-fuse-accumulation writes into their accumulators.
// Micro-batch 32 × 8 (effective batch 256), SGD lr 0.05, momentum 0.9.
//
//   build/bin/gacc-run examples/fashion_linalg_mlp.mlir --epochs 3

gacc.param @fc1_weight : tensor<784x256xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @fc1_bias : tensor<256xf32> = #gacc.kaiming_uniform<fan_in = 784>
gacc.param @fc2_weight : tensor<256x10xf32> = #gacc.kaiming_uniform<fan_in = 256>
gacc.param @fc2_bias : tensor<10xf32> = #gacc.kaiming_uniform<fan_in = 256>

#rows = affine_map<(i, j) -> (i, j)>
#cols = affine_map<(i, j) -> (j)>

gacc.train_step @fashion_linalg_mlp params [@fc1_weight, @fc1_bias, @fc2_weight, @fc2_bias] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05, momentum = 0.9>,
    seed = 0 : i64} {
^bb0(%w1: tensor<784x256xf32>, %b1: tensor<256xf32>,
     %w2: tensor<256x10xf32>, %b2: tensor<10xf32>,
     %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %zero = arith.constant 0.0 : f32
  // Hidden layer: relu(x·W1 + b1).
  %e1 = tensor.empty() : tensor<32x256xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x256xf32>) -> tensor<32x256xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<32x784xf32>, tensor<784x256xf32>) outs(%z1 : tensor<32x256xf32>) -> tensor<32x256xf32>
  %h = linalg.generic {indexing_maps = [#rows, #cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<32x256xf32>, tensor<256xf32>) outs(%e1 : tensor<32x256xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %s = arith.addf %v, %b : f32
    %pos = arith.cmpf ogt, %s, %zero : f32
    %r = arith.select %pos, %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<32x256xf32>
  // Output layer: h·W2 + b2.
  %e2 = tensor.empty() : tensor<32x10xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x10xf32>) -> tensor<32x10xf32>
  %m2 = linalg.matmul ins(%h, %w2 : tensor<32x256xf32>, tensor<256x10xf32>) outs(%z2 : tensor<32x10xf32>) -> tensor<32x10xf32>
  %logits = linalg.generic {indexing_maps = [#rows, #cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %b2 : tensor<32x10xf32>, tensor<10xf32>) outs(%e2 : tensor<32x10xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<32x10xf32>
  %loss = gacc.cross_entropy %logits, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
