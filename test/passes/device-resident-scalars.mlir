// RUN: gacc-opt %s -gacc-device-resident-scalars | FileCheck %s
// RUN: gacc-opt %s -gacc-device-resident-scalars="functions=other" | FileCheck %s --check-prefix=NAMED

// A step's scalar flow moved to the device: the scalar arguments become
// rank-0 buffers in place and the results a trailing memref<2xf32>; the
// host's read of the accumulated value and the arithmetic on it run in one
// device thread (a one-iteration scf.parallel) each; the loop's carried
// values (which it swaps) live in buffers, updated by one thread that
// loads both before storing either; a kernel reading %lr loads it from its
// buffer; the GEMM's beta, which depends on the loop index only, stays a
// host value.

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:.*]]: memref<4xf32>, %[[LR:.*]]: memref<f32>, %[[N:.*]]: memref<i64>, %[[OUT:.*]]: memref<2xf32>) {
// CHECK-DAG: %[[Q:.*]] = memref.alloc() : memref<f32>
// CHECK-DAG: %[[SUM:.*]] = memref.alloc() : memref<f32>
// CHECK-DAG: %[[T:.*]] = memref.alloc() : memref<f32>
// CHECK-DAG: %[[S:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%[[C0:.*]]) to (%[[C1:.*]]) step (%[[C1]]) {
// CHECK-NEXT: memref.store %{{.*}}, %[[S]][]
// CHECK-NEXT: memref.store %{{.*}}, %[[T]][]
// CHECK: scf.for %[[I:.*]] = {{.*}} {
// CHECK: scf.parallel
// CHECK-NEXT: %[[LRV:.*]] = memref.load %[[LR]][] : memref<f32>
// CHECK-NEXT: memref.load %[[X]]
// CHECK-NEXT: arith.mulf %{{.*}}, %[[LRV]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[I]]
// CHECK-NEXT: %[[BETA:.*]] = arith.select %[[FIRST]]
// CHECK-NEXT: call @gemm(%[[X]], %[[BETA]])
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT: %[[A:.*]] = memref.load %[[X]][
// CHECK-NEXT: %[[SV:.*]] = memref.load %[[S]][]
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[SV]], %[[A]]
// CHECK-NEXT: memref.store %[[ADD]], %[[SUM]][]
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT: %[[TV:.*]] = memref.load %[[T]][]
// CHECK-NEXT: %[[SUMV:.*]] = memref.load %[[SUM]][]
// CHECK-NEXT: memref.store %[[TV]], %[[S]][]
// CHECK-NEXT: memref.store %[[SUMV]], %[[T]][]
// CHECK: }
// CHECK-NOT: scf.yield
// CHECK: scf.parallel
// CHECK-NEXT: %[[NV:.*]] = memref.load %[[N]][] : memref<i64>
// CHECK-NEXT: %[[NF:.*]] = arith.sitofp %[[NV]]
// CHECK-NEXT: %[[R0:.*]] = memref.load %[[S]][]
// CHECK-NEXT: %[[DIV:.*]] = arith.divf %[[R0]], %[[NF]]
// CHECK-NEXT: memref.store %[[DIV]], %[[Q]][]
// The results, stored into the trailing buffer; the buffers freed.
// CHECK: scf.parallel
// CHECK-NEXT: %[[QV:.*]] = memref.load %[[Q]][]
// CHECK-NEXT: %[[R1:.*]] = memref.load %[[T]][]
// CHECK-NEXT: memref.store %[[QV]], %[[OUT]][%{{.*}}]
// CHECK-NEXT: memref.store %[[R1]], %[[OUT]][%{{.*}}]
// CHECK: memref.dealloc %[[S]]
// CHECK: return{{$}}

// Only the named functions change.
// NAMED-LABEL: func.func @step(%arg0: memref<4xf32>, %arg1: f32, %arg2: i64) -> (f32, f32)
// NAMED-NOT: memref<2xf32>
func.func private @gemm(memref<4xf32>, f32)

func.func @step(%x: memref<4xf32>, %lr: f32, %n: i64) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %l = memref.alloc() : memref<f32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero, %t = %one) -> (f32, f32) {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %v = memref.load %x[%j] : memref<4xf32>
      %w = arith.mulf %v, %lr : f32
      memref.store %w, %x[%j] : memref<4xf32>
      scf.reduce
    }
    %first = arith.cmpi eq, %i, %c0 : index
    %beta = arith.select %first, %zero, %one : f32
    func.call @gemm(%x, %beta) : (memref<4xf32>, f32) -> ()
    %a = memref.load %x[%c0] : memref<4xf32>
    %sum = arith.addf %s, %a : f32
    scf.yield %t, %sum : f32, f32
  }
  %nf = arith.sitofp %n : i64 to f32
  %q = arith.divf %r#0, %nf : f32
  memref.dealloc %l : memref<f32>
  return %q, %r#1 : f32, f32
}

