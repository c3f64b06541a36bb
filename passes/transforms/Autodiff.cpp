//===- Autodiff.cpp - gacc-autodiff: reverse-mode gradients ---------------===//
//
// Differentiates the micro-batch body of each gacc.train_step with respect to
// its parameters and appends the gradients to the body's gacc.yield: one
// reverse sweep over the body through DifferentiableOpInterface (gacc ops'
// own rules, upstream ops' external models), and through the decomposition
// of an aggregated op that has no rule of its own.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"
#include "dialect/StructuredAdjoints.h"

#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "gacc-autodiff"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCAUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// What gacc-autodiff differentiates, for its diagnostics.
constexpr const char *kSupported =
    "gacc-autodiff differentiates the gacc layer ops, the arith and math "
    "ops with an adjoint rule on tensors, linalg.generic (projected-permutation "
    "maps, an arith/math body), the named linalg ops, linalg.softmax, and "
    "tensor expand_shape, collapse_shape, cast, extract_slice, "
    "insert_slice, concat and pad with a constant (docs/adding-an-op.md)";

bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

/// Whether `op` reads an active value: an operand, or a value its regions
/// use from above.
bool readsActive(Operation *op, const llvm::DenseSet<Value> &active) {
  if (llvm::any_of(op->getOperands(),
                   [&](Value v) { return active.contains(v); }))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  return llvm::any_of(above, [&](Value v) { return active.contains(v); });
}

/// Marks the results of `ops` (in order) that depend on an active value.
/// getForwardSlice is not used: it follows a use inside a region to the op
/// holding it there, not to the op that owns the region, so a linalg body
/// reading a parameter's value from above would escape it.
void propagateActivity(ArrayRef<Operation *> ops,
                       llvm::DenseSet<Value> &active) {
  for (Operation *op : ops)
    if (readsActive(op, active))
      active.insert(op->result_begin(), op->result_end());
}

/// One reverse sweep: adjoints keyed by the values they belong to, built at
/// the builder's insertion point (after the forward ops).
class ReverseSweep {
public:
  ReverseSweep(OpBuilder &b, llvm::DenseSet<Value> &active)
      : b(b), active(active) {}

  /// Adds `contribution` to the adjoint of `v` (the adjoints of a value
  /// used several times are summed).
  void addAdjoint(Value v, Value contribution) {
    auto [it, inserted] = adjoint.try_emplace(v, contribution);
    if (inserted)
      return;
    if (Value sum = addIntoSlice(it->second, contribution)) {
      it->second = sum;
      return;
    }
    it->second = buildElementwise(
        b, v.getLoc(), ValueRange{it->second, contribution},
        cast<RankedTensorType>(v.getType()),
        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::AddFOp::create(nb, nl, a[0], a[1]);
        });
  }
  Value adjointOf(Value v) const { return adjoint.lookup(v); }

  /// A contribution that is zero outside a slice (`insert_slice` of dy into
  /// zeros: the adjoint of an extract_slice, e.g. one tap of a convolution
  /// or pool) is added to the slice of `sum` only: sum with dy added to its
  /// slice, the same additions in the same order, without the zero tensor
  /// and a full-size add. Null for any other contribution.
  Value addIntoSlice(Value sum, Value contribution) {
    auto insert = contribution.getDefiningOp<tensor::InsertSliceOp>();
    if (!insert || !contribution.use_empty())
      return Value();
    auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
    auto zero = fill ? fill.getInputs()[0].getDefiningOp<arith::ConstantOp>()
                     : arith::ConstantOp();
    auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    if (!value || !value.getValue().isZero() || !fill->hasOneUse())
      return Value();
    Location loc = insert.getLoc();
    RankedTensorType sliceType = insert.getSourceType();
    Value old = tensor::ExtractSliceOp::create(
        b, loc, sliceType, sum, insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
    Value added = buildElementwise(
        b, loc, ValueRange{old, insert.getSource()}, sliceType,
        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::AddFOp::create(nb, nl, a[0], a[1]);
        });
    Value result = tensor::InsertSliceOp::create(
        b, loc, added, sum, insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    Operation *empty = fill.getDpsInits()[0].getDefiningOp();
    insert.erase();
    fill.erase();
    if (empty && empty->use_empty())
      empty->erase();
    return result;
  }

  /// Differentiates `ops` in reverse order.
  LogicalResult run(ArrayRef<Operation *> ops) {
    for (Operation *op : llvm::reverse(ops))
      if (failed(differentiate(op)))
        return failure();
    return success();
  }

private:
  /// Gradients flow through tensors: an active scalar operand, or an
  /// active value a region reads from above, would silently lose its
  /// gradient.
  LogicalResult checkReads(Operation *op) {
    for (Value v : op->getOperands())
      if (active.contains(v) && isa<FloatType>(v.getType()))
        return op->emitOpError("reads a scalar that depends on a parameter; "
                               "gradients flow through tensors only");
    if (op->getNumRegions()) {
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(op->getRegions(), above);
      for (Value v : above)
        if (active.contains(v)) {
          InFlightDiagnostic diag = op->emitOpError(
              "reads, inside its region, a value defined outside that "
              "depends on a parameter, and no gradient reaches a value "
              "captured that way: pass it as an operand (an input of a "
              "linalg op)");
          // A pad's region yields its padding value.
          if (isa<tensor::PadOp>(op))
            diag << ", or pad with a constant and add it afterwards";
          return diag;
        }
    }
    return success();
  }

  LogicalResult differentiate(Operation *op) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return adjoint.count(r); }))
      return success();
    if (failed(checkReads(op)))
      return failure();
    if (auto diff = dyn_cast<DifferentiableOpInterface>(op)) {
      SmallVector<Value> resultAdjoints;
      for (Value r : op->getResults())
        resultAdjoints.push_back(adjoint.lookup(r));
      SmallVector<bool> needed;
      for (Value v : op->getOperands())
        needed.push_back(active.contains(v) && isFloatTensor(v.getType()));
      SmallVector<Value> operandAdjoints;
      if (failed(diff.buildAdjoint(b, resultAdjoints, needed, operandAdjoints)))
        return failure();
      for (auto [v, need, a] :
           llvm::zip(op->getOperands(), needed, operandAdjoints))
        if (need && a)
          addAdjoint(v, a);
      return success();
    }
    if (auto aggregated = dyn_cast<linalg::AggregatedOpInterface>(op))
      return differentiateDecomposition(op, aggregated);
    InFlightDiagnostic diag =
        op->emitOpError("lies between a parameter and the loss but is not "
                        "differentiable: ")
        << kSupported;
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect == "arith" || dialect == "math")
      diag.attachNote() << "the arith and math ops with an adjoint rule: "
                        << opsWithScalarRules(op->getContext());
    return diag;
  }

  /// An aggregated op without a rule of its own: its decomposition is built
  /// again after the forward ops (what its adjoints do not read is removed
  /// afterwards) and differentiated instead.
  LogicalResult differentiateDecomposition(
      Operation *op, linalg::AggregatedOpInterface aggregated) {
    // The decomposition's ops are those that end up between the op before
    // the insertion point and the insertion point (whatever the
    // decomposition built and erased on the way).
    Block *block = b.getInsertionBlock();
    Block::iterator end = b.getInsertionPoint();
    Operation *before = end == block->begin() ? nullptr : &*std::prev(end);
    FailureOr<SmallVector<Value>> replacements =
        aggregated.decomposeOperation(b);
    if (failed(replacements) || replacements->size() != op->getNumResults())
      return op->emitOpError("has no adjoint rule and its decomposition "
                             "failed; ")
             << kSupported;
    SmallVector<Operation *> ops;
    for (Block::iterator it =
             before ? std::next(before->getIterator()) : block->begin();
         it != end; ++it)
      ops.push_back(&*it);
    propagateActivity(ops, active);
    for (auto [r, v] : llvm::zip(op->getResults(), *replacements))
      if (Value a = adjoint.lookup(r))
        addAdjoint(v, a);
    return run(ops);
  }

  OpBuilder &b;
  llvm::DenseSet<Value> &active;
  llvm::DenseMap<Value, Value> adjoint;
};

