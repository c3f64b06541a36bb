// A Fashion-MNIST classifier with a frozen 2.56 GB parameter of which it
// reads one slice: the parameter's host tensor is the allocation that fails
// under a smaller address space.
gacc.param @w : tensor<10x784xf32> = #gacc.zeros
gacc.param @table : tensor<10x64000000xf32> = #gacc.zeros {frozen}

gacc.train_step @big_frozen params [@w, @table] attributes {
    accum_steps = 1 : i64, micro_batch = 32 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05>} {
^bb0(%w: tensor<10x784xf32>, %table: tensor<10x64000000xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %t = tensor.extract_slice %table[0, 0] [10, 784] [1, 1] : tensor<10x64000000xf32> to tensor<10x784xf32>
  %w2 = arith.addf %w, %t : tensor<10x784xf32>
  %z = gacc.linear %x, %w2 : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
