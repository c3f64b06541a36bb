//===- GAccToLinalg.cpp - convert-gacc-to-linalg --------------------------===//
//
// Lowers the gacc layer ops (linear, relu, cross_entropy) that remain after
// gacc-expand-accumulation to upstream linalg, tensor, arith and math ops.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "convert-gacc-to-linalg"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

static Value lower(OpBuilder &b, LinearOp op) {
  // y = x · Wᵀ (+ b): W is [out, in] as in torch.nn.Linear.
  Value y = buildMatmul(b, op.getLoc(), op.getInput(), op.getWeight(),
                        /*transposeA=*/false, /*transposeB=*/true);
  if (op.getBias())
    y = buildAddBias(b, op.getLoc(), y, op.getBias());
  return y;
}

static Value lower(OpBuilder &b, ReluOp op) {
  return buildElementwise(
      b, op.getLoc(), ValueRange{op.getInput()},
      cast<RankedTensorType>(op.getType()),
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0));
        return arith::MaximumFOp::create(nb, nl, args[0], zero);
      });
}

static Value lower(OpBuilder &b, CrossEntropyOp op) {
  CrossEntropyStats stats =
      buildCrossEntropyStats(b, op.getLoc(), op.getLogits(), op.getLabels());
  return buildCrossEntropySum(b, op.getLoc(), stats, op.getLabels(),
                              op.getIgnoreIndex());
}

struct ConvertGAccToLinalgPass
    : public mlir::gacc::impl::ConvertGAccToLinalgPassBase<ConvertGAccToLinalgPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<LinearOp, ReluOp, CrossEntropyOp>(op) &&
          !op->getParentOfType<TrainStepOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      Value v = llvm::TypeSwitch<Operation *, Value>(op)
                    .Case<LinearOp, ReluOp, CrossEntropyOp>(
                        [&](auto o) { return lower(rewriter, o); });
      rewriter.replaceOp(op, v);
    }
  }
};

} // namespace
