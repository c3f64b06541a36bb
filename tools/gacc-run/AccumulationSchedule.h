//===- AccumulationSchedule.h - accumulation steps per step -----*- C++ -*-===//
//
// The accumulation schedule of a run (--accum-schedule): how many
// micro-batches each optimizer step accumulates, so that the effective
// batch can ramp up over training (batch-size warmup), and the windows an
// epoch splits into under it.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_ACCUMULATIONSCHEDULE_H
#define GACC_TOOLS_GACCRUN_ACCUMULATIONSCHEDULE_H

#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gaccrt {

/// Accumulation steps N as a step function of the optimizer step: N_k from
/// step s_k (1-based, as progress lines number steps) until the next
/// entry's step. Every window is normalized by its own count; the
/// optimizer, clipping and the learning-rate schedule still run once per
/// optimizer step.
class AccumulationSchedule {
public:
  /// N for every optimizer step.
  static AccumulationSchedule constant(int64_t accumSteps);
  /// Parses "STEP:N,STEP:N,...", e.g. "1:1,11:2,21:4"; an entry that keeps
  /// the N before it is dropped ("1:2,3:2" is "1:2"). Errors (the message
  /// to print): a malformed entry, a first entry not at step 1, steps not
  /// increasing, N < 1.
  static llvm::Expected<AccumulationSchedule> parse(llvm::StringRef text);

  /// N of the optimizer step with 0-based index `index`.
  int64_t accumStepsAt(int64_t index) const;
  int64_t maxAccumSteps() const;
  /// N = `accumSteps` for every step: the same as no schedule.
  bool isConstantAt(int64_t accumSteps) const {
    return entries.size() == 1 && entries.front().second == accumSteps;
  }
  /// "N = 1 from step 1, 2 from step 11, 4 from step 21".
  std::string describe() const;
  /// The canonical "1:1,11:2,21:4" (the run's identity in checkpoints).
  std::string str() const;

private:
  /// (first step, 1-based; N), steps increasing, the first at step 1.
  std::vector<std::pair<int64_t, int64_t>> entries;
};

/// An epoch's windows: window w holds the samples [starts[w], starts[w+1])
/// of the epoch's order.
struct EpochWindows {
  std::vector<int64_t> starts = {0};
  int64_t size() const { return int64_t(starts.size()) - 1; }
};

/// This rank's samples in a window of an optimizer step with N
/// accumulation steps: N micro-batches of m, at most the declared
/// per-rank effective batch (its last micro-batch may be ragged).
inline int64_t rankWindowSamples(int64_t accumSteps, int64_t microBatch,
                                 int64_t perRank) {
  return std::min(accumSteps * microBatch, perRank);
}

/// The windows of an epoch of `samples` samples whose first window is the
/// optimizer step with 0-based index `firstStep`: each holds `ranks` ×
/// rankWindowSamples(N of its step) samples, the last what is left (none
/// with `dropLast` when it is short).
EpochWindows planEpochWindows(const AccumulationSchedule &schedule,
                              int64_t firstStep, int64_t samples,
                              int64_t microBatch, int64_t perRank,
                              int64_t ranks, bool dropLast);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_ACCUMULATIONSCHEDULE_H
