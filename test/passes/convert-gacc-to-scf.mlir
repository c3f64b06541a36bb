// RUN: gacc-opt %s -convert-gacc-to-scf | FileCheck %s

// The fused GEMM as loops: a parallel loop over C, the initial value 0 on
// the first micro-batch (C is not read) or C[i, j] otherwise, and an FMA
// reduction over K reading A transposed.

// CHECK-LABEL: func.func @fused(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x3xf32>, %[[B:[^:]+]]: memref<4x2xf32>, %[[C:[^:]+]]: memref<3x2xf32>, %[[FIRST:[^:]+]]: i1)
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) =
// CHECK: %[[INIT:.+]] = scf.if %[[FIRST]] -> (f32) {
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[Z]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[OLD:.+]] = memref.load %[[C]][%[[I]], %[[J]]]
// CHECK-NEXT: scf.yield %[[OLD]]
// CHECK: %[[SUM:.+]] = scf.for %[[K:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[AV:.+]] = memref.load %[[A]][%[[K]], %[[I]]]
// CHECK-NEXT: %[[BV:.+]] = memref.load %[[B]][%[[K]], %[[J]]]
// CHECK-NEXT: %[[F:.+]] = math.fma %[[AV]], %[[BV]], %[[ACC]] : f32
// CHECK-NEXT: scf.yield %[[F]]
// CHECK: memref.store %[[SUM]], %[[C]][%[[I]], %[[J]]]
func.func @fused(%a: memref<4x3xf32>, %b: memref<4x2xf32>, %c: memref<3x2xf32>, %first: i1) {
  gacc.matmul_accumulate %a, %b into %c first %first {transpose_a} : memref<4x3xf32>, memref<4x2xf32> into memref<3x2xf32>
  return
}

// The phase markers have served the memory plan: erased.
// CHECK-LABEL: func.func @markers(
// CHECK-NOT: gacc.phase_begin
// CHECK: return
func.func @markers() {
  gacc.phase_begin forward
  gacc.phase_begin backward
  gacc.phase_begin update
  return
}
