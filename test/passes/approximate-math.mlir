// RUN: gacc-opt %s -gacc-approximate-math | FileCheck %s
// RUN: gacc-opt %s -gacc-approximate-math=ops=exp | FileCheck %s --check-prefix=ONLY-EXP

// The f32 transcendental ops of the CPU's loops become straight-line
// arithmetic (upstream MLIR's polynomial approximations); f64 ops, the
// schedules' cos and pow, and ops not named in `ops` stay library calls.
// The accuracy is tested by execution in test/unit/ApproximateMathTest.cpp.

// CHECK-LABEL: func.func @per_element(
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: math.cos %{{.*}} : f32
// CHECK: math.powf %{{.*}} : f32
// CHECK: math.tanh %{{.*}} : f64
// CHECK: return
// ONLY-EXP-LABEL: func.func @per_element(
// ONLY-EXP: math.tanh %{{.*}} : f32
// ONLY-EXP-NOT: math.exp %
// ONLY-EXP: math.log %{{.*}} : f32
func.func @per_element(%x: f32, %d: f64) -> (f32, f32, f32, f32, f32, f32, f32, f32, f64) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %r = math.erf %x : f32
  %m = math.expm1 %x : f32
  %p = math.log1p %x : f32
  %c = math.cos %x : f32
  %w = math.powf %x, %x : f32
  %dt = math.tanh %d : f64
  return %t, %e, %l, %r, %m, %p, %c, %w, %dt : f32, f32, f32, f32, f32, f32, f32, f32, f64
}

// An `ops` entry upstream does not approximate is an error, not ignored.
// RUN: not gacc-opt %s -gacc-approximate-math=ops=sqrt 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: gacc-approximate-math: option ops: 'sqrt' is not a math op upstream's polynomial approximations cover (acos, asin, atan, atan2, cbrt, cos, erf, erfc, exp, expm1, log, log1p, log2, sin, tanh)

// Vector operands are approximated too (the patterns build vector ops: the
// vector dialect is loaded by the pass, which crashed without it); ops on
// tensors stay (the patterns would compare a tensor with a scalar).
// RUN: echo 'func.func @v(%%a: vector<4xf32>, %%t: tensor<4xf32>) -> (vector<4xf32>, tensor<4xf32>) { %%0 = math.tanh %%a : vector<4xf32>  %%1 = math.exp %%t : tensor<4xf32>  return %%0, %%1 : vector<4xf32>, tensor<4xf32> }' | gacc-opt -gacc-approximate-math | FileCheck %s --check-prefix=SHAPED
// SHAPED-LABEL: func.func @v(
// SHAPED-NOT: math.tanh
// SHAPED: arith.cmpf ult, %{{.+}} : vector<4xf32>
// SHAPED: math.exp %{{.+}} : tensor<4xf32>

// An unregistered op (no dialect) is passed over, not a crash.
// RUN: echo 'func.func @u(%%a: f32) -> f32 { %%0 = "foo.bar"(%%a) : (f32) -> f32  %%1 = math.tanh %%0 : f32  return %%1 : f32 }' | gacc-opt --allow-unregistered-dialect -gacc-approximate-math | FileCheck %s --check-prefix=UNREGISTERED
// UNREGISTERED-LABEL: func.func @u(
// UNREGISTERED: "foo.bar"
// UNREGISTERED-NOT: math.tanh
