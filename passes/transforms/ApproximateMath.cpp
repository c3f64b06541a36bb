//===- ApproximateMath.cpp - gacc-approximate-math ------------------------===//
//
// Replaces f32 transcendental math ops (tanh, exp, ...) by upstream MLIR's
// polynomial approximations, so that the CPU's loops hold no library calls
// and LLVM's loop vectorizer can vectorize them.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "gacc-approximate-math"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCAPPROXIMATEMATHPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The ops approximated when the `ops` option is empty: those the models'
/// elementwise loops evaluate per element (activations, softmax and
/// cross-entropy). Scalars evaluated once per step (the schedules' cos and
/// pow) keep the library's exact values.
constexpr StringLiteral kDefaultOps[] = {"tanh", "exp", "expm1",
                                         "log",  "log1p", "erf"};

/// The math ops upstream's populateMathPolynomialApproximationPatterns
/// approximates for a predicate (mlir/lib/Dialect/Math/Transforms/
/// PolynomialApproximation.cpp): what `ops` may name.
constexpr StringLiteral kApproximableOps[] = {
    "acos", "asin",  "atan", "atan2", "cbrt", "cos", "erf", "erfc",
    "exp",  "expm1", "log",  "log1p", "log2", "sin", "tanh"};

struct ApproximateMathPass
    : public mlir::gacc::impl::GAccApproximateMathPassBase<
          ApproximateMathPass> {
  using GAccApproximateMathPassBase::GAccApproximateMathPassBase;

  LogicalResult initialize(MLIRContext *ctx) override {
    for (const std::string &name : opNames)
      if (!llvm::is_contained(kApproximableOps, StringRef(name))) {
        std::string known;
        llvm::raw_string_ostream os(known);
        llvm::interleaveComma(kApproximableOps, os);
        return emitError(UnknownLoc::get(ctx))
               << getArgument() << ": option ops: '" << name
               << "' is not a math op upstream's polynomial approximations "
                  "cover ("
               << known << ")";
      }
    return success();
  }

  void runOnOperation() override {
    SmallVector<std::string> names(opNames.begin(), opNames.end());
    if (names.empty())
      names.assign(std::begin(kDefaultOps), std::end(kDefaultOps));
    RewritePatternSet patterns(&getContext());
    // The patterns name ops in full (`math.tanh`).
    auto named = [&](StringRef name) {
      return name.consume_front("math.") && llvm::is_contained(names, name);
    };
    populateMathPolynomialApproximationPatterns(patterns, named);
    // Upstream's patterns build scalar and vector arithmetic: an op on
    // tensors (before bufferization) stays, as the description says. The
    // ops they create are rewritten too.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_present<math::MathDialect>(op->getDialect()) &&
          llvm::none_of(op->getOperandTypes(), llvm::IsaPred<TensorType>))
        ops.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
