//===- Initializers.cpp - parameter initialization ------------------------===//
//
// Constant, uniform and normal draws (abi/Initializer.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/Initializers.h"

#include <algorithm>
#include <cmath>

using namespace gaccrt;
using ::gacc::abi::InitDistribution;

static double uniform01(std::mt19937_64 &rng) {
  return double(rng() >> 11) * 0x1.0p-53;
}

void gaccrt::initializeParameter(const InitDistribution &dist, HostTensor &t,
                                 std::mt19937_64 &rng) {
  float *p = t.f32();
  int64_t n = t.numElements();
  switch (dist.kind) {
  case InitDistribution::Constant:
    std::fill(p, p + n, float(dist.a));
    return;
  case InitDistribution::Uniform:
    for (int64_t i = 0; i < n; ++i)
      p[i] = float(dist.a + (dist.b - dist.a) * uniform01(rng));
    return;
  case InitDistribution::Normal:
    for (int64_t i = 0; i < n; ++i) {
      double u1 = 1.0 - uniform01(rng), u2 = uniform01(rng);
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      p[i] = float(dist.a + dist.b * z);
    }
    return;
  }
}
