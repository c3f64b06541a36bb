// A Fashion-MNIST classifier that centres its logits on the micro-batch's
// mean (a batch statistic written by hand, without gacc.batch_norm's
// declaration): it mixes the samples of the micro-batch.
gacc.param @w : tensor<10x784xf32> = #gacc.zeros

gacc.train_step @batch_mean params [@w] attributes {
    accum_steps = 8 : i64, micro_batch = 32 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
  %z = gacc.linear %x, %w : tensor<32x784xf32>, tensor<10x784xf32> -> tensor<32x10xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<10xf32>) -> tensor<10xf32>
  %sum = linalg.reduce ins(%z : tensor<32x10xf32>) outs(%f : tensor<10xf32>) dimensions = [0]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  %e2 = tensor.empty() : tensor<32x10xf32>
  %b = linalg.broadcast ins(%sum : tensor<10xf32>) outs(%e2 : tensor<32x10xf32>) dimensions = [0]
  %centred = arith.subf %z, %b : tensor<32x10xf32>
  %loss = gacc.cross_entropy %centred, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