/// Erases the ops the sweep built that nothing reads (recomputed parts of
/// decompositions whose adjoints did not need them); the body's own ops
/// (`original`) stay.
void eraseDeadAdjointOps(Block &body,
                         const llvm::DenseSet<Operation *> &original) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (!original.contains(op) && isOpTriviallyDead(op))
      op->erase();
}

/// Reverse-mode differentiation of one body.
LogicalResult differentiate(TrainStepOp step) {
  Block &body = step.getBodyBlock();
  auto yield = cast<YieldOp>(body.getTerminator());
  Value loss = step.getLoss();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  llvm::DenseSet<Operation *> original(ops.begin(), ops.end());

  // Values that depend on a trainable parameter: only these need
  // adjoints (a frozen parameter is as constant as the data).
  SmallVector<BlockArgument> trainable = step.getTrainableParamArguments();
  llvm::DenseSet<Value> active(trainable.begin(), trainable.end());
  propagateActivity(ops, active);
  if (!active.contains(loss))
    return yield.emitOpError("the loss depends on no trainable parameter "
                             "(a frozen parameter is as constant as the "
                             "data): there is nothing to train");

  OpBuilder b(yield);
  Location loc = yield.getLoc();
  // What the forward computed and the backward reads is an activation.
  PhaseBeginOp::create(b, loc, StepPhase::backward);
  ReverseSweep sweep(b, active);
  // The body's loss is a sum over the micro-batch: its adjoint is 1, or
  // the loss scale when the step scales its loss before differentiation.
  if (step.hasLossScaling())
    sweep.addAdjoint(loss, LossScaleOp::create(b, loc, loss.getType()));
  else
    sweep.addAdjoint(loss, buildFilled(b, loc,
                                       cast<RankedTensorType>(loss.getType()),
                                       1.0));
  if (failed(sweep.run(ops)))
    return failure();

  SmallVector<Value> values = {loss};
  for (BlockArgument p : trainable) {
    Value g = sweep.adjointOf(p);
    values.push_back(g ? g
                       : buildFilled(b, loc,
                                     cast<RankedTensorType>(p.getType()),
                                     0.0));
  }
  YieldOp::create(b, loc, values);
  yield.erase();
  eraseDeadAdjointOps(body, original);
  return success();
}

struct AutodiffPass
    : public mlir::gacc::impl::GAccAutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    SmallVector<TrainStepOp> steps;
    getOperation().walk([&](TrainStepOp s) { steps.push_back(s); });
    for (TrainStepOp step : steps) {
      if (step.isDifferentiated()) {
        step.emitOpError("is already differentiated (its body yields "
                         "gradients); run gacc-autodiff once");
        return signalPassFailure();
      }
      if (failed(differentiate(step)))
        return signalPassFailure();
    }
  }
};

} // namespace
