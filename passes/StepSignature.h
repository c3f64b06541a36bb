//===- StepSignature.h - the ABI of a compiled training step ----*- C++ -*-===//
//
// A gacc.train_step's calling convention (abi/StepABI.h's StepLayout) with
// the MLIR types and facts the compiler and gacc-run read from the model:
// parameter names, types and initializers, input types, the loss's
// prediction, targets and padding value, and the index bounds of integer
// inputs.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_STEPSIGNATURE_H
#define GACC_PASSES_STEPSIGNATURE_H

#include "abi/StepABI.h"
#include "dialect/GAccDialect.h"

#include <string>

namespace mlir::gacc {

/// The argument indices and result count come from ::gacc::abi::StepLayout;
/// see there for the order.
struct StepSignature : public ::gacc::abi::StepLayout {
  std::string name;
  int64_t accumSteps = 0, microBatch = 0;
  /// Samples per window (per rank): N · m, or less when the last
  /// micro-batch is ragged ((N - 1) · m < E ≤ N · m).
  int64_t effectiveBatch = 0;
  llvm::SmallVector<std::string> paramNames;
  llvm::SmallVector<RankedTensorType> paramTypes;
  /// Each parameter's initializer (an InitializerAttrInterface attribute).
  llvm::SmallVector<Attribute> paramInits;
  /// Parameters in the group without weight decay.
  llvm::SmallVector<bool> paramNoWeightDecay;
  /// The parameter index of each trainable parameter k (in order): the
  /// frozen ones have no accumulator and no optimizer state.
  llvm::SmallVector<unsigned> trainable;
  /// The running statistics (gacc.statistic) the body's ops keep, in the
  /// order the body first names them.
  llvm::SmallVector<std::string> statisticNames;
  llvm::SmallVector<RankedTensorType> statisticTypes;
  llvm::SmallVector<Attribute> statisticInits;
  /// Per statistic: whether it is a variance, whose values are never
  /// negative (BatchStatisticsOpInterface::getNonNegativeRunningStatistics).
  llvm::SmallVector<bool> statisticNonNegative;
  /// The first op whose statistics take one value per sample (a
  /// batch_norm over [m, C]), "'gacc.batch_norm' at LOC", or "" when none:
  /// a micro-batch of one real sample has no variance for it.
  std::string oneValuePerSampleStatistics;
  /// Whether `samples` real samples, in micro-batches of `microBatch`, end
  /// with a micro-batch of one sample that oneValuePerSampleStatistics has
  /// no variance for (torch raises "Expected more than 1 value per
  /// channel when training"). The one rule training and
  /// --check-equivalence refuse windows by.
  bool endsWithSingleSample(int64_t samples) const {
    return !oneValuePerSampleStatistics.empty() && samples % microBatch == 1;
  }
  /// One micro-batch's inputs (leading dimension m).
  llvm::SmallVector<RankedTensorType> inputTypes;
  /// The predict function's output type ([m, ...] model output).
  RankedTensorType predictionType;
  /// Whether the prediction holds class logits over its last dimension.
  bool predictsClassLogits = false;
  /// Index of the loss targets among the inputs (not read by predict).
  unsigned targetInput = 0;
  /// The target value that counts for nothing (the loss's ignore_index):
  /// padding rows of a short window hold it.
  int64_t paddingTarget = -100;
  /// Per input: the exclusive upper bound of its integer values (classes
  /// for class targets, table rows for lookup indices and for the indices
  /// of a gather in a linalg payload), or 0 when unbounded.
  llvm::SmallVector<int64_t> indexBound;
  /// The decay of the weights' moving average (with `ema`).
  double emaDecay = 0;
  /// The body's compute type: f32, bf16 or f16.
  mlir::gacc::Precision precision = mlir::gacc::Precision::fp32;
  /// How the window's summed loss is normalized (the step's kCount result
  /// counts samples for `mean`, target elements for `token_mean`, and is 1
  /// for `sum`).
  mlir::gacc::Normalization normalization = mlir::gacc::Normalization::mean;

  /// The largest normalization count a window of this step can have over
  /// `ranks` ranks: 1 for `sum`, N · m · ranks samples for `mean`, N · a
  /// micro-batch's target elements · ranks for `token_mean`.
  double largestWindowCount(int64_t ranks) const;

  /// Memref type of window input j: [N] + micro-batch input shape.
  MemRefType windowInputType(unsigned j) const;
  std::string predictName() const { return ::gacc::abi::predictName(name); }
  std::string accumulateName() const {
    return ::gacc::abi::accumulateName(name);
  }
  std::string updateName() const { return ::gacc::abi::updateName(name); }
};

/// Reads the signature of a (verified) training step. Fails with a
/// diagnostic on the op when a running statistic it names is not a
/// gacc.statistic, the yielded loss is not produced by an op
/// implementing LossOpInterface, its targets are not an input of the body,
/// the optimizer is unknown, or a table read (a TableLookupOpInterface op,
/// a tensor.extract in a linalg payload) takes indices that are computed
/// (unless integer range analysis proves them inside the table: a clamp, a
/// loop's linalg.index), the loss targets, a constant outside the table,
/// or a loop's index where the loop runs past the table.
FailureOr<StepSignature> getStepSignature(TrainStepOp op);

} // namespace mlir::gacc

#endif // GACC_PASSES_STEPSIGNATURE_H
