//===- SampleIndependence.cpp - ops that mix a micro-batch's samples ------===//
//
// TrainStepOp's check that its forward computes each sample from that
// sample alone, up to the loss: the property that makes N micro-batches of
// m samples the large batch of N · m, and a ragged micro-batch's padding
// count for nothing. The samples' dimension is followed from the inputs
// (their leading dimension) through the ops whose layout is known; an op
// that reduces over it, reads it through anything but one loop dimension,
// or combines two different samples, is an error naming the operand.
// The loss (a LossOpInterface op sums over the samples by definition) and
// the ops that declare batch statistics (BatchStatisticsOpInterface) are
// exempt. An op whose layout is not known ends the trail: the analysis
// never rejects what it cannot see.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Where the samples of the micro-batch lie in the values of a forward:
/// for each tensor the analysis follows, the dimension that indexes them.
class SampleDimensions {
public:
  explicit SampleDimensions(TrainStepOp step) {
    for (BlockArgument input : step.getInputArguments())
      dims[input] = 0;
  }

  /// Follows the samples through `op`; an error at `op` when it mixes them.
  LogicalResult visit(Operation *op);

private:
  std::optional<int64_t> of(Value v) const {
    auto it = dims.find(v);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }
  void set(Value v, int64_t dim) { dims[v] = dim; }

  LogicalResult visitLinalg(linalg::LinalgOp op);
  LogicalResult visitElementwise(Operation *op);
  void visitTensorOp(Operation *op, int64_t dim);

  /// An error at `op`: `what` it does to the samples, then why that breaks
  /// the step.
  static LogicalResult mixes(Operation *op, const Twine &what) {
    return op->emitOpError(what)
           << ": the step would depend on how the effective batch is split "
              "into micro-batches (an accumulated step would not equal the "
              "large batch) and on a ragged micro-batch's padding samples; "
              "only the loss sums over the samples (a gacc loss op), and an "
              "op with batch statistics declares them (gacc.batch_norm's "
              "batch_statistics)";
  }

  llvm::DenseMap<Value, int64_t> dims;
};

LogicalResult SampleDimensions::visit(Operation *op) {
  // The operands that carry samples, with the dimension that indexes them.
  SmallVector<std::pair<unsigned, int64_t>> carried;
  for (OpOperand &operand : op->getOpOperands())
    if (std::optional<int64_t> dim = of(operand.get()))
      carried.push_back({operand.getOperandNumber(), *dim});
  if (carried.empty() || isa<LossOpInterface>(op))
    return success();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return visitLinalg(linalgOp);
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    if (int64_t(softmax.getDimension()) == carried.front().second)
      return mixes(op, "normalizes over the samples of the micro-batch "
                       "(dimension " +
                           Twine(softmax.getDimension()) + " of its input)");
    set(softmax.getResult()[0], carried.front().second);
    return success();
  }
  if (op->hasTrait<OpTrait::Elementwise>())
    return visitElementwise(op);
  // The layer ops take the samples in their leading dimension and keep
  // them there (an op with batch statistics mixes them as it declares).
  if (isa_and_nonnull<GAccDialect>(op->getDialect())) {
    if (llvm::any_of(carried, [](auto c) { return c.second != 0; }))
      return success(); // a layout the analysis does not follow
    for (Value r : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(r.getType()); t && t.getRank())
        set(r, 0);
    return success();
  }
  if (carried.size() == 1 && carried.front().first == 0)
    visitTensorOp(op, carried.front().second);
  return success();
}

