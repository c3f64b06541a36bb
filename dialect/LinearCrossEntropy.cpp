//===- LinearCrossEntropy.cpp - gacc.linear_cross_entropy, blockwise ------===//
//
// gacc.linear_cross_entropy: a classifier head (x·Wᵀ + b) and its softmax
// cross-entropy over blocks of rows, so that no [rows, classes] logits
// tensor exists (after Liger Kernel's fused linear cross-entropy, Hsu et
// al. 2024, and Wijmans et al. 2024, "Cut your losses in large-vocabulary
// language models"). Its verifier, LossOpInterface, decomposition and
// hand-written adjoint, which computes each block's logits again from the
// input and the weight instead of keeping them from the forward.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gacc;

//===----------------------------------------------------------------------===//
// Verifier, types, LossOpInterface
//===----------------------------------------------------------------------===//

LogicalResult LinearCrossEntropyOp::verify() {
  auto x = getInput().getType();
  auto w = getWeight().getType();
  auto y = getLabels().getType();
  if (x.getRank() != 2 && x.getRank() != 3)
    return emitOpError("input must be rank 2 [batch, in_features] or 3 "
                       "[batch, sequence, in_features], got ")
           << x;
  if (w.getRank() != 2)
    return emitOpError("weight must be rank 2 [classes, in_features], got ")
           << w;
  if (x.getShape().back() != w.getDimSize(1))
    return emitOpError("input has ")
           << x.getShape().back() << " features but weight expects "
           << w.getDimSize(1) << " (weight layout is [classes, in])";
  if (llvm::is_contained(x.getShape(), 0) || w.getDimSize(0) == 0)
    return emitOpError("needs at least one row, feature and class, got "
                       "input ")
           << x << " and weight " << w;
  if (getBias()) {
    auto b = getBias().getType();
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return emitOpError("bias must be [") << w.getDimSize(0) << "], got "
                                           << b;
  }
  if (y.getShape() != x.getShape().drop_back())
    return emitOpError("labels must have the input's shape without the "
                       "feature dimension, got ")
           << y << " for input " << x;
  if (failed(verifyIgnoreIndex(*this, getIgnoreIndex(), y)))
    return failure();
  int64_t rows = y.getNumElements();
  if (auto block = getRowBlock();
      block &&
      llvm::divideCeilSigned(rows, std::min<int64_t>(rows, int64_t(*block))) >
          kMaxRowBlocks)
    return emitOpError("row_block ")
           << *block << " cuts the " << rows << " rows into "
           << llvm::divideCeilSigned(rows, int64_t(*block))
           << " blocks, more than the " << kMaxRowBlocks
           << " one op unrolls; give row_block ≥ "
           << llvm::divideCeilSigned(rows, kMaxRowBlocks);
  double smoothing = getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    return emitOpError("label_smoothing must be in [0, 1], got ")
           << smoothing;
  return success();
}

LogicalResult LinearCrossEntropyOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location>, ValueRange, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferred) {
  inferred.push_back(RankedTensorType::get({}, Float32Type::get(ctx)));
  return success();
}

RankedTensorType LinearCrossEntropyOp::getPredictionType() {
  SmallVector<int64_t> shape(getInput().getType().getShape());
  shape.back() = getWeight().getType().getDimSize(0);
  return RankedTensorType::get(shape, getInput().getType().getElementType());
}

Value LinearCrossEntropyOp::buildPrediction(OpBuilder &b,
                                            ValueRange operands) {
  Adaptor adaptor(operands, *this);
  return LinearOp::create(b, getLoc(), getPredictionType(),
                          adaptor.getInput(), adaptor.getWeight(),
                          adaptor.getBias());
}

Value LinearCrossEntropyOp::getTargets() { return getLabels(); }

Value LinearCrossEntropyOp::buildNormalizationCount(OpBuilder &b,
                                                    bool perToken) {
  return buildNonIgnoredCount(b, getLoc(), getLabels(), getIgnoreIndex(),
                              perToken);
}

int64_t LinearCrossEntropyOp::getPaddingTarget() { return getIgnoreIndex(); }

bool LinearCrossEntropyOp::predictsClassLogits() { return true; }

