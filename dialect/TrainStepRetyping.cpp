//===- TrainStepRetyping.cpp - a body re-typed for another micro-batch ----===//
//
// TrainStepOp::setSchedule: the step specialized for N micro-batches of m
// samples again. The inputs' leading dimension becomes m and every op is
// re-typed in order from its operands: ops that infer their types (the layer
// ops), elementwise ops (a splat constant or fill operand made at the new
// shape), linalg ops (their loop sizes from their inputs, their inits remade at
// the new shape), linalg.softmax, and the tensor reshapes, slices, pads,
// concatenations and casts. An op that cannot follow (a partial slice of the
// batch, a non-splat constant used as an init, an op of another kind) is an
// error naming it.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

class MicroBatchRetyper {
public:
  MicroBatchRetyper(TrainStepOp step, int64_t m)
      : step(step), rewriter(step.getContext()), m(m),
        oldM(step.getMicroBatchAttr().getInt()) {}

  LogicalResult run() {
    if (m == oldM)
      return success();
    // Every value's type before anything changes: the ops whose attributes
    // must follow their operands (slices, expansions) compare with it.
    for (BlockArgument arg : step.getBodyBlock().getArguments())
      if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
        previous[arg] = t;
    for (Operation &op : step.getBodyBlock())
      for (Value r : op.getResults())
        if (auto t = dyn_cast<RankedTensorType>(r.getType()))
          previous[r] = t;
    for (BlockArgument arg : step.getInputArguments()) {
      auto rt = cast<RankedTensorType>(arg.getType());
      if (rt.getDimSize(0) == m)
        continue;
      SmallVector<int64_t> shape = llvm::to_vector(rt.getShape());
      shape.front() = m;
      arg.setType(rt.clone(shape));
      changed.insert(arg);
    }
    SmallVector<Operation *> ops;
    for (Operation &op : step.getBodyBlock().without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (failed(retype(op)))
        return failure();
    return success();
  }

private:
  bool operandsChanged(Operation *op) {
    return llvm::any_of(op->getOperands(),
                        [&](Value v) { return changed.contains(v); });
  }

  /// Sets the result types of `op`, noting those that changed.
  void setResultTypes(Operation *op, TypeRange types) {
    for (auto [r, t] : llvm::zip(op->getResults(), types))
      if (r.getType() != t) {
        r.setType(t);
        changed.insert(r);
      }
  }

  /// Replaces `op` by `replacement` (same results, new types), which keeps
  /// the types `op`'s results had before.
  void replace(Operation *op, Operation *replacement) {
    for (auto [old, r] :
         llvm::zip(op->getResults(), replacement->getResults())) {
      changed.insert(r);
      previous[r] = previous.lookup(old);
    }
    rewriter.replaceOp(op, replacement->getResults());
  }

  LogicalResult cannot(Operation *op, const Twine &why) {
    return op->emitOpError("cannot be re-typed for micro-batch size ")
           << m << ": " << why;
  }

  /// `v` made again at `type` before `user`, where its value does not
  /// depend on its shape: a new tensor.empty, linalg.fill or splat constant
  /// (each element the same value); null otherwise.
  Value remadeAt(Value v, RankedTensorType type, Operation *user) {
    if (v.getType() == type)
      return v;
    Operation *def = v.getDefiningOp();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(user);
    if (isa_and_nonnull<tensor::EmptyOp>(def))
      return tensor::EmptyOp::create(rewriter, def->getLoc(), type.getShape(),
                                     type.getElementType())
          .getResult();
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(def)) {
      Value inner = remadeAt(fill.getOutputs()[0], type, fill.getOperation());
      if (!inner)
        return nullptr;
      return linalg::FillOp::create(rewriter, fill.getLoc(),
                                    fill.getInputs()[0], inner)
          .getResult(0);
    }
    if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def))
      if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
          dense && dense.isSplat())
        return arith::ConstantOp::create(rewriter, cst.getLoc(), type,
                                         dense.resizeSplat(type))
            .getResult();
    return nullptr;
  }

  /// A value of `type` to use as an init of `user` in place of `init`
  /// (remadeAt); an error at `user` where it cannot be made.
  FailureOr<Value> initOfType(Value init, RankedTensorType type,
                              Operation *user) {
    if (Value remade = remadeAt(init, type, user))
      return remade;
    return cannot(user, "its init is not an empty tensor, a fill or a splat "
                        "constant that could be made at the new shape");
  }

  /// Loop sizes from the inputs, inits remade at the shapes their maps
  /// give, results typed like the inits. A loop no input sizes (a
  /// broadcast, a fill) that indexes an init's leading dimension of the old
  /// micro-batch size is the micro-batch.
  LogicalResult retypeLinalg(linalg::LinalgOp op) {
    SmallVector<int64_t> loops(op.getNumLoops(), ShapedType::kDynamic);
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(in->get().getType());
      if (!type)
        continue;
      for (auto [i, e] :
           llvm::enumerate(op.getMatchingIndexingMap(in).getResults())) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (!d)
          continue;
        // An operand of a fixed size (a parameter) on the micro-batch's
        // loop: the loop cannot follow the new micro-batch.
        int64_t &loop = loops[d.getPosition()];
        if (!ShapedType::isDynamic(loop) && loop != type.getDimSize(i))
          return cannot(op, "its operands give loop " + Twine(d.getPosition()) +
                                " the sizes " + Twine(loop) + " and " +
                                Twine(type.getDimSize(i)) + " (operand #" +
                                Twine(in->getOperandNumber()) +
                                " keeps its size; an operand of a fixed size, "
                                "such as a parameter, cannot be indexed by the "
                                "micro-batch's loop)");
        loop = type.getDimSize(i);
      }
    }
    for (OpOperand &init : op.getDpsInitsMutable()) {
      auto type = cast<RankedTensorType>(init.get().getType());
      AffineMap map = op.getMatchingIndexingMap(&init);
      if (type.getRank() > 0 && type.getDimSize(0) == oldM)
        if (auto d = dyn_cast<AffineDimExpr>(map.getResult(0)))
          if (ShapedType::isDynamic(loops[d.getPosition()]))
            loops[d.getPosition()] = m;
    }
    SmallVector<Type> resultTypes;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      auto type = cast<RankedTensorType>(init.get().getType());
      SmallVector<int64_t> shape(type.getShape());
      for (auto [i, e] :
           llvm::enumerate(op.getMatchingIndexingMap(&init).getResults()))
        if (auto d = dyn_cast<AffineDimExpr>(e))
          if (!ShapedType::isDynamic(loops[d.getPosition()]))
            shape[i] = loops[d.getPosition()];
      FailureOr<Value> v = initOfType(init.get(), type.clone(shape), op);
      if (failed(v))
        return failure();
      init.set(*v);
      resultTypes.push_back(v->getType());
    }
    setResultTypes(op, resultTypes);
    return success();
  }

  /// A source dimension that changed, in a slice: the slice must take it
  /// whole (offset 0, the old size, stride 1), and then takes it whole
  /// again.
  FailureOr<SmallVector<int64_t>>
  wholeSizes(Operation *op, RankedTensorType oldType, RankedTensorType newType,
             ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
             ArrayRef<int64_t> strides) {
    SmallVector<int64_t> result(sizes);
    for (int64_t d = 0; d < oldType.getRank(); ++d) {
      if (oldType.getDimSize(d) == newType.getDimSize(d))
        continue;
      if (offsets[d] != 0 || strides[d] != 1 ||
          sizes[d] != oldType.getDimSize(d))
        return cannot(op, "it takes part of the micro-batch dimension");
      result[d] = newType.getDimSize(d);
    }
    return result;
  }

  LogicalResult retypeExtractSlice(tensor::ExtractSliceOp op,
                                   RankedTensorType oldSource) {
    FailureOr<SmallVector<int64_t>> sizes =
        wholeSizes(op, oldSource, op.getSourceType(), op.getStaticOffsets(),
                   op.getStaticSizes(), op.getStaticStrides());
    if (failed(sizes))
      return failure();
    auto dropped = computeRankReductionMask(op.getStaticSizes(),
                                            op.getType().getShape());
    RankedTensorType full =
        tensor::ExtractSliceOp::inferResultType(op.getSourceType(), *sizes);
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < full.getRank(); ++d)
      if (!dropped || !dropped->contains(d))
        shape.push_back(full.getDimSize(d));
    op.setStaticSizes(*sizes);
    setResultTypes(op, {op.getType().clone(shape)});
    return success();
  }

  LogicalResult retypeInsertSlice(tensor::InsertSliceOp op,
                                  RankedTensorType oldSource) {
    // The sizes follow the source; the destination may grow alone.
    SmallVector<int64_t> sizes(op.getStaticSizes());
    auto dropped = computeRankReductionMask(op.getStaticSizes(),
                                            oldSource.getShape());
    int64_t s = 0;
    for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
      if (dropped && dropped->contains(d))
        continue;
      sizes[d] = op.getSourceType().getDimSize(s++);
    }
    op.setStaticSizes(sizes);
    setResultTypes(op, {op.getDestType()});
    return success();
  }

  /// Each group of an expand_shape whose source dimension changed scales
  /// its first result dimension that the ratio keeps whole (the batch is
  /// the outer part of a merged dimension).
  LogicalResult retypeExpandShape(tensor::ExpandShapeOp op,
                                  RankedTensorType oldSource) {
    SmallVector<int64_t> shape(op.getResultType().getShape());
    RankedTensorType source = op.getSrcType();
    for (auto [g, group] : llvm::enumerate(op.getReassociationIndices())) {
      int64_t before = oldSource.getDimSize(g), after = source.getDimSize(g);
      if (before == after)
        continue;
      auto scaled = llvm::find_if(group, [&](int64_t d) {
        return (shape[d] * after) % before == 0;
      });
      if (scaled == group.end())
        return cannot(op, "no dimension of the expanded group follows the "
                          "micro-batch");
      shape[*scaled] = shape[*scaled] * after / before;
    }
    rewriter.setInsertionPoint(op);
    replace(op, tensor::ExpandShapeOp::create(
                    rewriter, op.getLoc(), op.getResultType().clone(shape),
                    op.getSrc(), op.getReassociationIndices()));
    return success();
  }

  LogicalResult retype(Operation *op) {
    bool operands = operandsChanged(op);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return retypeLinalg(linalgOp);
    if (!operands)
      return success();
    if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
      auto type = cast<RankedTensorType>(softmax.getInput().getType());
      FailureOr<Value> init = initOfType(softmax.getOutput(), type, op);
      if (failed(init))
        return failure();
      softmax.getOutputMutable().assign(*init);
      setResultTypes(op, {type});
      return success();
    }
    if (op->hasTrait<OpTrait::Elementwise>()) {
      // The shape of a tensor operand that follows the micro-batch (of the
      // first where none does); another operand (a constant) is remade at
      // it where it is a splat or fill.
      Value follows;
      for (Value v : op->getOperands())
        if (isa<RankedTensorType>(v.getType()) &&
            (!follows || (changed.contains(v) && !changed.contains(follows))))
          follows = v;
      if (!follows)
        return cannot(op, "no tensor operand");
      auto shape = cast<RankedTensorType>(follows.getType()).getShape();
      for (OpOperand &operand : op->getOpOperands()) {
        auto rt = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!rt || rt.getShape() == shape)
          continue;
        Value same = changed.contains(operand.get())
                         ? Value()
                         : remadeAt(operand.get(), rt.clone(shape), op);
        if (!same)
          return cannot(op, "its operands' shapes no longer agree (one follows "
                            "the micro-batch, another does not and is no "
                            "splat constant or fill that could be made at "
                            "the new shape)");
        operand.set(same);
      }
      SmallVector<Type> types;
      for (Type t : op->getResultTypes())
        types.push_back(cast<RankedTensorType>(t).clone(shape));
      setResultTypes(op, types);
      return success();
    }
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      setResultTypes(op, {tensor::CollapseShapeOp::inferCollapsedType(
                             collapse.getSrcType(),
                             collapse.getReassociationIndices())});
      return success();
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      return retypeExpandShape(expand, previous.lookup(expand.getSrc()));
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
      return retypeExtractSlice(slice, previous.lookup(slice.getSource()));
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
      return retypeInsertSlice(insert, previous.lookup(insert.getSource()));
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      setResultTypes(op, {tensor::PadOp::inferResultType(
                             pad.getSourceType(), pad.getStaticLow(),
                             pad.getStaticHigh())});
      return success();
    }
    if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
      setResultTypes(op, {tensor::ConcatOp::inferResultType(
                             concat.getDim(), concat->getOperandTypes())});
      return success();
    }
    if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
      auto source = cast<RankedTensorType>(castOp.getSource().getType());
      auto old = cast<RankedTensorType>(castOp.getType());
      SmallVector<int64_t> shape(source.getShape());
      for (int64_t d = 0; d < int64_t(shape.size()); ++d)
        if (old.isDynamicDim(d))
          shape[d] = ShapedType::kDynamic;
      setResultTypes(op, {old.clone(shape)});
      return success();
    }
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      SmallVector<Type> types;
      if (failed(infer.inferReturnTypes(
              op->getContext(), op->getLoc(), op->getOperands(),
              op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
              op->getRegions(), types)))
        return cannot(op, "its result types cannot be inferred");
      setResultTypes(op, types);
      return success();
    }
    return cannot(op, "gacc does not know how its types follow its "
                      "operands'");
  }

  TrainStepOp step;
  IRRewriter rewriter;
  int64_t m, oldM;
  llvm::DenseSet<Value> changed;
  llvm::DenseMap<Value, RankedTensorType> previous;
};

} // namespace

LogicalResult TrainStepOp::setSchedule(int64_t n, int64_t m, int64_t eff) {
  if (n <= 0 || m <= 0)
    return emitOpError("accumulation steps and micro-batch size must be "
                       "positive, got ")
           << n << " and " << m;
  if (eff > n * m || eff <= (n - 1) * m)
    return emitOpError("an effective batch of ")
           << eff << " does not fit " << n << " micro-batches of " << m;
  if (m != int64_t(getMicroBatch()) &&
      failed(MicroBatchRetyper(*this, m).run()))
    return failure();
  setAccumSteps(n);
  setMicroBatch(m);
  setEffectiveBatch(eff);
  return success();
}
