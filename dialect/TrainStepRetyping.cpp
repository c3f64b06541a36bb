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
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
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
    for (Operation *op : ops) {
      replacement = nullptr;
      if (failed(retype(op)) ||
          failed(verifyRetyped(replacement ? replacement : op)))
        return failure();
    }
    eraseOrphans();
    return success();
  }

private:
  /// An op re-typed into one its verifier refuses (operands that no longer
  /// fit together: a layer op whose other operand kept the old micro-batch
  /// size) is an error naming it and what no longer fits, not an invalid
  /// body.
  LogicalResult verifyRetyped(Operation *op) {
    std::string problem;
    LogicalResult verified = success();
    {
      ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &d) {
        if (problem.empty())
          problem = d.str();
        return success();
      });
      verified = verify(op, /*verifyRecursively=*/false);
    }
    if (succeeded(verified))
      return success();
    return cannot(op, "its operands no longer fit together (" + problem + ")");
  }

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

  /// Whether an operand of `op`, or a value its regions take from above
  /// (a gather of each sample's row), follows the micro-batch.
  bool operandsChanged(Operation *op) {
    auto follows = [&](Value v) { return changed.contains(v); };
    if (llvm::any_of(op->getOperands(), follows))
      return true;
    if (op->getNumRegions() == 0)
      return false;
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    return llvm::any_of(captured, follows);
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
    this->replacement = replacement;
  }

  LogicalResult cannot(Operation *op, const Twine &why) {
    return op->emitOpError("cannot be re-typed for micro-batch size ")
           << m << ": " << why;
  }

  /// `v` made again at `type` before `user`, where its value does not
  /// depend on its shape: a new tensor.empty, linalg.fill or splat constant
  /// (each element the same value), or a linalg op that broadcasts along
  /// each dimension that changes (remadeLinalg), or an elementwise op of
  /// such values (remadeElementwise); null otherwise.
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
      return remadeLinalg(linalgOp, cast<OpResult>(v), type);
    if (def && def->hasTrait<OpTrait::Elementwise>() && isPure(def) &&
        def->getNumResults() == 1)
      return remadeElementwise(def, type);
    return nullptr;
  }

  /// `result` of `op` (a linalg op of one init whose operands keep their
  /// types: a bias or positional table broadcast to the micro-batch) made
  /// again at `type`, where along each dimension that changes every
  /// position holds the same value: a loop the payload does not index,
  /// whose inputs are made again along it (remadeAt: a broadcast's input
  /// does not read it; another is itself uniform along it); null
  /// otherwise. Made on demand, for a user that combines it with the
  /// samples: a use that does not keeps the value it had (a broadcast to 4
  /// rows that is summed stays 4 rows whatever the micro-batch).
  Value remadeLinalg(linalg::LinalgOp op, OpResult result,
                     RankedTensorType type) {
    if (op.getNumDpsInits() != 1 || operandsChanged(op))
      return nullptr;
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(init);
    auto old = cast<RankedTensorType>(result.getType());
    if (old.getRank() != type.getRank() || !map.isProjectedPermutation())
      return nullptr;
    // The new size of each loop that changes.
    llvm::SmallDenseMap<unsigned, int64_t> sizes;
    for (int64_t i = 0; i < old.getRank(); ++i) {
      if (old.getDimSize(i) == type.getDimSize(i))
        continue;
      unsigned loop = cast<AffineDimExpr>(map.getResult(i)).getPosition();
      if (readsLoopIndex(op, loop))
        return nullptr;
      sizes[loop] = type.getDimSize(i);
    }
    // The inputs that read a loop that changes, made again along it.
    SmallVector<std::pair<unsigned, Value>> inputs;
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto inType = dyn_cast<RankedTensorType>(in->get().getType());
      if (!inType)
        continue;
      SmallVector<int64_t> shape(inType.getShape());
      AffineMap inMap = op.getMatchingIndexingMap(in);
      for (auto [j, e] : llvm::enumerate(inMap.getResults())) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (d && sizes.count(d.getPosition()))
          shape[j] = sizes.lookup(d.getPosition());
        else if (!d && llvm::any_of(sizes, [&](auto loopSize) {
                   return e.isFunctionOfDim(loopSize.first);
                 }))
          return nullptr;
      }
      if (ArrayRef<int64_t>(shape) == inType.getShape())
        continue;
      Value remade = remadeAt(in->get(), inType.clone(shape), op);
      if (!remade)
        return nullptr;
      inputs.push_back({in->getOperandNumber(), remade});
    }
    Value newInit = remadeAt(init->get(), type, op);
    if (!newInit)
      return nullptr;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Operation *clone = rewriter.clone(*op);
    for (auto [number, remade] : inputs)
      clone->setOperand(number, remade);
    clone->setOperand(init->getOperandNumber(), newInit);
    clone->getResult(0).setType(type);
    return clone->getResult(0);
  }

  /// The elementwise op `op` (tanh of a broadcast bias) made again at
  /// `type` from its operands made again at it; null where one cannot be.
  Value remadeElementwise(Operation *op, RankedTensorType type) {
    if (operandsChanged(op))
      return nullptr;
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      if (!t) {
        operands.push_back(operand);
        continue;
      }
      Value remade = remadeAt(operand, t.clone(type.getShape()), op);
      if (!remade)
        return nullptr;
      operands.push_back(remade);
    }
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Operation *clone = rewriter.clone(*op);
    clone->setOperands(operands);
    clone->getResult(0).setType(
        cast<RankedTensorType>(op->getResult(0).getType())
            .clone(type.getShape()));
    return clone->getResult(0);
  }

  /// `operand` of `op` at `shape`: as it is where it has that shape, made
  /// again at it where it does not follow the micro-batch (remadeAt);
  /// otherwise an error at `op` saying `why` it cannot be.
  LogicalResult operandAt(Operation *op, OpOperand &operand,
                          ArrayRef<int64_t> shape, const Twine &why) {
    auto type = cast<RankedTensorType>(operand.get().getType());
    if (type.getShape() == shape)
      return success();
    Value remade = changed.contains(operand.get())
                       ? Value()
                       : remadeAt(operand.get(), type.clone(shape), op);
    if (!remade)
      return cannot(op, why);
    substitute(operand, remade);
    return success();
  }

  /// Why two operands of shapes that must agree cannot be made to, for
  /// operandAt: `what` (the operands) no longer agree.
  static std::string disagree(StringRef what) {
    return (what + " no longer agree (one follows the micro-batch, another "
                   "does not and is no splat constant, fill or broadcast "
                   "that could be made at the new shape)")
        .str();
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

  /// Loop sizes from the operands, inits remade at the shapes their maps
  /// give, results typed like the inits. A loop no operand that follows
  /// the micro-batch sizes keeps its size: a broadcast to the micro-batch
  /// follows it where a user combines it with the samples (remadeLinalg).
  LogicalResult retypeLinalg(linalg::LinalgOp op) {
    SmallVector<int64_t> loops(op.getNumLoops(), ShapedType::kDynamic);
    // A sample tensor the payload gathers each sample's row from
    // (tensor.extract at a loop's linalg.index, as verifySampleIndependence
    // allows) sizes that loop.
    op->walk([&](tensor::ExtractOp extract) {
      Value table = extract.getTensor();
      auto index =
          extract.getIndices().empty()
              ? linalg::IndexOp()
              : extract.getIndices()[0].getDefiningOp<linalg::IndexOp>();
      RankedTensorType before = previous.lookup(table);
      auto after = cast<RankedTensorType>(table.getType());
      if (index && index->getParentOp() == op && changed.contains(table) &&
          !op->isAncestor(table.getParentRegion()->getParentOp()) && before &&
          before.getRank() && before.getDimSize(0) != after.getDimSize(0))
        loops[index.getDim()] = after.getDimSize(0);
    });
    // The operands that follow the micro-batch (inputs and inits) size the
    // loops first; another input on a loop they size is remade at it where
    // it broadcasts along it (remadeLinalg), and is an error otherwise.
    SmallVector<OpOperand *> followers, others;
    for (OpOperand &operand : op->getOpOperands())
      if (changed.contains(operand.get()))
        followers.push_back(&operand);
      else if (op.isDpsInput(&operand))
        others.push_back(&operand);
    for (bool follows : {true, false}) {
      for (OpOperand *in : follows ? followers : others) {
        auto type = dyn_cast<RankedTensorType>(in->get().getType());
        if (!type)
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
        auto [loop, size] = *conflict;
        if (failed(operandAt(
                op, *in, shape,
                "its operands give loop " + Twine(loop) + " the sizes " +
                    Twine(loops[loop]) + " and " + Twine(size) + " (operand #" +
                    Twine(in->getOperandNumber()) +
                    " keeps its size; an operand of a fixed size, such as a "
                    "parameter, cannot be indexed by the micro-batch's "
                    "loop)")))
          return failure();
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
    for (int64_t d = 0; d < oldSource.getRank(); ++d)
      if (dropped && dropped->contains(d) &&
          oldSource.getDimSize(d) != op.getSourceType().getDimSize(d))
        return cannot(op, "it drops the micro-batch dimension " + Twine(d) +
                              " (of one sample), which the new size keeps");
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
    RankedTensorType source = op.getSourceType();
    SmallVector<int64_t> sizes(op.getStaticSizes());
    SmallVector<int64_t> sourceShape(source.getShape());
    auto dropped = computeRankReductionMask(sizes, oldSource.getShape());
    // A source that follows the micro-batch, written over a whole
    // destination dimension that does not: the destination is made again
    // at its size (a fill, an empty tensor), or it is an error.
    auto destType = cast<RankedTensorType>(op.getDest().getType());
    SmallVector<int64_t> destShape(destType.getShape());
    for (int64_t d = 0, s = 0; d < int64_t(sizes.size()); ++d) {
      if (dropped && dropped->contains(d))
        continue;
      if (oldSource.getDimSize(s) != source.getDimSize(s) &&
          oldDest.getDimSize(d) == destType.getDimSize(d) &&
          coversWhole(op, d, oldDest.getDimSize(d)))
        destShape[d] = source.getDimSize(s);
      ++s;
    }
    if (failed(operandAt(op, op.getDestMutable(), destShape,
                         "it writes the samples over a whole dimension of a "
                         "destination that does not follow the micro-batch "
                         "and is no fill or empty tensor that could be made "
                         "at the new shape")))
      return failure();
    auto dest = cast<RankedTensorType>(op.getDest().getType());
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
    if (failed(operandAt(op, op.getSourceMutable(), sourceShape,
                         "its source does not follow the micro-batch of its "
                         "destination, and is no splat constant, fill or "
                         "broadcast that could be made at the new shape")))
      return failure();
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
      for (OpOperand &operand : op->getOpOperands())
        if (isa<RankedTensorType>(operand.get().getType()) &&
            failed(operandAt(op, operand, shape,
                             disagree("its operands' shapes"))))
          return failure();
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
      // The tensors joined agree but along the joined dimension: one that
      // does not follow the micro-batch is made again at its size.
      Value follower = *llvm::find_if(
          op->getOperands(), [&](Value v) { return changed.contains(v); });
      auto shape = llvm::to_vector(
          cast<RankedTensorType>(follower.getType()).getShape());
      for (OpOperand &operand : op->getOpOperands()) {
        shape[concat.getDim()] = cast<RankedTensorType>(operand.get().getType())
                                     .getDimSize(concat.getDim());
        if (failed(operandAt(op, operand, shape,
                             disagree("the tensors it joins"))))
          return failure();
      }
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
  /// The op that replaced the one re-typed last, if one did (replace).
  Operation *replacement = nullptr;
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
