//===- SmallGemmTest.cpp - the few-row GEMM kernels against float64 -------===//
//
// gaccrt::smallGemm for every row count it takes, both B layouts, column
// counts around its tile widths (3 for A·Bᵀ, 8 and 24 for A·B), depths
// around its vector width, leading dimensions wider than the matrices and
// beta 0, 1 and 0.5, against a float64 product: within a few float32
// roundings of the dot product's magnitude, and C's padding untouched.
// Also what it must refuse: too many rows, empty products.
//
//===----------------------------------------------------------------------===//

#include "runtime/SmallGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

struct Case {
  int64_t m, n, k;
  bool transposeB;
  float beta;
};

/// Runs one case with padded leading dimensions; reports the largest error
/// relative to sum |a·b| (the float32 bound of a dot product's error).
void check(const Case &t) {
  SCOPED_TRACE(::testing::Message()
               << "m " << t.m << " n " << t.n << " k " << t.k << " transposeB "
               << t.transposeB << " beta " << t.beta);
  std::mt19937 rng(unsigned(t.m * 1000003 + t.n * 1009 + t.k));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int64_t lda = t.k + 3, ldc = t.n + 5;
  int64_t bRows = t.transposeB ? t.n : t.k, bCols = t.transposeB ? t.k : t.n;
  int64_t ldb = bCols + 2;
  std::vector<float> a(t.m * lda), b(bRows * ldb), c(t.m * ldc);
  for (float &v : a)
    v = u(rng);
  for (float &v : b)
    v = u(rng);
  for (float &v : c)
    v = u(rng);
  std::vector<float> before = c;
  ASSERT_TRUE(gaccrt::smallGemm(a.data(), lda, b.data(), ldb, c.data(), ldc,
                                t.m, t.n, t.k, t.transposeB, t.beta));
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      float got = c[i * ldc + j];
      if (j >= t.n) {
        EXPECT_EQ(got, before[i * ldc + j]) << "padding at " << i << ", " << j;
        continue;
      }
      double sum = t.beta == 0.0f ? 0.0 : double(t.beta) * before[i * ldc + j];
      double magnitude = std::fabs(sum);
      for (int64_t r = 0; r < t.k; ++r) {
        double bv = t.transposeB ? b[j * ldb + r] : b[r * ldb + j];
        sum += double(a[i * lda + r]) * bv;
        magnitude += std::fabs(double(a[i * lda + r]) * bv);
      }
      EXPECT_LE(std::fabs(got - sum), 4e-7 * magnitude + 1e-30)
          << "at " << i << ", " << j << ": " << got << " against " << sum;
    }
  }
}

/// The kernels need AVX2 and FMA; elsewhere smallGemm declines them all.
bool kernelsAvailable() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

TEST(SmallGemm, MatchesFloat64) {
  if (!kernelsAvailable())
    GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  for (bool transposeB : {true, false})
    for (int64_t m = 1; m <= gaccrt::kSmallGemmMaxRows; ++m)
      for (int64_t n : {1, 2, 3, 7, 8, 9, 23, 24, 25, 50})
        for (int64_t k : {1, 7, 8, 9, 31, 100})
          for (float beta : {0.0f, 1.0f, 0.5f})
            check({m, n, k, transposeB, beta});
}

TEST(SmallGemm, LayerShapes) {
  if (!kernelsAvailable())
    GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  // fashion_mlp's first layer at m = 8 and kjv_char's at m = 4.
  check({8, 256, 784, true, 0.0f});
  check({8, 784, 256, false, 1.0f});
  check({4, 1408, 128, true, 0.0f});
}

TEST(SmallGemm, RefusesWhatItDoesNotTake) {
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 7.0f);
  EXPECT_FALSE(gaccrt::smallGemm(a.data(), 64, b.data(), 64, c.data(), 64,
                                 gaccrt::kSmallGemmMaxRows + 1, 8, 8, true,
                                 0.0f));
  EXPECT_FALSE(gaccrt::smallGemm(a.data(), 64, b.data(), 64, c.data(), 64, 4,
                                 0, 8, true, 0.0f));
  EXPECT_FALSE(gaccrt::smallGemm(a.data(), 64, b.data(), 64, c.data(), 64, 4,
                                 8, 0, false, 0.0f));
  for (float v : c)
    EXPECT_EQ(v, 7.0f);
}

} // namespace