/// A structured op reads each operand through its indexing map: the
/// samples' dimension of every operand that carries them must be the same
/// loop dimension, a parallel one, which then indexes the samples of each
/// result where its map has it.
LogicalResult SampleDimensions::visitLinalg(linalg::LinalgOp op) {
  std::optional<unsigned> loop;
  unsigned first = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<int64_t> dim = of(operand.get());
    if (!dim)
      continue;
    AffineExpr expr = op.getMatchingIndexingMap(&operand).getResult(*dim);
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d) {
      std::string text;
      llvm::raw_string_ostream os(text);
      expr.print(os);
      return mixes(op, "reads the samples of the micro-batch (dimension " +
                           Twine(*dim) + " of operand #" +
                           Twine(operand.getOperandNumber()) + ") at " + text +
                           ", not at one loop index");
    }
    if (loop && *loop != d.getPosition())
      return mixes(op, "combines different samples of the micro-batch "
                       "(operand #" +
                           Twine(first) + " and operand #" +
                           Twine(operand.getOperandNumber()) +
                           " index them by different loops)");
    loop = d.getPosition();
    first = operand.getOperandNumber();
  }
  if (op.getIteratorTypesArray()[*loop] == utils::IteratorType::reduction)
    return mixes(op, "reduces over the samples of the micro-batch (dimension " +
                         Twine(*of(op->getOperand(first))) + " of operand #" +
                         Twine(first) + ")");
  AffineExpr sampleLoop = getAffineDimExpr(*loop, op.getContext());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!isa<RankedTensorType>(init.get().getType()))
      continue;
    ArrayRef<AffineExpr> results =
        op.getMatchingIndexingMap(&init).getResults();
    const AffineExpr *at = llvm::find(results, sampleLoop);
    if (at != results.end())
      set(op.getTiedOpResult(&init), at - results.begin());
  }
  return success();
}

/// An elementwise op combines the same element of each operand: their
/// samples must lie in the same dimension.
LogicalResult SampleDimensions::visitElementwise(Operation *op) {
  std::optional<std::pair<unsigned, int64_t>> seen;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<int64_t> dim = of(operand.get());
    if (!dim)
      continue;
    if (seen && seen->second != *dim)
      return mixes(op, "combines different samples of the micro-batch "
                       "(operand #" +
                           Twine(seen->first) + " holds them in dimension " +
                           Twine(seen->second) + ", operand #" +
                           Twine(operand.getOperandNumber()) + " in " +
                           Twine(*dim) + ")");
    seen = {operand.getOperandNumber(), *dim};
  }
  for (Value r : op->getResults())
    if (isa<RankedTensorType>(r.getType()))
      set(r, seen->second);
  return success();
}

/// The tensor ops that move whole samples: a cast, a slice that keeps every
/// sample, a pad or concatenation along another dimension, a reshape whose
/// group starts with the samples' dimension (m · S rows of m samples in
/// order stay those samples).
void SampleDimensions::visitTensorOp(Operation *op, int64_t dim) {
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return set(cast.getResult(), dim);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (auto [group, indices] :
         llvm::enumerate(collapse.getReassociationIndices()))
      if (indices.front() == dim)
        set(collapse.getResult(), group);
    return;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return set(expand.getResult(),
               expand.getReassociationIndices()[dim].front());
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (!slice.isDynamicOffset(dim) && slice.getStaticOffset(dim) == 0 &&
        !slice.isDynamicSize(dim) &&
        slice.getStaticSize(dim) == slice.getSourceType().getDimSize(dim) &&
        !slice.isDynamicStride(dim) && slice.getStaticStride(dim) == 1) {
      llvm::SmallBitVector dropped = slice.getDroppedDims();
      int64_t before = 0;
      for (int64_t i = 0; i < dim; ++i)
        before += dropped.test(i);
      if (!dropped.test(dim))
        set(slice.getResult(), dim - before);
    }
    return;
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (pad.getStaticLow()[dim] == 0 && pad.getStaticHigh()[dim] == 0)
      set(pad.getResult(), dim);
    return;
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    if (int64_t(concat.getDim()) != dim)
      set(concat.getResult(), dim);
}

} // namespace

LogicalResult mlir::gacc::verifySampleIndependence(TrainStepOp step) {
  SampleDimensions samples(step);
  for (Operation &op : step.getBodyBlock().without_terminator()) {
    if (isa<BackwardBeginOp>(op))
      break;
    if (failed(samples.visit(&op)))
      return failure();
  }
  return success();
}