// An untainted branch whose result is tainted: each branch stores it into
// one buffer; the host code keeps the branch on its own condition.
// CHECK-LABEL: func.func @branch(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %[[L:.*]]: memref<f32>, %[[O:.*]]: memref<1xf32>)
// CHECK: %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[C:.*]] = arith.cmpi eq
// CHECK-NEXT: scf.if %[[C]] {
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: %[[LV:.*]] = memref.load %[[L]][]
// CHECK-NEXT: memref.store %[[LV]], %[[B]][]
// CHECK: } else {
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store %{{.*}}, %[[B]][]
// CHECK: scf.parallel
// CHECK-NEXT: %[[BV:.*]] = memref.load %[[B]][]
// CHECK-NEXT: memref.store %[[BV]], %[[O]]
func.func @branch(%m: memref<?xf32>, %lr: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %d = memref.dim %m, %c0 : memref<?xf32>
  %c = arith.cmpi eq, %d, %c4 : index
  %r = scf.if %c -> f32 {
    scf.yield %lr : f32
  } else {
    scf.yield %zero : f32
  }
  return %r : f32
}

// A branch on a device value: both sides' kernels run, each guarded in its
// body by the condition (loaded from its buffer) or its negation; the
// result goes through a buffer both sides store into under their guard.
// CHECK-LABEL: func.func @predicated(
// CHECK-SAME: %[[F:.*]]: memref<i1>, %[[Y:.*]]: memref<4xf32>, %[[PO:.*]]: memref<1xf32>)
// CHECK-DAG: %[[R:.*]] = memref.alloc() : memref<f32>
// CHECK-DAG: %[[CB:.*]] = memref.alloc() : memref<i1>
// CHECK: scf.parallel
// CHECK-NEXT: %[[CV:.*]] = memref.load %[[F]][]
// CHECK-NEXT: memref.store %[[CV]], %[[CB]][]
// CHECK-NOT: scf.if
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NEXT: %[[G1:.*]] = memref.load %[[CB]][]
// CHECK-NEXT: scf.if %[[G1]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[Y]]
// CHECK: scf.parallel
// CHECK-NEXT: %[[G2:.*]] = memref.load %[[CB]][]
// CHECK-NEXT: scf.if %[[G2]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[R]][]
// CHECK: scf.parallel
// CHECK-NEXT: %[[G3:.*]] = memref.load %[[CB]][]
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[NOT:.*]] = arith.xori %[[G3]], %[[TRUE]]
// CHECK-NEXT: scf.if %[[NOT]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[R]][]
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %[[R]][]
// CHECK-NEXT: memref.store %{{.*}}, %[[PO]]
func.func @predicated(%flag: memref<i1>, %y: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c = memref.load %flag[] : memref<i1>
  %r = scf.if %c -> f32 {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      memref.store %zero, %y[%j] : memref<4xf32>
      scf.reduce
    }
    scf.yield %one : f32
  } else {
    scf.yield %zero : f32
  }
  return %r : f32
}

func.func @other() {
  return
}
