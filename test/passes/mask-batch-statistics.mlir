// RUN: gacc-opt %s -split-input-file -gacc-mask-batch-statistics | FileCheck %s
// The pass is idempotent: a second run finds every mask computed from the
// targets already and changes nothing.
// RUN: gacc-opt %s -split-input-file -gacc-mask-batch-statistics > %t.once
// RUN: gacc-opt %t.once -split-input-file -gacc-mask-batch-statistics > %t.twice
// RUN: diff %t.once %t.twice

// Both batch_norms get one mask, built once where the body begins from the
// loss's targets: 1 for a sample whose target is not the padding value
// (cross_entropy's ignore_index, -100), 0 for a padding row.
// CHECK-LABEL: gacc.train_step @s
// CHECK: ^bb0(%{{[^:]+}}: tensor<3xf32>, %{{[^:]+}}: tensor<2x3xf32>, %[[X:[^:]+]]: tensor<4x3xf32>, %[[Y:[^:]+]]: tensor<4xi32>):
// CHECK: %[[MASK:.+]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[Y]] : tensor<4xi32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK: arith.constant -100 : i32
// CHECK: arith.cmpi eq
// CHECK: arith.maximumf
// CHECK: %[[N:.+]] = gacc.batch_norm %[[X]], %{{.+}}, %{{.+}} mask %[[MASK]] running(@mean1, @var1)
// CHECK: gacc.batch_norm %[[N]], %{{.+}}, %{{.+}} mask %[[MASK]] running(@mean2, @var2)
// CHECK-NOT: linalg.generic
// CHECK: gacc.yield
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.statistic @mean1 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var1 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.statistic @mean2 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var2 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %n = gacc.batch_norm %x, %g, %g running(@mean1, @var1) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %m = gacc.batch_norm %n, %g, %g running(@mean2, @var2) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %z = gacc.linear %m, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Sequence targets [m, T]: a sample counts when any of its targets does
// (a maximum over T per sample). A mask the model gives (here an input,
// whose padding rows copy a real sample's) is multiplied by it, so a
// padding row never counts.
// CHECK-LABEL: gacc.train_step @seq
// CHECK: ^bb0({{.*}}, %[[K:[^:]+]]: tensor<2xf32>):
// CHECK: %[[M:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<2x5xi32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: gacc.batch_norm %{{.+}} mask %[[M]] running(@mean1, @var1)
// CHECK: %[[BOTH:.+]] = arith.mulf %[[K]], %[[M]] : tensor<2xf32>
// CHECK-NEXT: gacc.batch_norm %{{.+}} mask %[[BOTH]] running(@mean2, @var2)
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @e : tensor<7x3xf32> = #gacc.zeros
gacc.param @w : tensor<7x3xf32> = #gacc.zeros
gacc.statistic @mean1 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var1 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.statistic @mean2 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var2 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @seq params [@g, @e, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<token_mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %e: tensor<7x3xf32>, %w: tensor<7x3xf32>, %t: tensor<2x5xi32>, %y: tensor<2x5xi32>, %k: tensor<2xf32>):
  %h = gacc.embedding %t, %e : tensor<2x5xi32>, tensor<7x3xf32> -> tensor<2x5x3xf32>
  %c = tensor.empty() : tensor<2x3x5xf32>
  %hc = linalg.transpose ins(%h : tensor<2x5x3xf32>) outs(%c : tensor<2x3x5xf32>) permutation = [0, 2, 1]
  %n = gacc.batch_norm %hc, %g, %g running(@mean1, @var1) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>
  %n2 = gacc.batch_norm %n, %g, %g mask %k running(@mean2, @var2) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>
  %c2 = tensor.empty() : tensor<2x5x3xf32>
  %back = linalg.transpose ins(%n2 : tensor<2x3x5xf32>) outs(%c2 : tensor<2x5x3xf32>) permutation = [0, 2, 1]
  %z = gacc.linear %back, %w : tensor<2x5x3xf32>, tensor<7x3xf32> -> tensor<2x5x7xf32>
  %l = gacc.cross_entropy %z, %y : tensor<2x5x7xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// A mask the model computes from the targets (y != 1) is the model's own
// choice, not the padding mask: it is multiplied by the padding mask too
// (a padding row, target -100, is != 1).
// CHECK-LABEL: gacc.train_step @s
// CHECK: %[[PAD:.+]] = linalg.generic {{.*}}gacc.padding_mask
// CHECK: %[[K:.+]] = linalg.generic
// CHECK: %[[BOTH:.+]] = arith.mulf %[[K]], %[[PAD]] : tensor<4xf32>
// CHECK-NEXT: gacc.batch_norm %{{.+}} mask %[[BOTH]]
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.statistic @mean1 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var1 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @s params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64, effective_batch = 7 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4xf32>
  // the model's own choice: samples of class 1 only (mask = (y == 1))
  %k = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y : tensor<4xi32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: i32, %o: f32):
    %c1 = arith.constant 1 : i32
    %eq = arith.cmpi ne, %a, %c1 : i32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %eq, %one, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %n = gacc.batch_norm %x, %g, %g mask %k running(@mean1, @var1) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  %z = gacc.linear %n, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// The tag alone is not trusted: a model's own mask that carries it (here a
// constant) is not the padding mask of the targets, and is multiplied.
// CHECK-LABEL: gacc.train_step @tagged
// CHECK: %[[PAD:.+]] = linalg.generic {{.*}}gacc.padding_mask
// CHECK: %[[K:.+]] = arith.constant {gacc.padding_mask} dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[BOTH:.+]] = arith.mulf %[[K]], %[[PAD]] : tensor<4xf32>
// CHECK-NEXT: gacc.batch_norm %{{.+}} mask %[[BOTH]]
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.statistic @mean1 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var1 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @tagged params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64, effective_batch = 7 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %k = arith.constant {gacc.padding_mask} dense<1.0> : tensor<4xf32>
  %n = gacc.batch_norm %x, %g, %g mask %k running(@mean1, @var1) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  %z = gacc.linear %n, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// -----

// Nor on a linalg.generic that reads the targets: a model's own mask
// (y != 1) carrying the tag is not the padding mask (a padding row, target
// -100, is != 1), and is multiplied by it.
// CHECK-LABEL: gacc.train_step @tagged_generic
// CHECK: %[[PAD:.+]] = linalg.generic {{.*}}gacc.padding_mask
// CHECK: %[[K:.+]] = linalg.generic
// CHECK: %[[BOTH:.+]] = arith.mulf %[[K]], %[[PAD]] : tensor<4xf32>
// CHECK-NEXT: gacc.batch_norm %{{.+}} mask %[[BOTH]]
gacc.param @g : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.param @w : tensor<2x3xf32> = #gacc.zeros
gacc.statistic @mean1 : tensor<3xf32> = #gacc.zeros
gacc.statistic @var1 : tensor<3xf32> = #gacc.constant<value = 1.0>
gacc.train_step @tagged_generic params [@g, @w] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64, effective_batch = 7 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%g: tensor<3xf32>, %w: tensor<2x3xf32>, %x: tensor<4x3xf32>, %y: tensor<4xi32>):
  %e = tensor.empty() : tensor<4xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y : tensor<4xi32>) outs(%e : tensor<4xf32>) attrs = {gacc.padding_mask} {
  ^bb0(%a: i32, %o: f32):
    %c1 = arith.constant 1 : i32
    %ne = arith.cmpi ne, %a, %c1 : i32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %ne, %one, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %n = gacc.batch_norm %x, %g, %g mask %k running(@mean1, @var1) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  %z = gacc.linear %n, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
