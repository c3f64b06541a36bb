// RUN: gacc-opt %s -split-input-file -gacc-defer-weight-gradients | FileCheck %s --check-prefix=CPU
// RUN: gacc-opt %s -split-input-file -gacc-defer-weight-gradients=launch-elements=2097152 | FileCheck %s --check-prefix=GPU
// RUN: gacc-opt %s -split-input-file -gacc-defer-weight-gradients="narrow-storage=false" | FileCheck %s --check-prefix=FP32

// A 256 -> 10 classifier head at m = 32, N = 8 (fashion_mlp's second
// layer). Counting bytes only (launch-elements 0, the CPU), accumulating
// moves 15 · 10 · 256 = 38400 elements, deferring 2 · 8 · 32 · 266 +
// 2560 = 138752: the product stays in the loop. Counting a launch as
// 2^21 elements (the GPU), accumulating costs 8 GEMM launches, deferring
// one: both operands are computed in the loop by ops that write fresh
// tensors, so they are built in their window rows with no copy launch.
//
// The bias gradient, the column sums of the same output gradient (in f64,
// truncated, accumulated with `first ? g : acc + g`), is then computed
// once after the loop from the output gradient's window: the accumulator
// passes through the loop untouched, and the window's sums over its 256
// rows, truncated to f32, are its value.
// CPU-LABEL: func.func @head(
// CPU: scf.for
// CPU: gacc.matmul_accumulate
// CPU: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CPU: scf.yield
// CPU-NOT: gacc.matmul_accumulate
// CPU: return

// GPU-LABEL: func.func @head(
// GPU: %[[LOOP:.*]]:4 = scf.for %{{.*}} iter_args(%[[ACC:[^ ]*]] = %{{[^,]*}}, %[[BACC:[^ ]*]] = %{{[^,]*}}, %[[W0:[^ ]*]] = %{{[^,]*}}, %[[W1:[^ ]*]] = %{{[^)]*}})
// GPU-NOT: gacc.matmul_accumulate
// GPU-NOT: iterator_types = ["reduction", "parallel"]
// GPU: %[[X:.*]] = linalg.generic
// GPU: %[[DY:.*]] = linalg.matmul
// GPU: %[[S0:.*]] = tensor.insert_slice %[[DY]] into %[[W0]]{{.*}} : tensor<32x10xf32> into tensor<256x10xf32>
// GPU: %[[S1:.*]] = tensor.insert_slice %[[X]] into %[[W1]]{{.*}} : tensor<32x256xf32> into tensor<256x256xf32>
// GPU: scf.yield %[[ACC]], %[[BACC]], %[[S0]], %[[S1]]
// GPU: %[[DW:.*]] = gacc.matmul_accumulate %[[LOOP]]#2, %[[LOOP]]#3 into %[[LOOP]]#0 first %{{.*}} {transpose_a} : tensor<256x10xf32>, tensor<256x256xf32> into tensor<10x256xf32>
// GPU: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// GPU: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<10xf64>)
// GPU: %[[SUMS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[LOOP]]#2 : tensor<256x10xf32>) outs(%[[FILL]] : tensor<10xf64>)
// GPU: %[[DB:.*]] = linalg.generic {{.*}} ins(%[[SUMS]] : tensor<10xf64>)
// GPU: arith.truncf
// GPU: return %[[DW]], %[[DB]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @head(%h: tensor<8x32x256xf32>, %w: tensor<10x256xf32>, %acc0: tensor<10x256xf32>, %bacc0: tensor<10xf32>) -> (tensor<10x256xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %zero64 = arith.constant 0.0 : f64
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0, %bacc = %bacc0) -> (tensor<10x256xf32>, tensor<10xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %hs = tensor.extract_slice %h[%i, 0, 0] [1, 32, 256] [1, 1, 1] : tensor<8x32x256xf32> to tensor<32x256xf32>
    // The layer's input: computed in the loop (a ReLU).
    %xe = tensor.empty() : tensor<32x256xf32>
    %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%hs : tensor<32x256xf32>) outs(%xe : tensor<32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %zero : f32
      linalg.yield %m : f32
    } -> tensor<32x256xf32>
    // The output gradient (here x · wᵀ stands for it).
    %ze = tensor.empty() : tensor<32x10xf32>
    %zf = linalg.fill ins(%zero : f32) outs(%ze : tensor<32x10xf32>) -> tensor<32x10xf32>
    %dy = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%x, %w : tensor<32x256xf32>, tensor<10x256xf32>) outs(%zf : tensor<32x10xf32>) -> tensor<32x10xf32>
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<32x10xf32>, tensor<32x256xf32> into tensor<10x256xf32> -> tensor<10x256xf32>
    // The bias gradient: Σ_rows dy in f64, truncated, accumulated.
    %se = tensor.empty() : tensor<10xf64>
    %sf = linalg.fill ins(%zero64 : f64) outs(%se : tensor<10xf64>) -> tensor<10xf64>
    %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%dy : tensor<32x10xf32>) outs(%sf : tensor<10xf64>) {
    ^bb0(%in: f32, %out: f64):
      %e = arith.extf %in : f32 to f64
      %sum = arith.addf %out, %e : f64
      linalg.yield %sum : f64
    } -> tensor<10xf64>
    %te = tensor.empty() : tensor<10xf32>
    %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%s : tensor<10xf64>) outs(%te : tensor<10xf32>) {
    ^bb0(%in: f64, %out: f32):
      %tr = arith.truncf %in : f64 to f32
      linalg.yield %tr : f32
    } -> tensor<10xf32>
    %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%t : tensor<10xf32>) outs(%bacc : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      %sel = arith.select %first, %in, %sum : f32
      linalg.yield %sel : f32
    } -> tensor<10xf32>
    scf.yield %a, %b : tensor<10x256xf32>, tensor<10xf32>
  }
  return %r#0, %r#1 : tensor<10x256xf32>, tensor<10xf32>
}

