//===- Initializer.h - parameter initial distributions ----------*- C++ -*-===//
//
// The distribution a parameter's initializer attribute stands for: what the
// dialect's InitializerAttrInterface returns and what the runtime draws
// from (runtime/Initializers.h).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ABI_INITIALIZER_H
#define GACC_ABI_INITIALIZER_H

namespace gacc::abi {

/// Constant: every element is `a`. Uniform: U(a, b). Normal: N(a, b²).
struct InitDistribution {
  enum Kind { Constant, Uniform, Normal } kind = Constant;
  double a = 0.0, b = 0.0;
};

} // namespace gacc::abi

#endif // GACC_ABI_INITIALIZER_H
