//===- TrainStepRetyping.cpp - a body re-typed for another micro-batch ----===//
//
// TrainStepOp::setSchedule: the step specialized for N micro-batches of m
// samples again. The inputs' leading dimension becomes m and every op whose
// operands follow it is re-typed in order: ops that infer their types (the
// layer ops), elementwise ops, linalg ops (their loop sizes from their
// inputs), linalg.softmax, and the tensor reshapes, slices, inserts, pads,
// concatenations and casts. A value no sample reaches keeps its type; where
// such a value meets the samples (an elementwise operand, a linalg input or
// init, an inserted slice) it is made again at their size if its value
// does not depend on that size: an empty tensor, a fill, a splat constant,
// a linalg op that broadcasts along the dimensions that change. An op that
// cannot follow (a partial slice of the batch, a non-splat constant that
// meets the samples, an op of another kind) is an error naming it.
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
    eraseOrphans();
    return success();
  }

private:
  /// `operand` set to `v` (a value remade at the new shape); the op that
  /// made the old value is erased at the end where nothing else uses it.
  void substitute(OpOperand &operand, Value v) {
    if (operand.get() == v)
      return;
    if (Operation *def = operand.get().getDefiningOp())
      orphans.push_back(def);
    operand.set(v);
  }

  /// Erases the ops whose values were all remade (and the ops that made
  /// their operands, where nothing else uses those).
  void eraseOrphans() {
    while (!orphans.empty()) {
      Operation *op = orphans.pop_back_val();
      if (erased.contains(op) || !op->use_empty() || !isPure(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          orphans.push_back(def);
      erased.insert(op);
      rewriter.eraseOp(op);
    }
  }

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
  /// (each element the same value), or a linalg op that broadcasts along
  /// each dimension that changes (remadeBroadcast); null otherwise.
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
    if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def))
      return remadeBroadcast(linalgOp, cast<OpResult>(v), type);
    return nullptr;
  }

  /// `result` of `op` (a linalg op of one init whose operands keep their
  /// types: a bias or positional table broadcast to the micro-batch) made
  /// again at `type`, where each dimension that changes is a loop no input
  /// reads and the payload does not index (each position along it holds
  /// the same value); null otherwise. Made on demand, for a user that
  /// combines it with the samples: a use that does not keeps the value it
  /// had (a broadcast to 4 rows that is summed stays 4 rows whatever the
  /// micro-batch).
  Value remadeBroadcast(linalg::LinalgOp op, OpResult result,
                        RankedTensorType type) {
    if (op.getNumDpsInits() != 1 || operandsChanged(op))
      return nullptr;
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(init);
    auto old = cast<RankedTensorType>(result.getType());
    if (old.getRank() != type.getRank() || !map.isProjectedPermutation())
      return nullptr;
    for (int64_t i = 0; i < old.getRank(); ++i) {
      if (old.getDimSize(i) == type.getDimSize(i))
        continue;
      unsigned loop = cast<AffineDimExpr>(map.getResult(i)).getPosition();
      bool read = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
        return op.getMatchingIndexingMap(in).isFunctionOfDim(loop);
      });
      bool indexed = op->walk([&](linalg::IndexOp index) {
                         return index.getDim() == loop ? WalkResult::interrupt()
                                                       : WalkResult::advance();
                       }).wasInterrupted();
      if (read || indexed)
        return nullptr;
    }
    Value newInit = remadeAt(init->get(), type, op);
    if (!newInit)
      return nullptr;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Operation *clone = rewriter.clone(*op);
    clone->setOperand(init->getOperandNumber(), newInit);
    clone->getResult(0).setType(type);
    return clone->getResult(0);
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
  /// give, results typed like the inits. A loop no input sizes keeps its
  /// size: a broadcast to the micro-batch follows it where a user combines
  /// it with the samples (remadeBroadcast).
  LogicalResult retypeLinalg(linalg::LinalgOp op) {
    // The inputs that follow the micro-batch size the loops first; another
    // input on a loop they size is remade at it where it broadcasts along
    // it (remadeBroadcast), and is an error otherwise.
    SmallVector<int64_t> loops(op.getNumLoops(), ShapedType::kDynamic);
    for (bool follows : {true, false}) {
      for (OpOperand *in : op.getDpsInputOperands()) {
        auto type = dyn_cast<RankedTensorType>(in->get().getType());
        if (!type || changed.contains(in->get()) != follows)
          continue;
        SmallVector<int64_t> shape(type.getShape());
        // The first loop the input disagrees on, and its size there.
        std::optional<std::pair<unsigned, int64_t>> conflict;
        for (auto [i, e] :
             llvm::enumerate(op.getMatchingIndexingMap(in).getResults())) {
          auto d = dyn_cast<AffineDimExpr>(e);
          if (!d)
            continue;
          int64_t &loop = loops[d.getPosition()];
          if (!ShapedType::isDynamic(loop) && loop != type.getDimSize(i)) {
            if (!conflict)
              conflict = {d.getPosition(), type.getDimSize(i)};
            shape[i] = loop;
            continue;
          }
          loop = type.getDimSize(i);
        }
        if (!conflict)
          continue;
        Value remade =
            follows ? Value() : remadeAt(in->get(), type.clone(shape), op);
        auto [loop, size] = *conflict;
        if (!remade)
          return cannot(op, "its operands give loop " + Twine(loop) +
                                " the sizes " + Twine(loops[loop]) + " and " +
                                Twine(size) + " (operand #" +
                                Twine(in->getOperandNumber()) +
                                " keeps its size; an operand of a fixed size, "
                                "such as a parameter, cannot be indexed by the "
                                "micro-batch's loop)");
        substitute(*in, remade);
      }
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
      substitute(init, *v);
      resultTypes.push_back(v->getType());
    }
    setResultTypes(op, resultTypes);
    return success();
  }

  LogicalResult retypeExtractSlice(tensor::ExtractSliceOp op,
                                   RankedTensorType oldSource) {
    // A source dimension that changed must have been taken whole, and is
    // taken whole again.
    SmallVector<int64_t> sizes(op.getStaticSizes());
    for (int64_t d = 0; d < oldSource.getRank(); ++d) {
      if (oldSource.getDimSize(d) == op.getSourceType().getDimSize(d))
        continue;
      if (!coversWhole(op, d, oldSource.getDimSize(d)))
        return cannot(op, "it takes part of the micro-batch dimension");
      sizes[d] = op.getSourceType().getDimSize(d);
    }
    auto dropped = computeRankReductionMask(op.getStaticSizes(),
                                            op.getType().getShape());
    RankedTensorType full =
        tensor::ExtractSliceOp::inferResultType(op.getSourceType(), sizes);
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < full.getRank(); ++d)
      if (!dropped || !dropped->contains(d))
        shape.push_back(full.getDimSize(d));
    op.setStaticSizes(sizes);
    setResultTypes(op, {op.getType().clone(shape)});
    return success();
  }

  /// A slice written into a tensor: a destination dimension that changed
  /// must have been written whole (offset 0, the old size, stride 1), and
  /// is written whole again, by a source that follows it or is remade at
  /// it (a splat constant, a broadcast: remadeAt); otherwise the sizes
  /// follow the source, which must still fit the destination.
  LogicalResult retypeInsertSlice(tensor::InsertSliceOp op,
                                  RankedTensorType oldSource,
                                  RankedTensorType oldDest) {
    auto dest = cast<RankedTensorType>(op.getDest().getType());
    RankedTensorType source = op.getSourceType();
    SmallVector<int64_t> sizes(op.getStaticSizes());
    SmallVector<int64_t> sourceShape(source.getShape());
    auto dropped = computeRankReductionMask(sizes, oldSource.getShape());
    for (int64_t d = 0, s = 0; d < int64_t(sizes.size()); ++d) {
      bool destChanged = oldDest.getDimSize(d) != dest.getDimSize(d);
      if (destChanged && !coversWhole(op, d, oldDest.getDimSize(d)))
        return cannot(op, "it writes part of the micro-batch dimension " +
                              Twine(d) + " of its destination");
      if (dropped && dropped->contains(d))
        continue;
      if (destChanged)
        sourceShape[s] = dest.getDimSize(d);
      else if (op.isDynamicOffset(d) ||
               op.getStaticOffset(d) + sourceShape[s] > dest.getDimSize(d))
        return cannot(op, "the source's dimension " + Twine(s) + " (" +
                              Twine(sourceShape[s]) +
                              ") no longer fits its destination's");
      sizes[d] = sourceShape[s++];
    }
    if (ArrayRef<int64_t>(sourceShape) != source.getShape()) {
      Value remade =
          changed.contains(op.getSource())
              ? Value()
              : remadeAt(op.getSource(), source.clone(sourceShape), op);
      if (!remade)
        return cannot(op, "its source does not follow the micro-batch of its "
                          "destination, and is no splat constant, fill or "
                          "broadcast that could be made at the new shape");
      substitute(op.getSourceMutable(), remade);
    }
    op.setStaticSizes(sizes);
    // (InsertSliceOp::getDestType is the result's type.)
    setResultTypes(op, {dest});
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
    if (!operandsChanged(op))
      return success();
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return retypeLinalg(linalgOp);
    if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
      auto type = cast<RankedTensorType>(softmax.getInput().getType());
      FailureOr<Value> init = initOfType(softmax.getOutput(), type, op);
      if (failed(init))
        return failure();
      substitute(softmax.getOutputMutable(), *init);
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
        substitute(operand, same);
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
      return retypeInsertSlice(insert, previous.lookup(insert.getSource()),
                               previous.lookup(insert.getDest()));
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
      // A chain of casts (4x5 -> ?x? -> 4x5) keeps the sizes of the value
      // it starts from where a cast makes them static again; the result
      // follows the micro-batch even where its type hides it.
      Value origin = castOp.getSource();
      while (auto inner = origin.getDefiningOp<tensor::CastOp>())
        origin = inner.getSource();
      auto source = cast<RankedTensorType>(origin.getType());
      auto old = cast<RankedTensorType>(castOp.getType());
      SmallVector<int64_t> shape(source.getShape());
      for (int64_t d = 0; d < int64_t(shape.size()); ++d)
        if (old.isDynamicDim(d))
          shape[d] = ShapedType::kDynamic;
      setResultTypes(op, {old.clone(shape)});
      changed.insert(castOp.getResult());
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
  SmallVector<Operation *> orphans;
  llvm::DenseSet<Operation *> erased;
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