// -----

// The same head where the layer's input is a slice of a function argument
// that is not a window input (32 of its 64 rows) and the output gradient
// comes from outside the loop:
// deferring would copy both into their windows per micro-batch, 16 copy
// launches against 7 GEMM launches saved, so even the GPU's model keeps
// the product in the loop. A bias gradient whose rows have no window
// stays in the loop too.
// GPU-LABEL: func.func @copied_operand(
// GPU: scf.for
// GPU: gacc.matmul_accumulate
// GPU: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// GPU: scf.yield
// GPU-NOT: gacc.matmul_accumulate
// GPU: return
func.func @copied_operand(%h: tensor<8x64x256xf32>, %dy: tensor<32x10xf32>, %acc0: tensor<10x256xf32>, %bacc0: tensor<10xf32>) -> (tensor<10x256xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero64 = arith.constant 0.0 : f64
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0, %bacc = %bacc0) -> (tensor<10x256xf32>, tensor<10xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %x = tensor.extract_slice %h[%i, 0, 0] [1, 32, 256] [1, 1, 1] : tensor<8x64x256xf32> to tensor<32x256xf32>
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : tensor<32x10xf32>, tensor<32x256xf32> into tensor<10x256xf32> -> tensor<10x256xf32>
    %se = tensor.empty() : tensor<10xf64>
    %sf = linalg.fill ins(%zero64 : f64) outs(%se : tensor<10xf64>) -> tensor<10xf64>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%dy : tensor<32x10xf32>) outs(%sf : tensor<10xf64>) {
    ^bb0(%in: f32, %out: f64):
      %e = arith.extf %in : f32 to f64
      %sum = arith.addf %out, %e : f64
      linalg.yield %sum : f64
    } -> tensor<10xf64>
    %te = tensor.empty() : tensor<10xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<10xf64>) outs(%te : tensor<10xf32>) {
    ^bb0(%in: f64, %out: f32):
      %tr = arith.truncf %in : f64 to f32
      linalg.yield %tr : f32
    } -> tensor<10xf32>
    %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<10xf32>) outs(%bacc : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      %sel = arith.select %first, %in, %sum : f32
      linalg.yield %sel : f32
    } -> tensor<10xf32>
    scf.yield %a, %b : tensor<10x256xf32>, tensor<10xf32>
  }
  return %r#0, %r#1 : tensor<10x256xf32>, tensor<10xf32>
}

// -----

// A bf16 step's product of rounded values (extf(truncf x) through bf16):
// gacc-narrow-stored-values stores them as bf16 for a tensor-core GEMM, so
// the product keeps accumulating, on either model, however wide the layer.
// CPU-LABEL: func.func @rounded(
// CPU: scf.for
// CPU: gacc.matmul_accumulate
// CPU-NEXT: scf.yield
// With narrow-storage=false (fp32-storage: the rounded values stay fp32
// tensors, the GEMMs fp32) the product is deferred as any other.
// FP32-LABEL: func.func @rounded(
// FP32: scf.for
// FP32-NOT: gacc.matmul_accumulate
// FP32: scf.yield
// FP32: gacc.matmul_accumulate
// GPU-LABEL: func.func @rounded(
// GPU: scf.for
// GPU: gacc.matmul_accumulate
// GPU-NEXT: scf.yield
func.func @rounded(%in: tensor<32x8x784xf32>, %dy: tensor<8x256xf32>, %acc0: tensor<256x784xf32>) -> tensor<256x784xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %r = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %acc0) -> (tensor<256x784xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %x = tensor.extract_slice %in[%i, 0, 0] [1, 8, 784] [1, 1, 1] : tensor<32x8x784xf32> to tensor<8x784xf32>
    %e = tensor.empty() : tensor<8x784xf32>
    %xr = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x784xf32>) outs(%e : tensor<8x784xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.truncf %a : f32 to bf16
      %u = arith.extf %t : bf16 to f32
      linalg.yield %u : f32
    } -> tensor<8x784xf32>
    %a = gacc.matmul_accumulate %dy, %xr into %acc first %first {transpose_a} : tensor<8x256xf32>, tensor<8x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    scf.yield %a : tensor<256x784xf32>
  }
  return %r : tensor<256x784xf32>
}

// -----

