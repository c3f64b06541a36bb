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
  // y = x · Wᵀ (+ b): W is [out, in] as in torch.nn.Linear; leading
  // dimensions are flattened into matrix rows.
  Location loc = op.getLoc();
  Value x = buildCollapseToMatrix(b, loc, op.getInput());
  Value y = buildMatmul(b, loc, x, op.getWeight(),
                        /*transposeA=*/false, /*transposeB=*/true);
  if (op.getBias())
    y = buildAddBias(b, loc, y, op.getBias());
  return buildExpandFromMatrix(b, loc, y,
                               cast<RankedTensorType>(op.getType()));
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
  Location loc = op.getLoc();
  Value logits = buildCollapseToMatrix(b, loc, op.getLogits());
  Value labels = buildFlatten(b, loc, op.getLabels());
  CrossEntropyStats stats = buildCrossEntropyStats(b, loc, logits, labels);
  return buildCrossEntropySum(b, loc, stats, labels, op.getIgnoreIndex());
}

static Value lower(OpBuilder &b, EmbeddingOp op) {
  return buildEmbedding(b, op.getLoc(), op.getIndices(), op.getWeight());
}

static Value lower(OpBuilder &b, LayerNormOp op) {
  Location loc = op.getLoc();
  Value x = buildCollapseToMatrix(b, loc, op.getInput());
  LayerNormStats stats =
      buildLayerNormStats(b, loc, x, op.getEps().convertToDouble());
  Value y = buildLayerNorm(b, loc, x, stats, op.getWeight(), op.getBias());
  return buildExpandFromMatrix(b, loc, y, op.getInput().getType());
}

static Value lower(OpBuilder &b, GeluOp op) {
  return buildGelu(b, op.getLoc(), op.getInput(),
                   op.getApproximate() == "tanh");
}

struct ConvertGAccToLinalgPass
    : public mlir::gacc::impl::ConvertGAccToLinalgPassBase<ConvertGAccToLinalgPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<LinearOp, ReluOp, CrossEntropyOp, EmbeddingOp, LayerNormOp, GeluOp>(op) &&
          !op->getParentOfType<TrainStepOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      Value v = llvm::TypeSwitch<Operation *, Value>(op)
                    .Case<LinearOp, ReluOp, CrossEntropyOp, EmbeddingOp,
                          LayerNormOp, GeluOp>(
                        [&](auto o) { return lower(rewriter, o); });
      rewriter.replaceOp(op, v);
    }
  }
};

} // namespace
