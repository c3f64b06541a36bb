// A gather of each sample's own row of the i32 data (index-bounds.test),
// whose value then indexes a 4-entry table: it bounds the data as a
// lookup's indices do.
gacc.param @w : tensor<4x3xf32> = #gacc.uniform<low = -1.0, high = 1.0>
gacc.train_step @gathered params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 5 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xi32>, %y: tensor<5xi32>):
  %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e4 = tensor.empty() : tensor<5x4xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e4 : tensor<5x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %a = tensor.extract %x[%i, %j] : tensor<5x4xi32>
    %ix = arith.index_cast %a : i32 to index
    %v = tensor.extract %table[%ix] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<5x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%xf, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
