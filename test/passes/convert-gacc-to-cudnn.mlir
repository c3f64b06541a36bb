// RUN: gacc-opt %s -split-input-file -convert-gacc-to-cudnn | FileCheck %s
// RUN: gacc-opt %s -split-input-file -convert-gacc-to-cudnn -convert-func-to-llvm -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// The memref forms become calls of the runtime's cuDNN attention, one
// declaration per entry point: every operand cast to a rank-4 memref of
// dynamic sizes and strides (a strided view of a fused projection passes
// its strides), then the scale (f32) and the causal flag (i32).
// CHECK-DAG: func.func private @gacc_cudnn_attention_forward_bf16(memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, f32, i32)
// CHECK-DAG: func.func private @gacc_cudnn_attention_backward_bf16(
// CHECK-LABEL: func.func @kernels(
// CHECK-SAME: %[[QKV:[^:]+]]: memref<2x8x3x2x16xbf16>, %[[V:[^:]+]]: memref<2x2x8x16xbf16>, %[[O:[^:]+]]: memref<2x2x8x16xbf16>, %[[L:[^:]+]]: memref<2x2x8x1xf32>, %[[DO:[^:]+]]: memref<2x2x8x16xbf16>, %[[DQ:[^:]+]]: memref<2x2x8x16xbf16>, %[[DK:[^:]+]]: memref<2x2x8x16xbf16>, %[[DV:[^:]+]]: memref<2x2x8x16xbf16>
// CHECK: %[[QS:.+]] = memref.subview %[[QKV]][0, 0, 0, 0, 0]
// CHECK: %[[Q:.+]] = memref.transpose %[[QS]]
// CHECK: %[[KS:.+]] = memref.subview %[[QKV]][0, 0, 1, 0, 0]
// CHECK: %[[K:.+]] = memref.transpose %[[KS]]
// CHECK: %[[QC:.+]] = memref.cast %[[Q]] : memref<2x2x8x16xbf16, strided<[768, 16, 96, 1]>> to memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>
// CHECK: %[[KC:.+]] = memref.cast %[[K]] : memref<2x2x8x16xbf16, strided<[768, 16, 96, 1], offset: 32>> to
// CHECK: %[[VC:.+]] = memref.cast %[[V]] :
// CHECK: %[[OC:.+]] = memref.cast %[[O]] :
// CHECK: %[[LC:.+]] = memref.cast %[[L]] : memref<2x2x8x1xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK: %[[S:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[C:.+]] = arith.constant 1 : i32
// CHECK: call @gacc_cudnn_attention_forward_bf16(%[[QC]], %[[KC]], %[[VC]], %[[OC]], %[[LC]], %[[S]], %[[C]])
// CHECK: %[[BQ:.+]] = memref.cast %[[Q]]
// CHECK: %[[BK:.+]] = memref.cast %[[K]]
// CHECK: %[[BV:.+]] = memref.cast %[[V]]
// CHECK: %[[BO:.+]] = memref.cast %[[O]]
// CHECK: %[[BDO:.+]] = memref.cast %[[DO]]
// CHECK: %[[BL:.+]] = memref.cast %[[L]]
// CHECK: %[[BDQ:.+]] = memref.cast %[[DQ]]
// CHECK: %[[BDK:.+]] = memref.cast %[[DK]]
// CHECK: %[[BDV:.+]] = memref.cast %[[DV]]
// CHECK: call @gacc_cudnn_attention_backward_bf16(%[[BQ]], %[[BK]], %[[BV]], %[[BO]], %[[BDO]], %[[BL]], %[[BDQ]], %[[BDK]], %[[BDV]], %{{.+}}, %{{.+}})
// CHECK-NOT: gacc.fused_attention
// Each memref becomes its descriptor's 11 values: 5 × 11 + 2 arguments.
// LLVM-LABEL: llvm.func @kernels(
// LLVM: llvm.call @gacc_cudnn_attention_forward_bf16({{([^,]+, ){56}[^,]+}}) : (
// LLVM: llvm.call @gacc_cudnn_attention_backward_bf16({{([^,]+, ){100}[^,]+}}) : (
#kv = strided<[768, 16, 96, 1], offset: 32>
func.func @kernels(%qkv: memref<2x8x3x2x16xbf16>, %v: memref<2x2x8x16xbf16>, %o: memref<2x2x8x16xbf16>, %l: memref<2x2x8x1xf32>, %do: memref<2x2x8x16xbf16>, %dq: memref<2x2x8x16xbf16>, %dk: memref<2x2x8x16xbf16>, %dv: memref<2x2x8x16xbf16>) {
  %qs = memref.subview %qkv[0, 0, 0, 0, 0] [2, 8, 1, 2, 16] [1, 1, 1, 1, 1] : memref<2x8x3x2x16xbf16> to memref<2x8x2x16xbf16, strided<[768, 96, 16, 1]>>
  %q = memref.transpose %qs (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x8x2x16xbf16, strided<[768, 96, 16, 1]>> to memref<2x2x8x16xbf16, strided<[768, 16, 96, 1]>>
  %ks = memref.subview %qkv[0, 0, 1, 0, 0] [2, 8, 1, 2, 16] [1, 1, 1, 1, 1] : memref<2x8x3x2x16xbf16> to memref<2x8x2x16xbf16, strided<[768, 96, 16, 1], offset: 32>>
  %k = memref.transpose %ks (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x8x2x16xbf16, strided<[768, 96, 16, 1], offset: 32>> to memref<2x2x8x16xbf16, #kv>
  gacc.fused_attention %q, %k, %v into %o, %l {causal, scale = 0.25 : f64} : memref<2x2x8x16xbf16, strided<[768, 16, 96, 1]>>, memref<2x2x8x16xbf16, #kv>, memref<2x2x8x16xbf16> into memref<2x2x8x16xbf16>, memref<2x2x8x1xf32>
  gacc.fused_attention_backward %q, %k, %v, %o, %do, %l into %dq, %dk, %dv {causal, scale = 0.25 : f64} : memref<2x2x8x16xbf16, strided<[768, 16, 96, 1]>>, memref<2x2x8x16xbf16, #kv>, memref<2x2x8x16xbf16>, memref<2x2x8x16xbf16>, memref<2x2x8x16xbf16>, memref<2x2x8x1xf32> into memref<2x2x8x16xbf16>, memref<2x2x8x16xbf16>, memref<2x2x8x16xbf16>
  return
}

// -----

// fp16 operands call the _f16 entry points; not causal passes 0.
// CHECK-LABEL: func.func @half(
// CHECK: %[[C:.+]] = arith.constant 0 : i32
// CHECK: call @gacc_cudnn_attention_forward_f16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[C]])
func.func @half(%q: memref<1x1x4x16xf16>, %l: memref<1x1x4x1xf32>) {
  gacc.fused_attention %q, %q, %q into %q, %l {scale = 0.25 : f64} : memref<1x1x4x16xf16>, memref<1x1x4x16xf16>, memref<1x1x4x16xf16> into memref<1x1x4x16xf16>, memref<1x1x4x1xf32>
  return
}
