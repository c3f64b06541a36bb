//===- GAccToLinalg.cpp - convert-gacc-to-linalg --------------------------===//
//
// Lowers the gacc layer ops outside any gacc.train_step (after
// gacc-expand-accumulation) to upstream linalg, tensor, arith and math ops:
// one pattern that replaces an aggregated op (linalg::AggregatedOpInterface:
// the gacc layer ops, and upstream's linalg.softmax, which no loop lowering
// takes) by its decomposition, applied with a ConversionTarget on which
// every aggregated op is illegal.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "convert-gacc-to-linalg"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Whether `op` is an aggregated op to lower here: outside a training step
/// (inside, it is model-level IR).
bool isAggregatedOpToLower(Operation *op) {
  return isa<linalg::AggregatedOpInterface>(op) &&
         !op->getParentOfType<TrainStepOp>();
}

/// An aggregated op replaced by its decomposition.
struct DecomposeLayerOp
    : public OpInterfaceConversionPattern<linalg::AggregatedOpInterface> {
  DecomposeLayerOp(MLIRContext *ctx)
      : OpInterfaceConversionPattern(ctx) {
    // A decomposition may hold aggregated ops of its own (gacc.softmax and
    // gacc.attention build linalg.softmax), decomposed in turn; each level
    // is strictly lower, so the recursion ends.
    setHasBoundedRewriteRecursion();
  }
  LogicalResult
  matchAndRewrite(linalg::AggregatedOpInterface op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isAggregatedOpToLower(op))
      return rewriter.notifyMatchFailure(op, "inside a training step");
    FailureOr<SmallVector<Value>> replacements =
        op.decomposeOperation(rewriter);
    if (failed(replacements))
      return rewriter.notifyMatchFailure(op, "decomposition failed");
    rewriter.replaceOp(op, *replacements);
    return success();
  }
};

struct ConvertGAccToLinalgPass
    : public mlir::gacc::impl::ConvertGAccToLinalgPassBase<
          ConvertGAccToLinalgPass> {
  void runOnOperation() override {
    // A step's body is lowered once gacc-expand-accumulation has built its
    // functions: said, so that running this pass first is not a silent
    // no-op.
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>())
      step.emitWarning() << "gacc.train_step @" << step.getSymName()
                         << " is left as it is: convert-gacc-to-linalg "
                            "lowers the functions gacc-expand-accumulation "
                            "builds from a step (run gacc-autodiff and "
                            "gacc-expand-accumulation first)";
    // A random op draws its mask from a key that gacc-expand-accumulation
    // binds: without one there is nothing to lower it to.
    WalkResult unkeyed = getOperation()->walk([](RandomOpInterface op) {
      if (!isAggregatedOpToLower(op) || op.hasRandomKey())
        return WalkResult::advance();
      op->emitOpError("has no random key to draw its mask from; "
                      "gacc-expand-accumulation binds one in every "
                      "micro-batch");
      return WalkResult::interrupt();
    });
    if (unkeyed.wasInterrupted())
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !isAggregatedOpToLower(op); });
    RewritePatternSet patterns(ctx);
    populateGAccToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateGAccToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeLayerOp>(patterns.getContext());
}
