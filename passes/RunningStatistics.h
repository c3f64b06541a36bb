//===- RunningStatistics.h - running statistics in the step -----*- C++ -*-===//
//
// How gacc-expand-accumulation moves the running statistics of a training
// step's batch-normalization ops (gacc.batch_norm's `batch_statistics`):
// the values its micro-batch loop carries for them, their update per
// micro-batch, and what the optimizer step writes back.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_RUNNINGSTATISTICS_H
#define GACC_PASSES_RUNNINGSTATISTICS_H

#include "passes/StepSignature.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::gacc {

/// The batch_norm ops of one step and their loop-carried values:
/// - `per_micro_batch`: the running mean and variance themselves, moved
///   after each micro-batch (torch's order);
/// - `per_window`: the window's count (f32), mean and M2 [C] so far,
///   combined per micro-batch with Chan, Golub and LeVeque's formula, and
///   folded into the running statistics once, after the loop.
class RunningStatistics {
public:
  RunningStatistics(TrainStepOp step, const StepSignature &sig);

  bool hasPerWindow() const;

  /// The carried values at the start of the loop: the current statistics
  /// (`statistics`, one per sig.statisticNames) and empty windows.
  SmallVector<Value> initial(OpBuilder &b, Location loc,
                             ValueRange statistics) const;
  /// After micro-batch `mapping` (the body's clone): the next carried values.
  SmallVector<Value> update(OpBuilder &b, Location loc,
                            const IRMapping &mapping, ValueRange carried) const;
  /// After the loop: the statistics to write back (one per
  /// sig.statisticNames), from the loop's carried results.
  SmallVector<Value> finish(OpBuilder &b, Location loc,
                            ValueRange carried) const;

private:
  struct Entry {
    Operation *op;      // the body's batch_norm (in the forward)
    double momentum;
    unsigned mean, var; // indices into the statistics
    bool perWindow;
    unsigned carried;   // first carried value of the op
  };
  SmallVector<Entry> ops;
  unsigned numStatistics;
};

} // namespace mlir::gacc

#endif // GACC_PASSES_RUNNINGSTATISTICS_H
