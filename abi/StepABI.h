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

/// Arguments of `func.func @S`, in order:
///   parameters [P], accumulators [P], optimizer state [P × S] (state s of
///   parameter i at 2P + i·S + s), window inputs [I] (a leading dimension
///   N before each micro-batch input's shape), lr: f32 (the base learning
///   rate), step: i64 (optimizer steps already taken), and with loss
///   scaling the loss scale: f32.
/// Arguments of `func.func @S_predict`: parameters [P], micro-batch inputs
/// [I] without the loss targets, then the output memref.
struct StepLayout {
  unsigned numParams = 0, statePerParam = 0, numInputs = 0;
  bool lossScaling = false;

  unsigned paramArg(unsigned i) const { return i; }
  unsigned accArg(unsigned i) const { return numParams + i; }
  unsigned stateArg(unsigned i, unsigned s) const {
    return 2 * numParams + i * statePerParam + s;
  }
  unsigned inputArg(unsigned j) const {
    return numParams * (2 + statePerParam) + j;
  }
  unsigned lrArg() const { return inputArg(numInputs); }
  unsigned stepArg() const { return lrArg() + 1; }
  unsigned lossScaleArg() const { return lrArg() + 2; }
  unsigned numArgs() const { return lrArg() + 2 + (lossScaling ? 1 : 0); }
  unsigned numResults() const { return lossScaling ? 5 : 4; }
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

} // namespace gacc::abi

#endif // GACC_ABI_STEPABI_H
