//===- FuseElementwise.cpp - gacc-fuse-elementwise ------------------------===//
//
// Fuses chains of elementwise linalg ops on tensors before bufferization
// with upstream's elementwise fusion patterns
// (linalg::populateElementwiseOpsFusionPatterns), restricted to producers
// with one use so that nothing is computed twice: a chain becomes one loop
// nest on the CPU and one kernel on the GPU.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "gacc-fuse-elementwise"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCFUSEELEMENTWISEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct FuseElementwisePass
    : public mlir::gacc::impl::GAccFuseElementwisePassBase<
          FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Upstream's linalg-fuse-elementwise-ops also propagates reshapes and
    // folds constants across the IR; only the fusion itself is wanted here.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
