//===- SmallGemm.cpp - GEMMs of a few rows without packing ----------------===//
//
// Register-blocked AVX2 kernels for C = beta·C + A·op(B) with at most
// kSmallGemmMaxRows rows, compiled for AVX2 and FMA whatever the build's
// target and chosen at run time only where the CPU has both.
//
// C = A·Bᵀ (a layer's forward): a tile of MB rows of A by 3 rows of B
// keeps MB × 3 vector accumulators over k; B's rows stream from memory
// once per block of MB rows, A's stay in the L1 cache. C = A·B (a data
// gradient): a tile of MB rows by 24 columns broadcasts A[i, k] against
// three vectors of B's row k. With MB = 4 both use 12 of the 16 vector
// registers for accumulators.
//
//===----------------------------------------------------------------------===//

#include "runtime/SmallGemm.h"

#include <immintrin.h>

#define GACC_AVX2 __attribute__((target("avx2,fma")))
#define GACC_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

namespace {

GACC_AVX2_INLINE float horizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

GACC_AVX2_INLINE void store(float &out, float value, float beta) {
  out = beta == 0.0f ? value : beta * out + value;
}

struct Operands {
  const float *a;
  int64_t lda;
  const float *b;
  int64_t ldb;
  float *c;
  int64_t ldc;
  int64_t n, k;
  float beta;
};

/// C[0:MB, 0:NB] of C = A·Bᵀ, B's rows at `b`.
template <int MB, int NB>
GACC_AVX2_INLINE void tileTransposed(const Operands &o, const float *a,
                                     const float *b, float *c) {
  __m256 acc[MB][NB];
#pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      acc[i][j] = _mm256_setzero_ps();
  int64_t kk = 0;
  for (; kk + 8 <= o.k; kk += 8) {
    __m256 w[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      w[j] = _mm256_loadu_ps(b + j * o.ldb + kk);
#pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      __m256 x = _mm256_loadu_ps(a + i * o.lda + kk);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        acc[i][j] = _mm256_fmadd_ps(x, w[j], acc[i][j]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      float s = horizontalSum(acc[i][j]);
      for (int64_t r = kk; r < o.k; ++r)
        s += a[i * o.lda + r] * b[j * o.ldb + r];
      store(c[i * o.ldc + j], s, o.beta);
    }
}

/// Rows [0, MB) of C = A·Bᵀ, A's and C's rows at `a` and `c`.
template <int MB>
GACC_AVX2 void rowsTransposed(const Operands &o, const float *a, float *c) {
  int64_t j = 0;
  for (; j + 3 <= o.n; j += 3)
    tileTransposed<MB, 3>(o, a, o.b + j * o.ldb, c + j);
  for (; j < o.n; ++j)
    tileTransposed<MB, 1>(o, a, o.b + j * o.ldb, c + j);
}

/// C[0:MB, 0:8·NB] of C = A·B, B's columns from `b`.
template <int MB, int NB>
GACC_AVX2_INLINE void tileDirect(const Operands &o, const float *a,
                                 const float *b, float *c) {
  __m256 acc[MB][NB];
#pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      acc[i][j] = _mm256_setzero_ps();
  for (int64_t kk = 0; kk < o.k; ++kk) {
    __m256 w[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      w[j] = _mm256_loadu_ps(b + kk * o.ldb + 8 * j);
#pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      __m256 x = _mm256_broadcast_ss(a + i * o.lda + kk);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        acc[i][j] = _mm256_fmadd_ps(x, w[j], acc[i][j]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      float *out = c + i * o.ldc + 8 * j;
      __m256 r = acc[i][j];
      if (o.beta != 0.0f)
        r = _mm256_fmadd_ps(_mm256_set1_ps(o.beta), _mm256_loadu_ps(out), r);
      _mm256_storeu_ps(out, r);
    }
}

/// Rows [0, MB) of C = A·B.
template <int MB>
GACC_AVX2 void rowsDirect(const Operands &o, const float *a, float *c) {
  int64_t j = 0;
  for (; j + 24 <= o.n; j += 24)
    tileDirect<MB, 3>(o, a, o.b + j, c + j);
  for (; j + 8 <= o.n; j += 8)
    tileDirect<MB, 1>(o, a, o.b + j, c + j);
  for (; j < o.n; ++j)
    for (int i = 0; i < MB; ++i) {
      float s = 0.0f;
      for (int64_t kk = 0; kk < o.k; ++kk)
        s += a[i * o.lda + kk] * o.b[kk * o.ldb + j];
      store(c[i * o.ldc + j], s, o.beta);
    }
}

/// Rows [0, rows) in blocks of 4 and the 1–3 left over.
template <template <int> class Rows>
GACC_AVX2 void allRows(const Operands &o, int64_t rows) {
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4)
    Rows<4>::run(o, o.a + i * o.lda, o.c + i * o.ldc);
  const float *a = o.a + i * o.lda;
  float *c = o.c + i * o.ldc;
  switch (rows - i) {
  case 3:
    Rows<3>::run(o, a, c);
    break;
  case 2:
    Rows<2>::run(o, a, c);
    break;
  case 1:
    Rows<1>::run(o, a, c);
    break;
  default:
    break;
  }
}

template <int MB> struct Transposed {
  static void run(const Operands &o, const float *a, float *c) {
    rowsTransposed<MB>(o, a, c);
  }
};
template <int MB> struct Direct {
  static void run(const Operands &o, const float *a, float *c) {
    rowsDirect<MB>(o, a, c);
  }
};

bool cpuHasAvx2Fma() {
  static const bool has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

} // namespace

bool gaccrt::smallGemm(const float *a, int64_t lda, const float *b,
                       int64_t ldb, float *c, int64_t ldc, int64_t m,
                       int64_t n, int64_t k, bool transposeB, float beta) {
  if (m <= 0 || n <= 0 || k <= 0 || m > kSmallGemmMaxRows || !cpuHasAvx2Fma())
    return false;
  Operands o{a, lda, b, ldb, c, ldc, n, k, beta};
  if (transposeB)
    allRows<Transposed>(o, m);
  else
    allRows<Direct>(o, m);
  return true;
}
