//===- Blas.cpp - the CPU GEMMs behind convert-gacc-to-blas ---------------===//
//
// C = beta·C + op(A)·op(B) on strided fp32 memrefs, and the same for each
// matrix of a batch, called from compiled code with each memref expanded
// into its descriptor fields. Products of at most kSmallGemmMaxRows rows
// (a layer at a small micro-batch) go to SmallGemm's kernels, the rest to
// OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "runtime/Runtime.h"
#include "runtime/SmallGemm.h"

#include <cblas.h>

#include <algorithm>

namespace {
struct View {
  float *data;
  int64_t rows, cols, rowStride, colStride;
};
View view(float *aligned, int64_t offset, int64_t s0, int64_t s1, int64_t st0,
          int64_t st1) {
  return {aligned + offset, s0, s1, st0, st1};
}

/// C = beta·C + op(A)·op(B) on 2-D views.
void gemm(const View &a, const View &b, const View &c, bool transA,
          bool transB, float beta) {
  int64_t m = c.rows, n = c.cols, k = transA ? a.rows : a.cols;
  bool unit = a.colStride == 1 && b.colStride == 1 && c.colStride == 1;
  if (unit && !transA &&
      gaccrt::smallGemm(a.data, a.rowStride, b.data, b.rowStride, c.data,
                        c.rowStride, m, n, k, transB, beta))
    return;
  if (unit && m > 0 && n > 0) {
    // Row-major BLAS: with beta = 0, C is never read (BLAS contract).
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a.data,
                std::max<int64_t>(a.rowStride, 1), b.data,
                std::max<int64_t>(b.rowStride, 1), beta, c.data,
                std::max<int64_t>(c.rowStride, 1));
    return;
  }
  // Non-unit inner strides: a plain loop with the same beta semantics.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        float av = transA ? a.data[kk * a.rowStride + i * a.colStride]
                          : a.data[i * a.rowStride + kk * a.colStride];
        float bv = transB ? b.data[j * b.rowStride + kk * b.colStride]
                          : b.data[kk * b.rowStride + j * b.colStride];
        s += av * bv;
      }
      float &out = c.data[i * c.rowStride + j * c.colStride];
      out = beta == 0.0f ? s : beta * out + s;
    }
}
} // namespace

extern "C" void gacc_sgemm(float *, float *aAligned, int64_t aOff, int64_t aS0,
                           int64_t aS1, int64_t aSt0, int64_t aSt1, float *,
                           float *bAligned, int64_t bOff, int64_t bS0,
                           int64_t bS1, int64_t bSt0, int64_t bSt1, float *,
                           float *cAligned, int64_t cOff, int64_t cS0,
                           int64_t cS1, int64_t cSt0, int64_t cSt1,
                           int32_t transA, int32_t transB, float beta) {
  gemm(view(aAligned, aOff, aS0, aS1, aSt0, aSt1),
       view(bAligned, bOff, bS0, bS1, bSt0, bSt1),
       view(cAligned, cOff, cS0, cS1, cSt0, cSt1), transA, transB, beta);
}

extern "C" void gacc_sgemm_batched(
    float *, float *aAligned, int64_t aOff, int64_t aB, int64_t aS0,
    int64_t aS1, int64_t aStB, int64_t aSt0, int64_t aSt1, float *,
    float *bAligned, int64_t bOff, int64_t bB, int64_t bS0, int64_t bS1,
    int64_t bStB, int64_t bSt0, int64_t bSt1, float *, float *cAligned,
    int64_t cOff, int64_t cB, int64_t cS0, int64_t cS1, int64_t cStB,
    int64_t cSt0, int64_t cSt1, int32_t transA, int32_t transB, float beta) {
  (void)aB;
  (void)bB;
  for (int64_t i = 0; i < cB; ++i)
    gemm(view(aAligned, aOff + i * aStB, aS0, aS1, aSt0, aSt1),
         view(bAligned, bOff + i * bStB, bS0, bS1, bSt0, bSt1),
         view(cAligned, cOff + i * cStB, cS0, cS1, cSt0, cSt1), transA,
         transB, beta);
}
