//===- SetAccumulationSchedule.cpp - gacc-set-accumulation-schedule -------===//
//
// Re-specializes each gacc.train_step for another micro-batch size and
// number of accumulation steps (what gacc-run's --micro-batch and
// --accum-steps do), and marks it data-parallel, so that gacc-opt can
// reproduce the IR gacc-run compiles.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#define DEBUG_TYPE "gacc-set-accumulation-schedule"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCSETACCUMULATIONSCHEDULEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The largest window (N · m samples) a step may hold.
constexpr int64_t kMaxWindowSamples = int64_t(1) << 24;

struct SetAccumulationSchedulePass
    : public mlir::gacc::impl::GAccSetAccumulationSchedulePassBase<
          SetAccumulationSchedulePass> {
  using Base::Base;

  /// The new (N, m) of `step`, or failure after a diagnostic.
  FailureOr<std::pair<int64_t, int64_t>> schedule(TrainStepOp step) {
    int64_t n = step.getAccumStepsAttr().getInt();
    int64_t m = step.getMicroBatchAttr().getInt();
    int64_t eff = step.getEffectiveBatch()
                      ? step.getEffectiveBatchAttr().getInt()
                      : n * m;
    // Either option alone beyond the window limit cannot make a valid step
    // (and would not fit the attributes' signed integers).
    // (An optimizer step holds at least one sample per micro-batch.)
    for (auto [value, what] :
         {std::make_pair(uint64_t(microBatch), "a micro-batch size of "),
          std::make_pair(uint64_t(accumSteps), "accumulation steps ")})
      if (value > uint64_t(kMaxWindowSamples))
        return step.emitOpError(what)
               << value << " would hold more than " << kMaxWindowSamples
               << " samples per optimizer step, the limit";
    int64_t newM = microBatch, newN = accumSteps;
    if (newM > 0 && newN > 0)
      return std::make_pair(newN, newM);
    if (newM > 0) {
      // A ragged last micro-batch: N = ceil(E / m), the window keeps E.
      if (ragged && eff % newM != 0)
        return std::make_pair((eff + newM - 1) / newM, newM);
      if (eff % newM != 0)
        return step.emitOpError("micro-batch size ")
               << newM << " does not divide the effective batch " << eff
               << " (give the number of accumulation steps too to change "
                  "the effective batch)";
      return std::make_pair(eff / newM, newM);
    }
    if (newN > 0) {
      if (eff % newN != 0)
        return step.emitOpError("accumulation steps ")
               << newN << " do not divide the effective batch " << eff;
      return std::make_pair(newN, eff / newN);
    }
    return std::make_pair(n, m);
  }

  void runOnOperation() override {
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
      FailureOr<std::pair<int64_t, int64_t>> nm = schedule(step);
      if (failed(nm))
        return signalPassFailure();
      auto [n, m] = *nm;
      // The adjoints are built for the model's shapes: the schedule is set
      // before gacc-autodiff, which the pipelines do.
      if (step.isDifferentiated() && (n != step.getAccumStepsAttr().getInt() ||
                                      m != step.getMicroBatchAttr().getInt())) {
        step.emitOpError("is already differentiated; "
                         "gacc-set-accumulation-schedule re-types a model, so "
                         "it runs before gacc-autodiff");
        return signalPassFailure();
      }
      int64_t window;
      if (__builtin_mul_overflow(n, m, &window) || window > kMaxWindowSamples) {
        step.emitOpError("an effective batch of ")
            << m << " × " << n
            << " samples (micro-batch × accumulation steps) is larger than "
               "the limit of "
            << kMaxWindowSamples << " samples per optimizer step";
        return signalPassFailure();
      }
      int64_t eff = step.getEffectiveBatch()
                        ? step.getEffectiveBatchAttr().getInt()
                        : n * m;
      // The declared effective batch stays with the model's own schedule,
      // or when the last micro-batch is ragged ((N - 1) · m < E < N · m);
      // otherwise it becomes N · m.
      bool ownSchedule = microBatch == 0 && accumSteps == 0;
      if (!ownSchedule && !(ragged && (n - 1) * m < eff && eff < n * m))
        eff = n * m;
      if (failed(step.setSchedule(n, m, eff)))
        return signalPassFailure();
      if (dataParallel)
        step.setDataParallel(true);
    }
  }
};

} // namespace
