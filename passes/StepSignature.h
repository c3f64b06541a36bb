//===- StepSignature.h - the ABI of a compiled training step ----*- C++ -*-===//
//
// The argument layout of the function that gacc-expand-accumulation builds
// from a gacc.train_step, shared by the pass and by the runtime that calls
// the compiled step, so the two cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_STEPSIGNATURE_H
#define GACC_PASSES_STEPSIGNATURE_H

#include "dialect/GAccDialect.h"

#include <string>

namespace mlir::gacc {

/// Arguments of `func.func @S`, in order:
///   parameters [P], accumulators [P], optimizer state [P × S]
///   (state s of parameter i at 2P + i·S + s), window inputs [I]
///   (a leading dimension N before each micro-batch input's shape),
///   lr: f32 (the base learning rate), step: i64.  Results (f32): the
///   window's objective (Σ loss / count), its normalization count, the
///   learning rate the schedule used, and the global L2 norm of the
///   normalized gradient before clipping.
/// Arguments of `func.func @S_predict`: parameters [P], micro-batch inputs
/// [I] (the loss targets are not read), then the output memref.
struct StepSignature {
  std::string name;
  int64_t accumSteps = 0, microBatch = 0;
  unsigned numParams = 0, statePerParam = 0;
  llvm::SmallVector<std::string> paramNames;
  llvm::SmallVector<RankedTensorType> paramTypes;
  llvm::SmallVector<Attribute> paramInits;
  /// Parameters in the group without weight decay.
  llvm::SmallVector<bool> paramNoWeightDecay;
  /// One micro-batch's inputs (leading dimension m).
  llvm::SmallVector<RankedTensorType> inputTypes;
  /// The predict function's output type ([m, ...] model output).
  RankedTensorType predictionType;
  /// Index of the loss targets among the inputs (not read by predict).
  unsigned targetInput = 0;
  /// The loss's ignore_index (a target value that counts for nothing).
  int64_t ignoreIndex = -100;
  /// Per input: the exclusive upper bound of its integer values (classes
  /// for targets, vocabulary for embedding indices), or 0 when unbounded.
  llvm::SmallVector<int64_t> indexBound;

  unsigned accArg(unsigned i) const { return numParams + i; }
  unsigned stateArg(unsigned i, unsigned s) const {
    return 2 * numParams + i * statePerParam + s;
  }
  unsigned inputArg(unsigned j) const {
    return numParams * (2 + statePerParam) + j;
  }
  unsigned lrArg() const { return inputArg(inputTypes.size()); }
  unsigned stepArg() const { return lrArg() + 1; }
  /// With loss scaling, the loss scale (f32) follows the step index.
  unsigned lossScaleArg() const { return lrArg() + 2; }
  unsigned numArgs() const { return lrArg() + 2 + (lossScaling ? 1 : 0); }
  /// Results: objective, count, lr, norm, and with loss scaling a fifth,
  /// 1.0 when the window held a non-finite value and was skipped.
  static constexpr unsigned kMaxResults = 5;
  unsigned numResults() const { return lossScaling ? 5 : 4; }
  /// The body's compute type: f32, bf16 or f16.
  mlir::gacc::Precision precision = mlir::gacc::Precision::fp32;
  bool lossScaling = false;
  /// Memref type of window input j: [N] + micro-batch input shape.
  MemRefType windowInputType(unsigned j) const;
  std::string predictName() const { return name + "_predict"; }
};

/// Reads the signature of a (verified) training step. Fails with a
/// diagnostic on the op when the body has no loss op implementing
/// LossOpInterface or the optimizer is unknown.
FailureOr<StepSignature> getStepSignature(TrainStepOp op);

} // namespace mlir::gacc

#endif // GACC_PASSES_STEPSIGNATURE_H
