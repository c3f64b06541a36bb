//===- FuseElementwise.cpp - gacc-fuse-elementwise ------------------------===//
//
// Fuses chains of elementwise linalg ops on tensors before bufferization
// with upstream's elementwise fusion patterns
// (linalg::populateElementwiseOpsFusionPatterns), restricted to producers
// with one use that the consumer reads through a permutation (each element
// once, not once per point of a reduction or broadcast), so that nothing
// is computed twice: a chain becomes one loop nest on the CPU and one
// kernel on the GPU.
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
    // Upstream's linalg-fuse-elementwise-ops also propagates reshapes
    // through the IR; only the fusion patterns are wanted here.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          return producer && producer->hasOneUse() && consumer &&
                 consumer.getMatchingIndexingMap(fused).isPermutation();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
