//===- Blas.cpp - the CPU GEMMs behind convert-gacc-to-blas ---------------===//
//
// C = beta·C + op(A)·op(B) on strided fp32 memrefs, and the same for each
// matrix of a batch, called from compiled code with each memref expanded
// into its descriptor fields. Products of at most kSmallGemmMaxRows rows
// (a layer at a small micro-batch) go to SmallGemm's kernels, the rest to
// OpenBLAS (single-threaded when the step runs on a team of CPU threads:
// a large product is then split into one slab of C per thread, a batch
// spread over the threads, on runtime/CpuThreads' team).
//
//===----------------------------------------------------------------------===//

#include "runtime/Blas.h"
#include "runtime/CpuThreads.h"
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

/// C = beta·C + op(A)·op(B) [m × n] with unit inner strides on one
/// thread: SmallGemm's kernels where they apply (A not transposed, at most
/// kSmallGemmMaxRows rows), else OpenBLAS's cblas_sgemm.
void oneThreadGemm(const View &a, const View &b, const View &c,
                   bool transA, bool transB, float beta, int64_t m, int64_t n,
                   int64_t k) {
  if (!transA && gaccrt::smallGemm(a.data, a.rowStride, b.data, b.rowStride,
                                   c.data, c.rowStride, m, n, k, transB, beta))
    return;
  // Row-major BLAS: with beta = 0, C is never read (BLAS contract).
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a.data,
              std::max<int64_t>(a.rowStride, 1), b.data,
              std::max<int64_t>(b.rowStride, 1), beta, c.data,
              std::max<int64_t>(c.rowStride, 1));
}

/// A product split into slabs of C: slab s is rows (or columns)
/// [s·chunk, min((s + 1)·chunk, m or n)).
struct Slab {
  const View *a, *b, *c;
  bool transA, transB, splitRows;
  float beta;
  int64_t m, n, k, chunk;
};

void runSlab(void *ctx, int64_t s) {
  const Slab &p = *static_cast<const Slab *>(ctx);
  View a = *p.a, b = *p.b, c = *p.c;
  int64_t begin = s * p.chunk;
  int64_t size = std::min(p.chunk, (p.splitRows ? p.m : p.n) - begin);
  if (size <= 0)
    return;
  if (p.splitRows) {
    a.data += p.transA ? begin : begin * a.rowStride;
    c.data += begin * c.rowStride;
    oneThreadGemm(a, b, c, p.transA, p.transB, p.beta, size, p.n, p.k);
  } else {
    b.data += p.transB ? begin * b.rowStride : begin;
    c.data += begin;
    oneThreadGemm(a, b, c, p.transA, p.transB, p.beta, p.m, size, p.k);
  }
}

/// C = beta·C + op(A)·op(B) with unit inner strides, in the slabs of
/// planGemmSplit on the CPU team (a few-row product's columns split too).
/// Each element of C is then one thread's sum over k, whatever the
/// threads' timing.
void blasGemm(const View &a, const View &b, const View &c, bool transA,
              bool transB, float beta, int64_t m, int64_t n, int64_t k) {
  gaccrt::GemmSplit split =
      gaccrt::planGemmSplit(m, n, k, gaccrt::cpuThreads());
  if (split.slabs <= 1) {
    oneThreadGemm(a, b, c, transA, transB, beta, m, n, k);
    return;
  }
  Slab slab{&a, &b, &c, transA, transB, split.splitRows, beta,
            m,  n,  k,  split.chunk};
  gaccrt::parallelFor(split.slabs, runSlab, &slab);
}

/// C = beta·C + op(A)·op(B) on 2-D views.
void gemm(const View &a, const View &b, const View &c, bool transA,
          bool transB, float beta) {
  int64_t m = c.rows, n = c.cols, k = transA ? a.rows : a.cols;
  bool unit = a.colStride == 1 && b.colStride == 1 && c.colStride == 1;
  if (unit && m > 0 && n > 0) {
    blasGemm(a, b, c, transA, transB, beta, m, n, k);
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

/// The operands of a batched product: matrix i of each at its view's
/// data plus i times its batch stride.
struct Batch {
  View a, b, c;
  int64_t aStride, bStride, cStride;
  bool transA, transB;
  float beta;
};

void runBatchMember(void *ctx, int64_t i) {
  const Batch &p = *static_cast<const Batch *>(ctx);
  View a = p.a, b = p.b, c = p.c;
  a.data += i * p.aStride;
  b.data += i * p.bStride;
  c.data += i * p.cStride;
  gemm(a, b, c, p.transA, p.transB, p.beta);
}

} // namespace

gaccrt::GemmSplit gaccrt::planGemmSplit(int64_t m, int64_t n, int64_t k,
                                        int threads) {
  bool splitRows = m > n;
  int64_t side = splitRows ? m : n;
  if (threads <= 1 || m * n * k < kParallelGemmMacs)
    return {splitRows, side, 1};
  int64_t chunk = (side + threads - 1) / threads;
  // Column slabs of whole 16-float (64-byte) blocks.
  if (!splitRows)
    chunk = (chunk + 15) / 16 * 16;
  return {splitRows, chunk, (side + chunk - 1) / chunk};
}

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
  Batch batch{view(aAligned, aOff, aS0, aS1, aSt0, aSt1),
              view(bAligned, bOff, bS0, bS1, bSt0, bSt1),
              view(cAligned, cOff, cS0, cS1, cSt0, cSt1),
              aStB,
              bStB,
              cStB,
              transA != 0,
              transB != 0,
              beta};
  // At least as many matrices as threads: the matrices spread over the
  // threads, each product whole on one; fewer: each product split.
  if (cB >= gaccrt::cpuThreads()) {
    gaccrt::parallelFor(cB, runBatchMember, &batch);
    return;
  }
  for (int64_t i = 0; i < cB; ++i)
    runBatchMember(&batch, i);
}
