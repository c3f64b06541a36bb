//===- FuseLinearCrossEntropy.cpp - gacc-fuse-linear-cross-entropy --------===//
//
// The rewrite of a large classifier head and its cross-entropy
// (gacc.linear, then gacc.cross_entropy of its logits) into one
// gacc.linear_cross_entropy, which never holds the whole logits.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#define DEBUG_TYPE "gacc-fuse-linear-cross-entropy"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCFUSELINEARCROSSENTROPYPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// cross_entropy(linear(x, W, b), y) -> linear_cross_entropy(x, W, b, y),
/// where the logits have no other reader and take at least minBytes.
struct FuseHeadIntoCrossEntropy : public OpRewritePattern<CrossEntropyOp> {
  FuseHeadIntoCrossEntropy(MLIRContext *ctx, int64_t minBytes)
      : OpRewritePattern(ctx), minBytes(minBytes) {}

  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    auto head = op.getLogits().getDefiningOp<LinearOp>();
    if (!head || !head->hasOneUse())
      return rewriter.notifyMatchFailure(op, "logits not from a single-use "
                                             "gacc.linear");
    auto logits = op.getLogits().getType();
    if (logits.getNumElements() * int64_t(sizeof(float)) < minBytes)
      return rewriter.notifyMatchFailure(op, "logits below min-logits-bytes");
    Location loc = rewriter.getFusedLoc({head.getLoc(), op.getLoc()});
    auto fused = LinearCrossEntropyOp::create(
        rewriter, loc, head.getInput(), head.getWeight(), head.getBias(),
        op.getLabels(), op.getIgnoreIndex(), op.getLabelSmoothing(),
        /*row_block=*/nullptr);
    rewriter.replaceOp(op, fused.getLoss());
    rewriter.eraseOp(head);
    return success();
  }

  int64_t minBytes;
};

struct FuseLinearCrossEntropyPass
    : public mlir::gacc::impl::GAccFuseLinearCrossEntropyPassBase<
          FuseLinearCrossEntropyPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    return checkOptionAtLeast(ctx, getArgument(), "min-logits-bytes",
                              minLogitsBytes, 0);
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseLinearCrossEntropyPatterns(patterns, minLogitsBytes);
    // One walk applying only this pattern: no folding, no dead-code
    // removal, so the rest of the body stays as written (folding would,
    // e.g., move a commutative op's constant operand to the right, which
    // changes which operand a tie's adjoint follows).
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::gacc::populateFuseLinearCrossEntropyPatterns(
    RewritePatternSet &patterns, int64_t minLogitsBytes) {
  patterns.add<FuseHeadIntoCrossEntropy>(patterns.getContext(),
                                         minLogitsBytes);
}
