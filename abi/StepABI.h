//===- StepABI.h - the calling convention of a compiled step ----*- C++ -*-===//
//
// What the compiler (gacc-expand-accumulation) and the runtime (gacc-run)
// both assume about the function a training step compiles to: its argument
// order, its results, the name of its predict function. Plain C++, no MLIR:
// the runtime depends on it without depending on the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ABI_STEPABI_H
#define GACC_ABI_STEPABI_H

#include <string>

namespace gacc::abi {

/// Every memref argument of a compiled function (the step, its resumable
/// and graph forms, the predict function, the arena kernels) is memory of
/// its own: the runtime binds no two arguments of a call to overlapping
/// memory (gacc-run's mirror blocks, arena slices and host tensors).
/// gacc-linalg-to-parallel-loops relies on it (`distinct-arguments`) to
/// fuse kernels that read one argument and write another.
constexpr bool kDistinctArguments = true;

/// Arguments of `func.func @S`, in order:
///   parameters [P] (trainable and frozen, in the step's order),
///   accumulators [T] (one per trainable parameter, in order; k indexes
///   the trainable parameters below), optimizer state [T × S] (state s of
///   trainable parameter k at P + T + k·S + s; with an exponential moving
///   average of the weights, its tensor is each trainable parameter's last
///   state, s = S − 1),
///   running statistics [Q] (gacc.statistic tensors, in the order the body
///   first names them), window inputs [I] (a leading dimension
///   N before each micro-batch input's shape), lr: f32 (the base learning
///   rate), step: i64 (optimizer steps already taken), first_sample: i64
///   (the global index, in the epoch's order, of the window's first sample
///   on this rank: micro-batch i's row r holds sample first_sample + i·m +
///   r; what random ops such as dropout key their draws with), and with
///   loss scaling the loss scale: f32.
/// Arguments of `func.func @S_predict`: parameters [P], running statistics
/// [Q], micro-batch inputs [I] without the loss targets, then the output
/// memref.
/// The resumable form (gacc-expand-accumulation resumable), the step split
/// at micro-batch boundaries for checkpoints in the middle of a window:
///   @S_accumulate(@S's arguments, begin: i64, end: i64, loss_sum: f32,
///   count: f32) -> (loss_sum: f32, count: f32) runs micro-batches
///   [begin, end) of the window into the accumulators (micro-batch 0
///   overwrites them) from the window's sums so far;
///   @S_update(@S's arguments, loss_sum: f32, count: f32) -> @S's results
///   runs what follows the N-th micro-batch (the collective, clipping, the
///   update). accumulate(0, N, 0, 0) then update gives @S's results, bit
///   for bit.
/// The graph form (gacc-lower-to-nvvm-pipeline cuda-graph=true, built by
/// gacc-device-resident-scalars), which a CUDA graph can capture: every
/// public function keeps its arguments in order, but each scalar argument
/// (@S's lr, step, first_sample and loss scale; the arena kernels'
/// weight, first flag, decay end, base rate, step and loss scale) is a
/// rank-0 memref of its type in device memory, which the caller writes
/// before each launch, and
/// a function with results stores them into one trailing memref<R x f32>
/// (@S: numResults() of them, in StepResult order) and returns nothing.
/// Its host code reads no device memory, so it waits only before it
/// returns.
struct StepLayout {
  unsigned numParams = 0, numTrainable = 0, statePerParam = 0,
           numStatistics = 0, numInputs = 0;
  bool lossScaling = false;
  /// An exponential moving average of the weights is kept (ema_decay).
  bool ema = false;

  /// The optimizer's own states per parameter (those before the average).
  unsigned optimizerStates() const { return statePerParam - (ema ? 1 : 0); }
  /// The state index of the moving average (with `ema`).
  unsigned emaState() const { return statePerParam - 1; }
  unsigned paramArg(unsigned i) const { return i; }
  /// The accumulator and state of trainable parameter k.
  unsigned accArg(unsigned k) const { return numParams + k; }
  unsigned stateArg(unsigned k, unsigned s) const {
    return numParams + numTrainable + k * statePerParam + s;
  }
  unsigned statisticArg(unsigned q) const {
    return numParams + numTrainable * (1 + statePerParam) + q;
  }
  unsigned inputArg(unsigned j) const { return statisticArg(numStatistics) + j; }
  unsigned lrArg() const { return inputArg(numInputs); }
  unsigned stepArg() const { return lrArg() + 1; }
  unsigned firstSampleArg() const { return lrArg() + 2; }
  unsigned lossScaleArg() const { return lrArg() + 3; }
  unsigned numArgs() const { return lrArg() + 3 + (lossScaling ? 1 : 0); }
  unsigned numResults() const { return lossScaling ? 5 : 4; }
  /// The resumable functions' arguments after @S's.
  unsigned beginArg() const { return numArgs(); }
  unsigned endArg() const { return numArgs() + 1; }
  unsigned accumulateLossSumArg() const { return numArgs() + 2; }
  unsigned accumulateCountArg() const { return numArgs() + 3; }
  unsigned updateLossSumArg() const { return numArgs(); }
  unsigned updateCountArg() const { return numArgs() + 1; }
};

/// The step's f32 results, in order. kSkipped (1.0 when a window with a
/// non-finite value skipped its update) exists with loss scaling only.
enum StepResult : unsigned {
  kObjective = 0,    // Σ loss / count: the loss whose gradient was applied
  kCount = 1,        // the window's normalization count (0 when it holds
                     // no target; the update divides by at least 1; 1
                     // for `sum`)
  kLearningRate = 2, // the rate the schedule used
  kGradNorm = 3,     // global L2 norm of the normalized gradient, pre-clip
  kSkipped = 4,
};
constexpr unsigned kMaxStepResults = 5;

inline std::string predictName(const std::string &step) {
  return step + "_predict";
}
inline std::string accumulateName(const std::string &step) {
  return step + "_accumulate";
}
inline std::string updateName(const std::string &step) {
  return step + "_update";
}

} // namespace gacc::abi

#endif // GACC_ABI_STEPABI_H
