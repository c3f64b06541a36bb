//===- Initializers.cpp - parameter initialization ------------------------===//
//
// zeros, uniform, normal and torch.nn.Linear's Kaiming-uniform.
//
//===----------------------------------------------------------------------===//

#include "runtime/Initializers.h"

#include "dialect/GAccDialect.h"

#include <cmath>

using namespace gaccrt;
using namespace mlir::gacc;

static double uniform01(std::mt19937_64 &rng) {
  return double(rng() >> 11) * 0x1.0p-53;
}

void gaccrt::initializeParameter(mlir::Attribute init, HostTensor &t,
                               std::mt19937_64 &rng) {
  float *p = t.f32();
  int64_t n = t.numElements();
  auto fillUniform = [&](double low, double high) {
    for (int64_t i = 0; i < n; ++i)
      p[i] = float(low + (high - low) * uniform01(rng));
  };
  using llvm::isa, llvm::dyn_cast;
  if (isa<ZerosInitAttr>(init)) {
    std::fill(p, p + n, 0.0f);
  } else if (auto c = dyn_cast<ConstantInitAttr>(init)) {
    std::fill(p, p + n, float(c.getValue().convertToDouble()));
  } else if (auto u = dyn_cast<UniformInitAttr>(init)) {
    fillUniform(u.getLow().convertToDouble(), u.getHigh().convertToDouble());
  } else if (auto k = dyn_cast<KaimingUniformInitAttr>(init)) {
    // torch.nn.init.kaiming_uniform_(a = sqrt(5)): gain = sqrt(2/(1+a²)),
    // bound = gain·sqrt(3/fan_in) = 1/sqrt(fan_in).
    double a = std::sqrt(5.0);
    double gain = std::sqrt(2.0 / (1.0 + a * a));
    double bound = gain * std::sqrt(3.0 / double(k.getFanIn()));
    fillUniform(-bound, bound);
  } else if (auto g = dyn_cast<NormalInitAttr>(init)) {
    for (int64_t i = 0; i < n; ++i) {
      double u1 = 1.0 - uniform01(rng), u2 = uniform01(rng);
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      p[i] = float(g.getMean().convertToDouble() + g.getStd().convertToDouble() * z);
    }
  }
}
