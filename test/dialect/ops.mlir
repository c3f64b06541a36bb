// RUN: gacc-opt %s --verify-roundtrip | FileCheck %s
// Round-trip of every gacc op and attribute.

// CHECK-LABEL: gacc.param @w : tensor<4x3xf32> = #gacc.kaiming_uniform<fan_in = 3>
gacc.param @w : tensor<4x3xf32> = #gacc.kaiming_uniform<fan_in = 3>
// CHECK: gacc.param @b : tensor<4xf32> = #gacc.zeros
gacc.param @b : tensor<4xf32> = #gacc.zeros
// CHECK: gacc.param @u : tensor<2x4xf32> = #gacc.uniform<low = -1.000000e-01, high = 1.000000e-01>
gacc.param @u : tensor<2x4xf32> = #gacc.uniform<low = -0.1, high = 0.1>
// CHECK: gacc.param @n : tensor<2xf32> = #gacc.normal<mean = 0.000000e+00, std = 2.000000e-02>
gacc.param @n : tensor<2xf32> = #gacc.normal<mean = 0.0, std = 0.02>

// CHECK-LABEL: gacc.train_step @step params [@w, @b, @u, @n]
// CHECK-SAME: accum_steps = 2 : i64
// CHECK-SAME: normalization = #gacc.normalization<mean>
// CHECK-SAME: optimizer = #gacc.sgd<lr = 1.000000e-01, momentum = 9.000000e-01, weight_decay = 1.000000e-04, nesterov = true>
// CHECK: gacc.linear %{{.*}}, %{{.*}} bias %{{.*}} : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
// CHECK: gacc.relu %{{.*}} : tensor<5x4xf32>
// CHECK: gacc.linear %{{.*}}, %{{.*}} : tensor<5x4xf32>, tensor<2x4xf32> -> tensor<5x2xf32>
// CHECK: gacc.cross_entropy %{{.*}}, %{{.*}} {ignore_index = -1 : i64} : tensor<5x2xf32>, tensor<5xi64> -> tensor<f32>
// CHECK: gacc.cross_entropy %{{.*}}, %{{.*}} : tensor<5x2xf32>, tensor<5xi64> -> tensor<f32>
// CHECK: gacc.cross_entropy %{{.*}}, %{{.*}} {label_smoothing = 1.000000e-01 : f64} : tensor<5x2xf32>, tensor<5xi64> -> tensor<f32>
// CHECK: gacc.yield %{{.*}} : tensor<f32>
gacc.train_step @step params [@w, @b, @u, @n] attributes {
    accum_steps = 2 : i64, micro_batch = 5 : i64, effective_batch = 10 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.1, momentum = 0.9, weight_decay = 1.0e-4, nesterov = true>,
    seed = 7 : i64} {
^bb0(%w: tensor<4x3xf32>, %b: tensor<4xf32>, %u: tensor<2x4xf32>, %n: tensor<2xf32>,
     %x: tensor<5x3xf32>, %y: tensor<5xi64>):
  %h = gacc.linear %x, %w bias %b : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
  %a = gacc.relu %h : tensor<5x4xf32>
  %z = gacc.linear %a, %u : tensor<5x4xf32>, tensor<2x4xf32> -> tensor<5x2xf32>
  %z2 = gacc.linear %a, %u bias %n : tensor<5x4xf32>, tensor<2x4xf32>, tensor<2xf32> -> tensor<5x2xf32>
  %l = gacc.cross_entropy %z, %y {ignore_index = -1 : i64} : tensor<5x2xf32>, tensor<5xi64> -> tensor<f32>
  %l2 = gacc.cross_entropy %z2, %y : tensor<5x2xf32>, tensor<5xi64> -> tensor<f32>
  %l3 = gacc.cross_entropy %z2, %y {label_smoothing = 0.1 : f64} : tensor<5x2xf32>, tensor<5xi64> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// A ragged last micro-batch: 3 × 4 slots hold an effective batch of 10.
// CHECK-LABEL: gacc.train_step @ragged_step
// CHECK-SAME: accum_steps = 3 : i64
// CHECK-SAME: effective_batch = 10 : i64
// CHECK-SAME: micro_batch = 4 : i64
gacc.train_step @ragged_step params [@b] attributes {
    accum_steps = 3 : i64, micro_batch = 4 : i64, effective_batch = 10 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.01>} {
^bb0(%b: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %h = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %h, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// The phase markers: gacc-autodiff places the backward one,
// gacc-expand-accumulation the others.
// CHECK-LABEL: func.func @marker
// CHECK: gacc.phase_begin forward
// CHECK: gacc.phase_begin backward
// CHECK: gacc.phase_begin update
func.func @marker() {
  gacc.phase_begin forward
  gacc.phase_begin backward
  gacc.phase_begin update
  return
}

// The kept inputs of a recomputed region: results typed as the operands.
// CHECK-LABEL: func.func @recompute_inputs
// CHECK: %[[K:.*]]:2 = gacc.recompute_inputs %{{.*}}, %{{.*}} : tensor<4x3xf32>, i64
// CHECK: return %[[K]]#0
func.func @recompute_inputs(%x: tensor<4x3xf32>, %n: i64) -> tensor<4x3xf32> {
  %k:2 = gacc.recompute_inputs %x, %n : tensor<4x3xf32>, i64
  return %k#0 : tensor<4x3xf32>
}

// CHECK-LABEL: gacc.train_step @sum_step
// CHECK-SAME: normalization = #gacc.normalization<sum>
// CHECK-SAME: optimizer = #gacc.sgd<lr = 1.000000e-02>
gacc.train_step @sum_step params [@b] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.01>} {
^bb0(%b: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %h = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %h, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// CHECK: #gacc.normalization<token_mean>
func.func private @token_mean_attr() attributes {n = #gacc.normalization<token_mean>}

// CHECK-LABEL: func.func @accumulation_level
// CHECK: gacc.accumulate %{{.*}} into %{{.*}} first %{{.*}} : tensor<4xf32>
// CHECK: gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01, momentum = 9.000000e-01> param(%{{.*}}) accumulator(%{{.*}}) state(%{{.*}}) count(%{{.*}}) lr(%{{.*}}) step(%{{.*}})
// CHECK: gacc.apply_optimizer #gacc.sgd<lr = 1.000000e-01> param(%{{.*}}) accumulator(%{{.*}}) count
func.func @accumulation_level(%g: tensor<4xf32>, %acc: tensor<4xf32>, %p: tensor<4xf32>,
                              %m: tensor<4xf32>, %first: i1, %n: f32, %lr: f32, %k: i64)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = gacc.accumulate %g into %acc first %first : tensor<4xf32>
  %p1, %m1 = gacc.apply_optimizer #gacc.sgd<lr = 0.1, momentum = 0.9> param(%p) accumulator(%a) state(%m) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> (tensor<4xf32>, tensor<4xf32>)
  %p2 = gacc.apply_optimizer #gacc.sgd<lr = 0.1> param(%p) accumulator(%a) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> tensor<4xf32>
  return %a, %p1, %m1, %p2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @fusion_level
// CHECK: gacc.matmul_accumulate %{{.*}}, %{{.*}} into %{{.*}} first %{{.*}} {transpose_a} : tensor<5x4xf32>, tensor<5x3xf32> into tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: gacc.matmul_accumulate %{{.*}}, %{{.*}} into %{{.*}} first %{{.*}} {transpose_b} : memref<4x5xf32>, memref<3x5xf32> into memref<4x3xf32>
func.func @fusion_level(%dy: tensor<5x4xf32>, %x: tensor<5x3xf32>, %acc: tensor<4x3xf32>,
                        %a: memref<4x5xf32>, %b: memref<3x5xf32>, %c: memref<4x3xf32>,
                        %first: i1) -> tensor<4x3xf32> {
  %r = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<5x4xf32>, tensor<5x3xf32> into tensor<4x3xf32> -> tensor<4x3xf32>
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_b} : memref<4x5xf32>, memref<3x5xf32> into memref<4x3xf32>
  return %r : tensor<4x3xf32>
}

// bf16 or fp16 factors (a narrowed step's stored values), fp32 accumulator.
// CHECK-LABEL: func.func @low_precision_factors
// CHECK: gacc.matmul_accumulate %{{.*}}, %{{.*}} into %{{.*}} first %{{.*}} {transpose_a} : tensor<5x4xbf16>, tensor<5x3xbf16> into tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: gacc.matmul_accumulate %{{.*}}, %{{.*}} into %{{.*}} first %{{.*}} : memref<4x5xf16>, memref<5x3xf16> into memref<4x3xf32>
func.func @low_precision_factors(%dy: tensor<5x4xbf16>, %x: tensor<5x3xbf16>, %acc: tensor<4x3xf32>,
                                 %a: memref<4x5xf16>, %b: memref<5x3xf16>, %c: memref<4x3xf32>,
                                 %first: i1) -> tensor<4x3xf32> {
  %r = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<5x4xbf16>, tensor<5x3xbf16> into tensor<4x3xf32> -> tensor<4x3xf32>
  gacc.matmul_accumulate %a, %b into %c first %first : memref<4x5xf16>, memref<5x3xf16> into memref<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @data_parallel
// CHECK: %{{.*}} = gacc.all_reduce %{{.*}} : tensor<11xf32> -> tensor<11xf32>
// CHECK: gacc.all_reduce %{{.*}} : memref<11xf32>
func.func @data_parallel(%t: tensor<11xf32>, %m: memref<11xf32>) -> tensor<11xf32> {
  %r = gacc.all_reduce %t : tensor<11xf32> -> tensor<11xf32>
  gacc.all_reduce %m : memref<11xf32>
  return %r : tensor<11xf32>
}

// CHECK-LABEL: func.func @sequence_ops
// CHECK: gacc.embedding %{{.*}}, %{{.*}} : tensor<2x5xi32>, tensor<11x6xf32> -> tensor<2x5x6xf32>
// CHECK: gacc.linear %{{.*}}, %{{.*}} bias %{{.*}} : tensor<2x5x6xf32>, tensor<7x6xf32>, tensor<7xf32> -> tensor<2x5x7xf32>
// CHECK: gacc.gelu %{{.*}} : tensor<2x5x7xf32>
// CHECK: gacc.gelu %{{.*}} {approximate = "tanh"} : tensor<2x5x7xf32>
// CHECK: gacc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
// CHECK: gacc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = {{.*}} : f64} : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
// CHECK: gacc.cross_entropy %{{.*}}, %{{.*}} : tensor<2x5x7xf32>, tensor<2x5xi32> -> tensor<f32>
func.func @sequence_ops(%tok: tensor<2x5xi32>, %emb: tensor<11x6xf32>, %w: tensor<7x6xf32>,
                        %b: tensor<7xf32>, %g: tensor<7xf32>) -> tensor<f32> {
  %e = gacc.embedding %tok, %emb : tensor<2x5xi32>, tensor<11x6xf32> -> tensor<2x5x6xf32>
  %h = gacc.linear %e, %w bias %b : tensor<2x5x6xf32>, tensor<7x6xf32>, tensor<7xf32> -> tensor<2x5x7xf32>
  %a = gacc.gelu %h : tensor<2x5x7xf32>
  %t = gacc.gelu %a {approximate = "tanh"} : tensor<2x5x7xf32>
  %n = gacc.layer_norm %t, %g, %b : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
  %n2 = gacc.layer_norm %n, %g, %b {eps = 1.0e-6 : f64} : tensor<2x5x7xf32>, tensor<7xf32>, tensor<7xf32>
  %l = gacc.cross_entropy %n2, %tok : tensor<2x5x7xf32>, tensor<2x5xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// Dropout at the model level (no key; stream 0 is the default and is not
// printed) and with the key gacc-expand-accumulation binds.
// CHECK-LABEL: func.func @dropout
// CHECK: gacc.dropout %{{.*}} {p = 1.000000e-01 : f64} : tensor<2x5x7xf32>
// CHECK: gacc.dropout %{{.*}} {p = 5.000000e-01 : f64, stream = 3 : i64} : tensor<2x5x7xf32>
// CHECK: gacc.dropout %{{.*}} key(%{{.*}}, %{{.*}}, %{{.*}}) {p = 1.000000e-01 : f64, stream = 1 : i64} : tensor<2x5x7xf32>
func.func @dropout(%x: tensor<2x5x7xf32>, %seed: i64, %step: i64, %first: i64) -> tensor<2x5x7xf32> {
  %a = gacc.dropout %x {p = 0.1 : f64} : tensor<2x5x7xf32>
  %b = gacc.dropout %a {p = 0.5 : f64, stream = 3 : i64} : tensor<2x5x7xf32>
  %c = gacc.dropout %b key(%seed, %step, %first) {p = 0.1 : f64, stream = 1 : i64} : tensor<2x5x7xf32>
  return %c : tensor<2x5x7xf32>
}

// CHECK: gacc.param @c : tensor<3xf32> = #gacc.constant<value = 1.000000e+00>
gacc.param @c : tensor<3xf32> = #gacc.constant<value = 1.0>
// CHECK: gacc.param @frozen : tensor<3xf32> = #gacc.zeros {frozen}
gacc.param @frozen : tensor<3xf32> = #gacc.zeros {frozen}

// CHECK: gacc.statistic @running_mean : tensor<3xf32> = #gacc.zeros
gacc.statistic @running_mean : tensor<3xf32> = #gacc.zeros
// CHECK: gacc.statistic @running_var : tensor<3xf32> = #gacc.constant<value = 1.000000e+00>
gacc.statistic @running_var : tensor<3xf32> = #gacc.constant<value = 1.0>

// CHECK-LABEL: func.func @batch_norm
// CHECK: gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}} running(@running_mean, @running_var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK: gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} running(@running_mean, @running_var) {batch_statistics = #gacc.batch_statistics<per_window>, eps = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64} : tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
func.func @batch_norm(%x: tensor<4x3xf32>, %g: tensor<3xf32>, %i: tensor<4x3x5x5xf32>, %k: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4x3x5x5xf32>) {
  %y = gacc.batch_norm %x, %g, %g running(@running_mean, @running_var) {batch_statistics = #gacc.batch_statistics<per_micro_batch>} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %z = gacc.batch_norm %i, %g, %g mask %k running(@running_mean, @running_var) {momentum = 0.2, eps = 1.0e-3, batch_statistics = #gacc.batch_statistics<per_window>} : tensor<4x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  return %y, %z : tensor<4x3xf32>, tensor<4x3x5x5xf32>
}

// Optimizers, schedules, clipping and parameter groups.
// CHECK: gacc.param @nd : tensor<4xf32> = #gacc.zeros {no_weight_decay}
gacc.param @nd : tensor<4xf32> = #gacc.zeros {no_weight_decay}
// CHECK-LABEL: gacc.train_step @adamw_step params [@nd]
// CHECK-SAME: lr_schedule = #gacc.lr_schedule<warmup_steps = 10, decay = "cosine", decay_steps = 90, min_lr = 1.000000e-05>
// CHECK-SAME: max_grad_norm = 1.000000e+00 : f64
// CHECK-SAME: optimizer = #gacc.adamw<lr = 1.000000e-03, weight_decay = 5.000000e-02>
gacc.train_step @adamw_step params [@nd] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.adamw<lr = 1.0e-3, weight_decay = 0.05>,
    lr_schedule = #gacc.lr_schedule<warmup_steps = 10, decay = "cosine", decay_steps = 90, min_lr = 1.0e-5>,
    max_grad_norm = 1.0 : f64} {
^bb0(%b: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %h = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %h, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}

// CHECK-LABEL: func.func @optimizer_attrs
// CHECK: gacc.apply_optimizer #gacc.adam<lr = 1.000000e-03> param(%{{.*}}) accumulator(%{{.*}}) state(%{{.*}}, %{{.*}}) count(%{{.*}}) clip(%{{.*}}) lr(%{{.*}}) step(%{{.*}}) {no_weight_decay}
// CHECK: gacc.apply_optimizer #gacc.lion<lr = 1.000000e-04, beta2 = {{.*}}> param(%{{.*}}) accumulator(%{{.*}}) state(%{{.*}}) count
func.func @optimizer_attrs(%p: tensor<4xf32>, %acc: tensor<4xf32>, %m: tensor<4xf32>, %n: f32, %lr: f32, %k: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  %p1, %m1, %v1 = gacc.apply_optimizer #gacc.adam<lr = 1.0e-3> param(%p) accumulator(%acc) state(%m, %m) count(%n) clip(%n) lr(%lr) step(%k) {no_weight_decay} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, f32, f32, f32, i64) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %p2, %m2 = gacc.apply_optimizer #gacc.lion<lr = 1.0e-4, beta2 = 0.98> param(%p) accumulator(%acc) state(%m) count(%n) lr(%lr) step(%k) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, f32, f32, i64) -> (tensor<4xf32>, tensor<4xf32>)
  return %p1, %p2 : tensor<4xf32>, tensor<4xf32>
}

// Mixed precision and loss scaling; gacc.loss_scale as gacc-autodiff
// seeds the backward with it (a body that yields its gradients).
gacc.param @mp : tensor<4xf32> = #gacc.zeros
// CHECK-LABEL: gacc.train_step @fp16_step
// CHECK-SAME: loss_scaling = #gacc.loss_scaling<init_scale = 1.024000e+03, growth_interval = 100>
// CHECK-SAME: precision = #gacc.precision<fp16>
// CHECK: gacc.loss_scale : tensor<f32>
gacc.train_step @fp16_step params [@mp] attributes {
    accum_steps = 1 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = #gacc.sgd<lr = 0.1>,
    precision = #gacc.precision<fp16>,
    loss_scaling = #gacc.loss_scaling<init_scale = 1024.0, growth_interval = 100>} {
^bb0(%b: tensor<4xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %h = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = gacc.cross_entropy %h, %y : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  %s = gacc.loss_scale : tensor<f32>
  gacc.yield %l, %b : tensor<f32>, tensor<4xf32>
}
// CHECK: #gacc.precision<bf16>
func.func private @bf16_attr() attributes {p = #gacc.precision<bf16>}

// The vision layer ops, with and without their optional parts.
// CHECK-LABEL: func.func @vision
// CHECK: gacc.conv2d %{{.*}}, %{{.*}} bias %{{.*}} {dilation = array<i64: 1, 2>, groups = 2 : i64, padding = array<i64: 1, 0>, stride = array<i64: 2, 1>} : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x5x4xf32>
// CHECK: gacc.conv2d %{{.*}}, %{{.*}} : tensor<2x4x9x8xf32>, tensor<3x4x1x1xf32> -> tensor<2x3x9x8xf32>
// CHECK: gacc.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>} : tensor<2x4x9x8xf32> -> tensor<2x4x4x4xf32>
// CHECK: gacc.avg_pool2d %{{.*}} {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 2>} : tensor<2x4x9x8xf32> -> tensor<2x4x9x4xf32>
// CHECK: gacc.global_avg_pool2d %{{.*}} : tensor<2x4x9x8xf32> -> tensor<2x4xf32>
// CHECK: gacc.group_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64, num_groups = 2 : i64} : tensor<2x4x9x8xf32>, tensor<4xf32>, tensor<4xf32>
func.func @vision(%x: tensor<2x4x9x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>,
                  %w1: tensor<3x4x1x1xf32>, %g: tensor<4xf32>) {
  %c = gacc.conv2d %x, %w bias %b {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2 : i64} : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x6x5x4xf32>
  %c1 = gacc.conv2d %x, %w1 : tensor<2x4x9x8xf32>, tensor<3x4x1x1xf32> -> tensor<2x3x9x8xf32>
  %m = gacc.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<2x4x9x8xf32> -> tensor<2x4x4x4xf32>
  %a = gacc.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 2>, padding = array<i64: 1, 1>} : tensor<2x4x9x8xf32> -> tensor<2x4x9x4xf32>
  %p = gacc.global_avg_pool2d %x : tensor<2x4x9x8xf32> -> tensor<2x4xf32>
  %n = gacc.group_norm %x, %g, %g {num_groups = 2 : i64, eps = 1.0e-3} : tensor<2x4x9x8xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// A classifier head fused into its cross-entropy.
// CHECK-LABEL: func.func @linear_cross_entropy
// CHECK: gacc.linear_cross_entropy %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x5x4xf32>, tensor<7x4xf32>, tensor<2x5xi32> -> tensor<f32>
// CHECK: gacc.linear_cross_entropy %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64, row_block = 3 : i64} : tensor<2x4xf32>, tensor<7x4xf32>, tensor<2xi64>, tensor<7xf32> -> tensor<f32>
func.func @linear_cross_entropy(%h: tensor<2x5x4xf32>, %w: tensor<7x4xf32>,
                                %y: tensor<2x5xi32>, %x: tensor<2x4xf32>,
                                %b: tensor<7xf32>, %t: tensor<2xi64>) {
  %l = gacc.linear_cross_entropy %h, %w, %y : tensor<2x5x4xf32>, tensor<7x4xf32>, tensor<2x5xi32> -> tensor<f32>
  %s = gacc.linear_cross_entropy %x, %w, %t bias %b {row_block = 3 : i64, ignore_index = 0 : i64, label_smoothing = 0.1 : f64} : tensor<2x4xf32>, tensor<7x4xf32>, tensor<2xi64>, tensor<7xf32> -> tensor<f32>
  return
}

// softmax and attention.
// CHECK-LABEL: func.func @softmax_attention
// CHECK: gacc.softmax %{{.*}} : tensor<2x3x5xf32>
// CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
// CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64} : tensor<2x2x5x4xf32>
// CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, query_block = 2 : i64} : tensor<2x2x5x4xf32>
func.func @softmax_attention(%s: tensor<2x3x5xf32>, %q: tensor<2x2x5x4xf32>) {
  %p = gacc.softmax %s : tensor<2x3x5xf32>
  %o = gacc.attention %q, %q, %q {causal} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  %o2 = gacc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  %o3 = gacc.attention %q, %q, %q {causal, query_block = 2 : i64} : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
  return
}

// attention's adjoint, and the fused kernels on tensors and memrefs.
// CHECK-LABEL: func.func @attention_kernels
// CHECK: gacc.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, query_block = 2 : i64} : tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>
// CHECK: %[[F:.+]]:2 = gacc.fused_attention %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64} : tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16> into tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32> -> tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32>
// CHECK: gacc.fused_attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %[[F]]#0, %{{.*}}, %[[F]]#1 into %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64} : {{.*}}, tensor<2x2x5x1xf32> into {{.*}} -> tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>
// CHECK: gacc.fused_attention %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64} : memref<2x2x5x16xf16, strided<[160, 16, 32, 1]>>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16> into memref<2x2x5x16xf16>, memref<2x2x5x1xf32>
// CHECK-NOT: ->
// CHECK: gacc.fused_attention_backward %{{.*}} into %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64} : {{.*}}, memref<2x2x5x1xf32> into memref<2x2x5x16xf16>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16>{{$}}
func.func @attention_kernels(%q: tensor<2x2x5x16xf32>, %q16: tensor<2x2x5x16xbf16>, %l: tensor<2x2x5x1xf32>, %m: memref<2x2x5x16xf16>, %ml: memref<2x2x5x1xf32>, %s: memref<2x2x5x16xf16, strided<[160, 16, 32, 1]>>) {
  %g:3 = gacc.attention_backward %q, %q, %q, %q, %q {causal, query_block = 2 : i64} : tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32>
  %f:2 = gacc.fused_attention %q16, %q16, %q16 into %q16, %l {causal, scale = 0.25 : f64} : tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16> into tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32> -> tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32>
  %b:3 = gacc.fused_attention_backward %q16, %q16, %q16, %f#0, %q16, %f#1 into %q16, %q16, %q16 {causal, scale = 0.25 : f64} : tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x1xf32> into tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16> -> tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>, tensor<2x2x5x16xbf16>
  gacc.fused_attention %s, %m, %m into %m, %ml {scale = 0.125 : f64} : memref<2x2x5x16xf16, strided<[160, 16, 32, 1]>>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16> into memref<2x2x5x16xf16>, memref<2x2x5x1xf32>
  gacc.fused_attention_backward %s, %m, %m, %m, %m, %ml into %m, %m, %m {scale = 0.125 : f64} : memref<2x2x5x16xf16, strided<[160, 16, 32, 1]>>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16>, memref<2x2x5x1xf32> into memref<2x2x5x16xf16>, memref<2x2x5x16xf16>, memref<2x2x5x16xf16>
  return
}