int64_t LinearCrossEntropyOp::getRowBlockOrDefault() {
  int64_t rows = getLabels().getType().getNumElements();
  if (!getRowBlock())
    return std::max(
        getRowsPerBlock(rows, getWeight().getType().getDimSize(0)),
        std::min<int64_t>(std::max<int64_t>(rows, 1),
                          llvm::divideCeilSigned(rows, kMaxRowBlocks)));
  return std::clamp<int64_t>(*getRowBlock(), 1, std::max<int64_t>(rows, 1));
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

namespace {

/// The operands as matrices: input rows [R, K], labels [R], weight [C, K],
/// bias [C] or null.
struct HeadOperands {
  Value x, labels, weight, bias;
};

/// One block's logits x[row0, row0 + rows)·Wᵀ (+ bias), its labels and
/// its cross-entropy statistics.
struct HeadBlock {
  Value x, labels, logits;
  CrossEntropyStats stats;
};

HeadBlock buildHeadBlock(OpBuilder &b, Location loc, const HeadOperands &h,
                         int64_t row0, int64_t rows, double smoothing) {
  HeadBlock blk;
  blk.x = buildSliceAlong(b, loc, h.x, 0, row0, rows);
  blk.labels = buildSliceAlong(b, loc, h.labels, 0, row0, rows);
  blk.logits = buildMatmul(b, loc, blk.x, h.weight, /*transposeA=*/false,
                           /*transposeB=*/true);
  if (h.bias)
    blk.logits = buildAddBias(b, loc, blk.logits, h.bias);
  blk.stats = buildCrossEntropyStats(b, loc, blk.logits, blk.labels,
                                     smoothing);
  return blk;
}

} // namespace

FailureOr<SmallVector<Value>>
LinearCrossEntropyOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  HeadOperands h{buildCollapseToMatrix(b, loc, getInput()),
                 buildFlatten(b, loc, getLabels()), getWeight(), getBias()};
  double smoothing = getLabelSmoothing().convertToDouble();
  int64_t rows = cast<RankedTensorType>(h.labels.getType()).getDimSize(0);
  // The blocks' sums chained in f64, in row order: the unblocked sum.
  Value sum;
  forEachRowBlock(rows, getRowBlockOrDefault(), [&](int64_t row0, int64_t n) {
    HeadBlock blk = buildHeadBlock(b, loc, h, row0, n, smoothing);
    sum = buildCrossEntropySumF64(b, loc, blk.stats, blk.labels,
                                  getIgnoreIndex(), sum);
  });
  return SmallVector<Value>{
      buildConvertElements(b, loc, sum, b.getF32Type())};
}

LogicalResult
LinearCrossEntropyOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                   ArrayRef<bool> needed,
                                   SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  Value dLoss = resultAdjoints[0];
  unsigned inputIdx = getInputMutable().getOperandNumber(),
           weightIdx = getWeightMutable().getOperandNumber();
  std::optional<unsigned> biasIdx;
  if (getBias())
    biasIdx = getBiasMutable()[0].getOperandNumber();
  bool needInput = needed[inputIdx], needWeight = needed[weightIdx],
       needBias = biasIdx && needed[*biasIdx];
  if (!dLoss || !(needInput || needWeight || needBias))
    return success();
  Location loc = getLoc();
  // The input, weight and bias through recompute_inputs: the blocks built
  // here are the backward's own (CSE cannot merge them into the forward's,
  // which die there).
  SmallVector<Value, 3> inputs = {getInput(), getWeight()};
  if (getBias())
    inputs.push_back(getBias());
  auto kept = RecomputeInputsOp::create(b, loc, inputs);
  HeadOperands h{buildCollapseToMatrix(b, loc, kept.getResult(0)),
                 buildFlatten(b, loc, getLabels()), kept.getResult(1),
                 getBias() ? kept.getResult(2) : Value()};
  double smoothing = getLabelSmoothing().convertToDouble();
  auto xType = cast<RankedTensorType>(h.x.getType());
  RowsWriter dx(xType, 0);
  Value dW, dBias;
  forEachRowBlock(xType.getDimSize(0), getRowBlockOrDefault(),
               [&](int64_t row0, int64_t n) {
    HeadBlock blk = buildHeadBlock(b, loc, h, row0, n, smoothing);
    Value dz = buildCrossEntropyGrad(b, loc, blk.logits, blk.labels,
                                     blk.stats, dLoss, getIgnoreIndex(),
                                     smoothing);
    // d input[rows] = dz·W, dW += dzᵀ·x[rows], d bias += Σ_rows dz.
    if (needInput)
      dx.write(b, loc,
               buildMatmul(b, loc, dz, h.weight, /*transposeA=*/false,
                           /*transposeB=*/false),
               row0);
    if (needWeight)
      dW = buildMatmul(b, loc, dz, blk.x, /*transposeA=*/true,
                       /*transposeB=*/false, dW);
    if (needBias)
      dBias = buildSumRowsF64(b, loc, dz, dBias);
  });
  if (needInput)
    operandAdjoints[inputIdx] =
        buildExpandFromMatrix(b, loc, dx.get(), getInput().getType());
  if (needWeight)
    operandAdjoints[weightIdx] = dW;
  if (needBias)
    operandAdjoints[*biasIdx] =
        buildConvertElements(b, loc, dBias, b.getF32Type());
  return success();
}
