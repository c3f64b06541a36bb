//===- MaskBatchStatistics.cpp - gacc-mask-batch-statistics ---------------===//
//
// Restricts the batch statistics of each training step's ops (those
// implementing BatchStatisticsOpInterface) to the samples that count: the
// padding rows of a ragged micro-batch, whose targets are the loss's
// padding value, would otherwise move every sample's normalization.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/StepSignature.h"

#include "dialect/LinalgBuilders.h"

#define DEBUG_TYPE "gacc-mask-batch-statistics"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMASKBATCHSTATISTICSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct MaskBatchStatisticsPass
    : public mlir::gacc::impl::GAccMaskBatchStatisticsPassBase<
          MaskBatchStatisticsPass> {
  void runOnOperation() override {
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
      SmallVector<BatchStatisticsOpInterface> unmasked;
      step.getBody().walk([&](BatchStatisticsOpInterface op) {
        if (!op.getSampleMask())
          unmasked.push_back(op);
      });
      if (unmasked.empty())
        continue;
      FailureOr<StepSignature> sig = getStepSignature(step);
      if (failed(sig))
        return signalPassFailure();
      // Statistics over samples: dimension 0 must be the micro-batch.
      for (BatchStatisticsOpInterface op : unmasked) {
        auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
        if (!type || type.getRank() == 0 ||
            type.getDimSize(0) != sig->microBatch) {
          op->emitOpError("computes statistics over the samples of the "
                          "micro-batch, so its input's dimension 0 must be "
                          "the micro-batch size ")
              << sig->microBatch << ", got " << op->getOperand(0).getType();
          return signalPassFailure();
        }
      }
      // One mask per step, from the targets, where the body begins.
      Block &body = step.getBodyBlock();
      OpBuilder b = OpBuilder::atBlockBegin(&body);
      Value mask = buildSampleMask(
          b, step.getLoc(), step.getInputArguments()[sig->targetInput],
          sig->paddingTarget);
      for (BatchStatisticsOpInterface op : unmasked)
        op.setSampleMask(mask);
    }
  }
};

} // namespace
