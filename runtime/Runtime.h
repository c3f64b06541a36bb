//===- Runtime.h - what compiled gacc code calls at run time ----*- C++ -*-===//
//
// C entry points that compiled training steps call (the CPU GEMM). The
// memref arguments of these functions arrive expanded into their descriptor
// fields: allocated pointer, aligned pointer, offset, sizes, strides.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_RUNTIME_H
#define GACC_RUNTIME_RUNTIME_H

#include <cstdint>

extern "C" {
/// C = beta·C + op(A)·op(B) for rank-2 fp32 strided memrefs (OpenBLAS
/// cblas_sgemm when the inner strides are 1; a product of at least 2^20
/// multiply-adds split into one slab of C per thread of the CPU team,
/// runtime/CpuThreads.h). beta is 0 or 1; with beta = 0 C is not read.
/// op(X) = Xᵀ when transX is non-zero.
void gacc_sgemm(float *aAlloc, float *aAligned, int64_t aOff, int64_t aS0,
                int64_t aS1, int64_t aSt0, int64_t aSt1, float *bAlloc,
                float *bAligned, int64_t bOff, int64_t bS0, int64_t bS1,
                int64_t bSt0, int64_t bSt1, float *cAlloc, float *cAligned,
                int64_t cOff, int64_t cS0, int64_t cS1, int64_t cSt0,
                int64_t cSt1, int32_t transA, int32_t transB, float beta);
/// The same for each matrix of a batch: rank-3 fp32 strided memrefs
/// [batch, rows, cols], C[b] = beta·C[b] + op(A[b])·op(B[b]) (the batch
/// sizes agree: convert-gacc-to-blas calls it for a linalg.batch_matmul).
/// A batch of at least as many matrices as the CPU team has threads is
/// spread over the threads, each product whole on one; a smaller batch
/// has each product split.
void gacc_sgemm_batched(float *aAlloc, float *aAligned, int64_t aOff,
                        int64_t aB, int64_t aS0, int64_t aS1, int64_t aStB,
                        int64_t aSt0, int64_t aSt1, float *bAlloc,
                        float *bAligned, int64_t bOff, int64_t bB, int64_t bS0,
                        int64_t bS1, int64_t bStB, int64_t bSt0, int64_t bSt1,
                        float *cAlloc, float *cAligned, int64_t cOff,
                        int64_t cB, int64_t cS0, int64_t cS1, int64_t cStB,
                        int64_t cSt0, int64_t cSt1, int32_t transA,
                        int32_t transB, float beta);

/// gacc_sgemm and gacc_sgemm_batched for bf16 (_bf16) or fp16 (_f16) A and
/// B, C fp32 (abi::lowOperandsGemm): the operands' fp32 values are made
/// (exact) and multiplied as gacc_sgemm does.
#define GACC_DECLARE_LOW_OPERANDS_GEMM(NAME)                                   \
  void NAME(uint16_t *aAlloc, uint16_t *aAligned, int64_t aOff, int64_t aS0,   \
            int64_t aS1, int64_t aSt0, int64_t aSt1, uint16_t *bAlloc,         \
            uint16_t *bAligned, int64_t bOff, int64_t bS0, int64_t bS1,        \
            int64_t bSt0, int64_t bSt1, float *cAlloc, float *cAligned,        \
            int64_t cOff, int64_t cS0, int64_t cS1, int64_t cSt0,              \
            int64_t cSt1, int32_t transA, int32_t transB, float beta);
#define GACC_DECLARE_LOW_OPERANDS_GEMM_BATCHED(NAME)                           \
  void NAME(uint16_t *aAlloc, uint16_t *aAligned, int64_t aOff, int64_t aB,    \
            int64_t aS0, int64_t aS1, int64_t aStB, int64_t aSt0,              \
            int64_t aSt1, uint16_t *bAlloc, uint16_t *bAligned, int64_t bOff,  \
            int64_t bB, int64_t bS0, int64_t bS1, int64_t bStB, int64_t bSt0,  \
            int64_t bSt1, float *cAlloc, float *cAligned, int64_t cOff,        \
            int64_t cB, int64_t cS0, int64_t cS1, int64_t cStB, int64_t cSt0,  \
            int64_t cSt1, int32_t transA, int32_t transB, float beta);
GACC_DECLARE_LOW_OPERANDS_GEMM(gacc_sgemm_bf16)
GACC_DECLARE_LOW_OPERANDS_GEMM(gacc_sgemm_f16)
GACC_DECLARE_LOW_OPERANDS_GEMM_BATCHED(gacc_sgemm_batched_bf16)
GACC_DECLARE_LOW_OPERANDS_GEMM_BATCHED(gacc_sgemm_batched_f16)
}

#endif // GACC_RUNTIME_RUNTIME_H
