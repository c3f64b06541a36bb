// A Fashion-MNIST classifier whose micro-batch computes a large
// intermediate: each image broadcast 512 times ([m, 784, 512] f32, 3.3 GB
// at m = 2048), then reduced twice (two uses, so fusion does not remove it).
gacc.param @w : tensor<10x784xf32> = #gacc.zeros

gacc.train_step @big_intermediate params [@w] attributes {
    accum_steps = 1 : i64, micro_batch = 2048 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05>} {
^bb0(%w: tensor<10x784xf32>, %x: tensor<2048x784xf32>, %y: tensor<2048xi32>):
  %e = tensor.empty() : tensor<2048x784x512xf32>
  %b = linalg.broadcast ins(%x : tensor<2048x784xf32>) outs(%e : tensor<2048x784x512xf32>) dimensions = [2]
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2048x784xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%init : tensor<2048x784xf32>) -> tensor<2048x784xf32>
  %s = linalg.reduce ins(%b : tensor<2048x784x512xf32>) outs(%z0 : tensor<2048x784xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %m = linalg.reduce ins(%b : tensor<2048x784x512xf32>) outs(%z0 : tensor<2048x784xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sm = arith.addf %s, %m : tensor<2048x784xf32>
  %z = gacc.linear %sm, %w : tensor<2048x784xf32>, tensor<10x784xf32> -> tensor<2048x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<2048x10xf32>, tensor<2048xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}
