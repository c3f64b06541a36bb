//===- PlanMemory.cpp - gacc-plan-memory ----------------------------------===//
//
// Prints the static peak-memory plan (passes/analysis/MemoryPlan.h) of each
// training step of the module for a micro-batch size and target. An
// analysis: the module is not changed.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "passes/analysis/MemoryPlan.h"

#define DEBUG_TYPE "gacc-plan-memory"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCPLANMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct PlanMemoryPass
    : public mlir::gacc::impl::GAccPlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    return checkOptionAtLeast(ctx, getArgument(), "defer-window-bytes",
                              deferWindowBytes, 0);
  }

  /// The pipeline the plan runs on a copy of the module needs its
  /// dialects loaded before any pass runs.
  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildTrainingStepToBuffersPipeline(pm, {}, toBuffersOptions());
    pm.getDependentDialects(registry);
  }

  /// The to-buffers pipeline's options of this pass's.
  StepToBuffersOptions toBuffersOptions() const {
    StepToBuffersOptions options;
    options.deferWindowBytes = deferWindowBytes;
    options.launchElements = target == "cuda" ? kGpuLaunchElements : 0;
    options.fp32Storage = fp32Storage;
    options.fusedAttention = fusedAttention;
    return options;
  }

  void runOnOperation() override {
    if (target != "cpu" && target != "cuda") {
      getOperation().emitError("gacc-plan-memory: target must be cpu or "
                               "cuda, got '")
          << target << "'";
      return signalPassFailure();
    }
    if (fusedAttention && target != "cuda") {
      getOperation().emitError("gacc-plan-memory: fused-attention plans the "
                               "cuda target's step (cuDNN); give "
                               "target=cuda");
      return signalPassFailure();
    }
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
      FailureOr<MemoryPlan> plan = planTrainingStepMemory(
          getOperation(), step.getSymName(), int64_t(microBatch), target,
          {}, toBuffersOptions());
      if (failed(plan))
        return signalPassFailure();
      printMemoryPlan(*plan, llvm::outs());
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
