//===- Initializers.h - parameter initialization ----------------*- C++ -*-===//
//
// Draws the initial values of parameters from their distributions
// (abi/Initializer.h: what the dialect's initializer attributes stand for)
// with a seeded generator.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_INITIALIZERS_H
#define GACC_RUNTIME_INITIALIZERS_H

#include "runtime/Tensor.h"

#include "abi/Initializer.h"

#include <random>

namespace gaccrt {

/// Fills `t` (fp32) from `dist` drawing from `rng`, element by element in
/// row-major order. Uniform draws use 53-bit doubles
/// u = (rng() >> 11)·2⁻⁵³; normal draws use Box–Muller. The same seed and
/// parameter order give the same values on every machine (the generator is
/// std::mt19937_64, fully specified by the C++ standard).
void initializeParameter(const ::gacc::abi::InitDistribution &dist,
                         HostTensor &t, std::mt19937_64 &rng);

} // namespace gaccrt

#endif // GACC_RUNTIME_INITIALIZERS_H
