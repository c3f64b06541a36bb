//===- Blas.cpp - the CPU GEMMs behind convert-gacc-to-blas ---------------===//
//
// C = beta·C + op(A)·op(B) on strided fp32 memrefs, and the same for each
// matrix of a batch, called from compiled code with each memref expanded
// into its descriptor fields. Products of at most kSmallGemmMaxRows rows
// (a layer at a small micro-batch) go to SmallGemm's kernels, the rest to
// OpenBLAS (single-threaded when the step runs on a team of CPU threads:
// a large product is then split into one slab of C per thread, a batch
// spread over the threads, on runtime/CpuThreads' team). Products of bf16
// or fp16 operands (a narrowed step's stored values) extend them to fp32
// copies first (exact), in buffers kept for the next product (the memory
// plan's CPU workspace), and run as fp32 products.
//
//===----------------------------------------------------------------------===//

#include "runtime/Blas.h"
#include "runtime/CpuThreads.h"
#include "runtime/Runtime.h"
#include "runtime/SmallGemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

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

/// The fp32 value of a bf16 (its upper 16 bits).
float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// The 16-bit element types of a product's operands (abi::lowOperandsGemm).
enum class Half { bf16, f16 };

/// A buffer of floats that grows to the largest size asked for and is
/// kept for the next product (the memory plan counts the largest as the
/// CPU's GEMM workspace); not zero-filled.
class Scratch {
public:
  float *get(size_t n) {
    if (n > capacity) {
      data.reset(new float[n]);
      heldBytes += (n - capacity) * sizeof(float);
      capacity = n;
    }
    return data.get();
  }
  ~Scratch() { heldBytes -= capacity * sizeof(float); }
  /// Bytes every thread's scratch buffers hold.
  static inline std::atomic<uint64_t> heldBytes{0};

private:
  std::unique_ptr<float[]> data;
  size_t capacity = 0;
};

/// The fp32 values of a strided [batch, rows, cols] tensor of 16-bit
/// floats at the same strides (so that the fp32 product reads them in the
/// order gacc_sgemm reads an fp32 operand of that layout), in `out`.
/// Returns the first element.
float *widen(const uint16_t *data, int64_t batch, int64_t rows, int64_t cols,
             int64_t batchStride, int64_t rowStride, int64_t colStride,
             Half type, Scratch &scratch) {
  if (batch == 0 || rows == 0 || cols == 0)
    return scratch.get(1);
  float *out = scratch.get(size_t((batch - 1) * batchStride +
                                  (rows - 1) * rowStride +
                                  (cols - 1) * colStride + 1));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        int64_t at = b * batchStride + i * rowStride + j * colStride;
        out[size_t(at)] = type == Half::bf16 ? bf16ToFloat(data[at])
                                             : gaccrt::halfToFloat(data[at]);
      }
  return out;
}

/// The fp32 copies of the factors, kept from one product to the next.
thread_local Scratch factorA, factorB;

/// C = beta·C + op(A)·op(B) for 16-bit A and B: their fp32 values, then
/// gacc_sgemm's product.
void lowOperandsGemm(const uint16_t *a, int64_t aS0, int64_t aS1,
                     int64_t aSt0, int64_t aSt1, const uint16_t *b,
                     int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1,
                     const View &c, int32_t transA, int32_t transB,
                     float beta, Half type) {
  gemm({widen(a, 1, aS0, aS1, 0, aSt0, aSt1, type, factorA), aS0, aS1, aSt0,
        aSt1},
       {widen(b, 1, bS0, bS1, 0, bSt0, bSt1, type, factorB), bS0, bS1, bSt0,
        bSt1},
       c, transA, transB, beta);
}

} // namespace

uint64_t gaccrt::widenedFactorBytes() { return Scratch::heldBytes.load(); }

float gaccrt::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1fu) // infinities and NaNs
    bits = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent != 0) // normal: rebias 15 -> 127
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else if (mantissa == 0) // zero
    bits = sign;
  else { // subnormal, mantissa · 2^-24: normalize it
    int shifts = 0;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      ++shifts;
    }
    bits = sign | (uint32_t(113 - shifts) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

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

// The same for bf16 and fp16 A and B (abi::lowOperandsGemm): their fp32
// values, then the fp32 product.
#define GACC_LOW_OPERANDS_GEMM(NAME, TYPE)                                     \
  extern "C" void NAME(                                                        \
      uint16_t *, uint16_t *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,  \
      int64_t aSt0, int64_t aSt1, uint16_t *, uint16_t *bAligned,              \
      int64_t bOff, int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1,      \
      float *, float *cAligned, int64_t cOff, int64_t cS0, int64_t cS1,        \
      int64_t cSt0, int64_t cSt1, int32_t transA, int32_t transB,              \
      float beta) {                                                            \
    lowOperandsGemm(aAligned + aOff, aS0, aS1, aSt0, aSt1, bAligned + bOff,    \
                    bS0, bS1, bSt0, bSt1,                                      \
                    view(cAligned, cOff, cS0, cS1, cSt0, cSt1), transA,        \
                    transB, beta, TYPE);                                       \
  }
GACC_LOW_OPERANDS_GEMM(gacc_sgemm_bf16, Half::bf16)
GACC_LOW_OPERANDS_GEMM(gacc_sgemm_f16, Half::f16)
#undef GACC_LOW_OPERANDS_GEMM

#define GACC_LOW_OPERANDS_GEMM_BATCHED(NAME, TYPE)                             \
  extern "C" void NAME(                                                        \
      uint16_t *, uint16_t *aAligned, int64_t aOff, int64_t aB, int64_t aS0,   \
      int64_t aS1, int64_t aStB, int64_t aSt0, int64_t aSt1, uint16_t *,       \
      uint16_t *bAligned, int64_t bOff, int64_t bB, int64_t bS0, int64_t bS1,  \
      int64_t bStB, int64_t bSt0, int64_t bSt1, float *cAlloc,                 \
      float *cAligned,                                                         \
      int64_t cOff, int64_t cB, int64_t cS0, int64_t cS1, int64_t cStB,        \
      int64_t cSt0, int64_t cSt1, int32_t transA, int32_t transB,              \
      float beta) {                                                            \
    float *fa = widen(aAligned + aOff, aB, aS0, aS1, aStB, aSt0, aSt1, TYPE,   \
                      factorA);                                                \
    float *fb = widen(bAligned + bOff, bB, bS0, bS1, bStB, bSt0, bSt1, TYPE,   \
                      factorB);                                                \
    gacc_sgemm_batched(fa, fa, 0, aB, aS0, aS1, aStB, aSt0, aSt1, fb, fb, 0,   \
                       bB, bS0, bS1, bStB, bSt0, bSt1, cAlloc, cAligned, cOff, \
                       cB, cS0, cS1, cStB, cSt0, cSt1, transA, transB, beta);  \
  }
GACC_LOW_OPERANDS_GEMM_BATCHED(gacc_sgemm_batched_bf16, Half::bf16)
GACC_LOW_OPERANDS_GEMM_BATCHED(gacc_sgemm_batched_f16, Half::f16)
#undef GACC_LOW_OPERANDS_GEMM_BATCHED