// One output gradient feeding two deferred products (y = x1·W1ᵀ + x2·W2ᵀ + b,
// both inputs computed in the loop) and one bias gradient of it: the
// column sums read the output gradient's window (the A operand of the
// first product's deferral), and a column sum of rows that no deferred
// product keeps (%other) stays in the loop.
// GPU-LABEL: func.func @shared_output_gradient(
// GPU: %[[LOOP:.*]]:7 = scf.for
// GPU: iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<32x10xf32>)
// GPU: scf.yield
// GPU-DAG: gacc.matmul_accumulate %[[LOOP]]#4, %[[LOOP]]#5 into %[[LOOP]]#0
// GPU-DAG: gacc.matmul_accumulate %[[LOOP]]#4, %[[LOOP]]#6 into %[[LOOP]]#1
// GPU: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[LOOP]]#4 : tensor<256x10xf32>)
// GPU-NOT: iterator_types = ["reduction", "parallel"]
// GPU: return
#sid = affine_map<(d0, d1) -> (d0, d1)>
#scol = affine_map<(d0, d1) -> (d1)>
#s1 = affine_map<(d0) -> (d0)>
func.func @shared_output_gradient(%h: tensor<8x32x256xf32>, %dyin: tensor<8x32x10xf32>, %other: tensor<32x10xf32>, %a0: tensor<10x256xf32>, %b0: tensor<10x256xf32>, %c0acc: tensor<10xf32>, %d0acc: tensor<10xf32>) -> (tensor<10x256xf32>, tensor<10x256xf32>, tensor<10xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %r:4 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc1 = %a0, %acc2 = %b0, %bacc = %c0acc, %oacc = %d0acc) -> (tensor<10x256xf32>, tensor<10x256xf32>, tensor<10xf32>, tensor<10xf32>) {
    %first = arith.cmpi eq, %i, %c0 : index
    %hs = tensor.extract_slice %h[%i, 0, 0] [1, 32, 256] [1, 1, 1] : tensor<8x32x256xf32> to tensor<32x256xf32>
    %e1 = tensor.empty() : tensor<32x256xf32>
    %x1 = linalg.generic {indexing_maps = [#sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%hs : tensor<32x256xf32>) outs(%e1 : tensor<32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %zero : f32
      linalg.yield %m : f32
    } -> tensor<32x256xf32>
    %e2 = tensor.empty() : tensor<32x256xf32>
    %x2 = linalg.generic {indexing_maps = [#sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%hs : tensor<32x256xf32>) outs(%e2 : tensor<32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.minimumf %in, %zero : f32
      linalg.yield %m : f32
    } -> tensor<32x256xf32>
    %ds = tensor.extract_slice %dyin[%i, 0, 0] [1, 32, 10] [1, 1, 1] : tensor<8x32x10xf32> to tensor<32x10xf32>
    %e3 = tensor.empty() : tensor<32x10xf32>
    %dy = linalg.generic {indexing_maps = [#sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%ds : tensor<32x10xf32>) outs(%e3 : tensor<32x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<32x10xf32>
    %a = gacc.matmul_accumulate %dy, %x1 into %acc1 first %first {transpose_a} : tensor<32x10xf32>, tensor<32x256xf32> into tensor<10x256xf32> -> tensor<10x256xf32>
    %b = gacc.matmul_accumulate %dy, %x2 into %acc2 first %first {transpose_a} : tensor<32x10xf32>, tensor<32x256xf32> into tensor<10x256xf32> -> tensor<10x256xf32>
    %se = tensor.empty() : tensor<10xf32>
    %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<10xf32>) -> tensor<10xf32>
    %s = linalg.generic {indexing_maps = [#sid, #scol], iterator_types = ["reduction", "parallel"]} ins(%dy : tensor<32x10xf32>) outs(%sf : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      linalg.yield %sum : f32
    } -> tensor<10xf32>
    %c = linalg.generic {indexing_maps = [#s1, #s1], iterator_types = ["parallel"]} ins(%s : tensor<10xf32>) outs(%bacc : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      %sel = arith.select %first, %in, %sum : f32
      linalg.yield %sel : f32
    } -> tensor<10xf32>
    %oe = tensor.empty() : tensor<10xf32>
    %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<10xf32>) -> tensor<10xf32>
    %os = linalg.generic {indexing_maps = [#sid, #scol], iterator_types = ["reduction", "parallel"]} ins(%other : tensor<32x10xf32>) outs(%of : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      linalg.yield %sum : f32
    } -> tensor<10xf32>
    %d = linalg.generic {indexing_maps = [#s1, #s1], iterator_types = ["parallel"]} ins(%os : tensor<10xf32>) outs(%oacc : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sum = arith.addf %out, %in : f32
      %sel = arith.select %first, %in, %sum : f32
      linalg.yield %sel : f32
    } -> tensor<10xf32>
    scf.yield %a, %b, %c, %d : tensor<10x256xf32>, tensor<10x256xf32>, tensor<10xf32>, tensor<10xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<10x256xf32>, tensor<10x256xf32>, tensor<10xf32>, tensor<10xf32>
}
