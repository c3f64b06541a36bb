// A gather inside an scf.if of a linalg payload (index-bounds.test): the
// input's values are bounded by the 4-entry table as a direct gather's
// are, whatever the condition.
gacc.param @w : tensor<4x3xf32> = #gacc.uniform<low = -1.0, high = 1.0>
gacc.train_step @nested params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 5 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%w: tensor<4x3xf32>, %x: tensor<5x4xi32>, %y: tensor<5xi32>):
  %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e4 = tensor.empty() : tensor<5x4xf32>
  %xf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<5x4xi32>) outs(%e4 : tensor<5x4xf32>) {
  ^bb0(%a: i32, %out: f32):
    %zero = arith.constant 0 : i32
    %ok = arith.cmpi sge, %a, %zero : i32
    %v = scf.if %ok -> (f32) {
      %ix = arith.index_cast %a : i32 to index
      %g = tensor.extract %table[%ix] : tensor<4xf32>
      scf.yield %g : f32
    } else {
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }
    linalg.yield %v : f32
  } -> tensor<5x4xf32>
  %c0 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<5x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %o = linalg.matmul ins(%xf, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %l = gacc.cross_entropy %o, %y : tensor<5x3xf32>, tensor<5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
