//===- BF16Bits.h - bf16 values as bits, for the unit tests ----*- C++ -*-===//
//
// The conversions the unit tests make between floats and bf16 bits: a
// bf16 value is the upper half of the float with the same bits, and a
// finite float rounds to the nearest bf16, ties to even.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TEST_UNIT_BF16BITS_H
#define GACC_TEST_UNIT_BF16BITS_H

#include <cstdint>
#include <cstring>

namespace gacc::test {

/// The float a bf16 holds.
inline float fromBF16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// The bf16 bits of finite x, rounded to nearest even.
inline uint16_t toBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

} // namespace gacc::test

#endif // GACC_TEST_UNIT_BF16BITS_H
