//===- MaskBatchStatistics.cpp - gacc-mask-batch-statistics ---------------===//
//
// Restricts the batch statistics of each training step's ops (those
// implementing BatchStatisticsOpInterface) to the samples that count: the
// padding rows of a ragged micro-batch, whose targets are the loss's
// padding value, would otherwise move every sample's normalization (a mask
// the model gives is multiplied by theirs).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#define DEBUG_TYPE "gacc-mask-batch-statistics"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMASKBATCHSTATISTICSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Marks the padding mask this pass builds, so that a second run knows it.
constexpr llvm::StringLiteral kPaddingMask = "gacc.padding_mask";

/// Whether `v` is this pass's padding mask of `targets`: the tagged
/// linalg.generic that buildSampleMask makes from them (compared op for op
/// with one built afresh, so that a model's own mask carrying the tag is
/// not taken for it), its init a fill of 0.
bool isPaddingMask(Value v, Value targets, int64_t paddingTarget) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic->hasAttr(kPaddingMask) ||
      generic.getInputs().size() != 1 || generic.getInputs().front() != targets)
    return false;
  auto fill = generic.getOutputs().front().getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
    return false;
  // Built in a scratch module, which takes the ops (and their uses of the
  // targets) with it when it goes.
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(generic.getLoc());
  OpBuilder b = OpBuilder::atBlockBegin(scratch->getBody());
  auto fresh = buildSampleMask(b, generic.getLoc(), targets, paddingTarget)
                   .getDefiningOp<linalg::GenericOp>();
  return generic.getIndexingMaps() == fresh.getIndexingMaps() &&
         generic.getIteratorTypes() == fresh.getIteratorTypes() &&
         OperationEquivalence::isRegionEquivalentTo(
             &generic.getRegion(), &fresh.getRegion(),
             OperationEquivalence::IgnoreLocations);
}

/// Whether `mask` is the padding mask of `targets` (isPaddingMask), or a
/// product with it.
bool isMaskedForPadding(Value mask, Value targets, int64_t paddingTarget) {
  auto padding = [&](Value v) {
    return isPaddingMask(v, targets, paddingTarget);
  };
  if (padding(mask))
    return true;
  auto product = mask.getDefiningOp<arith::MulFOp>();
  return product && llvm::any_of(product->getOperands(), padding);
}

struct MaskBatchStatisticsPass
    : public mlir::gacc::impl::GAccMaskBatchStatisticsPassBase<
          MaskBatchStatisticsPass> {
  void runOnOperation() override {
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
      SmallVector<BatchStatisticsOpInterface> ops =
          step.getBatchStatisticsOps();
      if (ops.empty())
        continue;
      LossOpInterface loss = step.getLossOp();
      if (!loss) // the verifier reports it
        return signalPassFailure();
      // Statistics over samples: dimension 0 must be the micro-batch.
      int64_t m = step.getMicroBatchAttr().getInt();
      for (BatchStatisticsOpInterface op : ops) {
        auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
        if (!type || type.getRank() == 0 || type.getDimSize(0) != m) {
          op->emitOpError("computes statistics over the samples of the "
                          "micro-batch, so its input's dimension 0 must be "
                          "the micro-batch size ")
              << m << ", got " << op->getOperand(0).getType();
          return signalPassFailure();
        }
      }
      // One mask per step, from the targets, where they are defined; none
      // where every op's mask holds it already (this pass's, on a second
      // run: the pass is idempotent).
      Value targets = loss.getTargets();
      if (llvm::all_of(ops, [&](BatchStatisticsOpInterface op) {
            return op.getSampleMask() &&
                   isMaskedForPadding(op.getSampleMask(), targets,
                                      loss.getPaddingTarget());
          }))
        continue;
      OpBuilder b(step.getContext());
      b.setInsertionPointAfterValue(targets);
      Value mask = buildSampleMask(b, step.getLoc(), targets,
                                   loss.getPaddingTarget());
      mask.getDefiningOp()->setAttr(kPaddingMask, b.getUnitAttr());
      // A mask the model gives (its own choice of samples, a constant or an
      // input, whose padding rows copy a real sample's) is multiplied by
      // the padding mask: a padding row never counts.
      for (BatchStatisticsOpInterface op : ops) {
        Value given = op.getSampleMask();
        if (!given) {
          op.setSampleMask(mask);
          continue;
        }
        if (isMaskedForPadding(given, targets, loss.getPaddingTarget()))
          continue;
        b.setInsertionPoint(op);
        op.setSampleMask(arith::MulFOp::create(b, op->getLoc(), given, mask));
      }
    }
  }
};

} // namespace
