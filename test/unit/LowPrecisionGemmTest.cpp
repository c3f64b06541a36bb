//===- LowPrecisionGemmTest.cpp - the CPU GEMMs of bf16 and fp16 factors
//---===//
//
// runtime/Blas.cpp's entry points for products of bf16 and fp16 A and B
// (abi::lowOperandsGemm, a narrowed step's products) against the fp32
// entry point on the same values, bit for bit (both multiply the operands'
// fp32 values in the same order), for plain, transposed and strided
// operands and a batch; and halfToFloat on every kind of fp16 value
// against its definition.
//
//===----------------------------------------------------------------------===//

#include "runtime/Blas.h"
#include "runtime/Runtime.h"
#include "test/unit/BF16Bits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

namespace {

using gacc::test::fromBF16;
using gacc::test::toBF16;

/// fp16's definition: (-1)^s · 2^(e-15) · (1 + m/1024), subnormals
/// 2^-14 · m/1024.
double halfByDefinition(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double sign = s ? -1.0 : 1.0;
  if (e == 0)
    return sign * std::ldexp(m / 1024.0, -14);
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

TEST(LowPrecisionGemm, HalfToFloatIsExactForEveryValue) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    float f = gaccrt::halfToFloat(uint16_t(h));
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) {
      EXPECT_TRUE(m ? std::isnan(f) : std::isinf(f)) << h;
      continue;
    }
    ASSERT_EQ(double(f), halfByDefinition(uint16_t(h))) << h;
    ASSERT_EQ(std::signbit(f), (h >> 15) != 0) << h;
  }
}

/// C = beta·C + op(A)·op(B) through gacc_sgemm_bf16 and through gacc_sgemm
/// on the operands' fp32 values, A and B stored with padded rows.
void compareWithFP32(int64_t m, int64_t n, int64_t k, bool transA, bool transB,
                     float beta) {
  SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " tA "
                                    << transA << " tB " << transB);
  std::mt19937 rng(unsigned(m * 131 + n * 17 + k));
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  int64_t aRows = transA ? k : m, aCols = transA ? m : k;
  int64_t bRows = transB ? n : k, bCols = transB ? k : n;
  int64_t lda = aCols + 3, ldb = bCols + 1;
  std::vector<uint16_t> a16(aRows * lda), b16(bRows * ldb);
  std::vector<float> a32(a16.size()), b32(b16.size());
  for (size_t i = 0; i < a16.size(); ++i)
    a32[i] = fromBF16(a16[i] = toBF16(u(rng)));
  for (size_t i = 0; i < b16.size(); ++i)
    b32[i] = fromBF16(b16[i] = toBF16(u(rng)));
  std::vector<float> c1(m * n), c2(m * n);
  for (size_t i = 0; i < c1.size(); ++i)
    c1[i] = c2[i] = u(rng);
  gacc_sgemm_bf16(a16.data(), a16.data(), 0, aRows, aCols, lda, 1, b16.data(),
                  b16.data(), 0, bRows, bCols, ldb, 1, c1.data(), c1.data(), 0,
                  m, n, n, 1, transA, transB, beta);
  gacc_sgemm(a32.data(), a32.data(), 0, aRows, aCols, lda, 1, b32.data(),
             b32.data(), 0, bRows, bCols, ldb, 1, c2.data(), c2.data(), 0, m, n,
             n, 1, transA, transB, beta);
  EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)));
}

TEST(LowPrecisionGemm, BF16MatchesFP32OnTheSameValues) {
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, std::tuple{5, 7, 3},
                         std::tuple{64, 33, 70}, std::tuple{200, 9, 31}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 1.0f})
          compareWithFP32(m, n, k, ta, tb, beta);
}

TEST(LowPrecisionGemm, FP16BatchMatchesFP32OnTheSameValues) {
  // [2, 3, 4] · [2, 4, 5] with A's matrices 13 elements apart (a gap).
  int64_t batch = 2, m = 3, k = 4, n = 5, strideA = 13;
  std::vector<uint16_t> a16(batch * strideA), b16(batch * k * n);
  std::vector<float> a32(a16.size()), b32(b16.size());
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> bits(0, 0x7bff); // finite, positive
  for (size_t i = 0; i < a16.size(); ++i)
    a32[i] = gaccrt::halfToFloat(a16[i] = uint16_t(bits(rng) % 0x3c00));
  for (size_t i = 0; i < b16.size(); ++i)
    b32[i] =
        gaccrt::halfToFloat(b16[i] = uint16_t(0x8000 | (bits(rng) % 0x3c00)));
  std::vector<float> c1(batch * m * n, 1.0f), c2(c1);
  gacc_sgemm_batched_f16(a16.data(), a16.data(), 0, batch, m, k, strideA, k, 1,
                         b16.data(), b16.data(), 0, batch, k, n, k * n, n, 1,
                         c1.data(), c1.data(), 0, batch, m, n, m * n, n, 1, 0,
                         0, 1.0f);
  gacc_sgemm_batched(a32.data(), a32.data(), 0, batch, m, k, strideA, k, 1,
                     b32.data(), b32.data(), 0, batch, k, n, k * n, n, 1,
                     c2.data(), c2.data(), 0, batch, m, n, m * n, n, 1, 0, 0,
                     1.0f);
  EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)));
  // Not a product of zeros: the values reach C.
  EXPECT_NE(c1[0], 1.0f);
}

} // namespace
