//===- RecomputeActivations.cpp - gacc-recompute-activations --------------===//
//
// Activation recomputation: forward ops marked `gacc.recompute` are cloned
// into the backward before their first backward reader, so that their
// outputs die in the forward; the `cheap` policy and what it marks.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"

#define DEBUG_TYPE "gacc-recompute-activations"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCRECOMPUTEACTIVATIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

std::optional<RecomputePolicy>
mlir::gacc::parseRecomputePolicy(StringRef name) {
  return llvm::StringSwitch<std::optional<RecomputePolicy>>(name)
      .Case("none", RecomputePolicy::None)
      .Case("marked", RecomputePolicy::Marked)
      .Case("cheap", RecomputePolicy::Cheap)
      .Default(std::nullopt);
}

/// The body's backward marker, or null before differentiation.
static PhaseBeginOp findMarker(TrainStepOp step) {
  for (auto marker : step.getBodyBlock().getOps<PhaseBeginOp>())
    if (marker.getPhase() == StepPhase::backward)
      return marker;
  return nullptr;
}

/// Bytes of a statically shaped tensor of integers, floats or indices, its
/// elements sized by `layout`; 0 for anything else.
static int64_t tensorBytes(Type type, const DataLayout &layout) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrIndexOrFloat())
    return 0;
  return t.getNumElements() *
         int64_t(layout.getTypeSize(t.getElementType()).getFixedValue());
}

/// Cheap to recompute, by the op's own interface or, for upstream ops,
/// by theirs: elementwise ops on tensors, linalg ops without reductions.
static bool isCheapToRecompute(Operation *op) {
  bool tensorResult = llvm::any_of(op->getResultTypes(), [](Type t) {
    return isa<TensorType>(t);
  });
  if (!tensorResult || op->getNumOperands() == 0 ||
      !isMemoryEffectFree(op) || isa<LossOpInterface>(op))
    return false;
  if (auto recomputable = dyn_cast<RecomputableOpInterface>(op))
    return recomputable.isCheapToRecompute();
  if (op->hasTrait<OpTrait::Elementwise>())
    return true;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureTensorSemantics() &&
           linalgOp.getNumReductionLoops() == 0;
  return false;
}

/// The body op holding each use of `op`'s results after `marker` (the
/// terminator excluded: the yielded loss is the forward's), collected in
/// `uses`; returns the earliest of them, or null.
static Operation *backwardUses(Operation *op, Operation *marker,
                               SmallVectorImpl<OpOperand *> &uses) {
  Block *body = marker->getBlock();
  Operation *first = nullptr;
  for (OpResult result : op->getResults())
    for (OpOperand &use : result.getUses()) {
      Operation *holder = body->findAncestorOpInBlock(*use.getOwner());
      if (!holder || holder->hasTrait<OpTrait::IsTerminator>() ||
          !marker->isBeforeInBlock(holder))
        continue;
      uses.push_back(&use);
      if (!first || holder->isBeforeInBlock(first))
        first = holder;
    }
  return first;
}

/// True when `v` is computed in the backward (after `marker`).
static bool isBackwardValue(Value v, Operation *marker) {
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == marker->getBlock() &&
         marker->isBeforeInBlock(def);
}

/// Clones marked forward op `op` before its first backward reader, its
/// forward operands through a gacc.recompute_inputs (operands already
/// recomputed, i.e. clones of marked producers, are read directly), and
/// points the backward uses at the clone.
static void recompute(Operation *op, Operation *marker) {
  SmallVector<OpOperand *> uses;
  Operation *first = backwardUses(op, marker, uses);
  if (!first)
    return;
  OpBuilder b(first);
  IRMapping mapping;
  llvm::SetVector<Value> kept;
  for (Value operand : op->getOperands())
    if (!isBackwardValue(operand, marker))
      kept.insert(operand);
  if (!kept.empty()) {
    auto inputs =
        RecomputeInputsOp::create(b, op->getLoc(), kept.getArrayRef());
    mapping.map(kept.getArrayRef(), inputs.getResults());
  }
  Operation *clone = b.clone(*op, mapping);
  clone->removeAttr(kRecomputeAttrName);
  for (OpOperand *use : uses)
    use->set(clone->getResult(cast<OpResult>(use->get()).getResultNumber()));
}

/// A gacc.recompute_inputs that passes a value recomputed later (a chain
/// of marked ops, consumers cloned first) passes it no more: its readers
/// read the clone directly, and the op keeps only forward values (or
/// goes).
static void narrowToForwardInputs(RecomputeInputsOp op, Operation *marker) {
  SmallVector<Value> forward;
  for (auto [input, result] : llvm::zip(op.getInputs(), op.getResults())) {
    if (isBackwardValue(input, marker))
      result.replaceAllUsesWith(input);
    else
      forward.push_back(input);
  }
  if (forward.size() == op.getInputs().size())
    return;
  if (!forward.empty()) {
    OpBuilder b(op);
    auto narrowed = RecomputeInputsOp::create(b, op.getLoc(), forward);
    IRMapping results;
    for (auto [input, result] : llvm::zip(op.getInputs(), op.getResults()))
      results.map(input, result);
    for (auto [input, result] : llvm::zip(forward, narrowed.getResults()))
      results.lookup(input).replaceAllUsesWith(result);
  }
  op.erase();
}

/// Recomputes the marked forward ops of a differentiated step, consumers
/// first (a producer's clone then lands before the first clone reading
/// it, which reads the producer's clone directly), then drops the marks.
static LogicalResult recomputeMarked(TrainStepOp step) {
  PhaseBeginOp marker = findMarker(step);
  if (!marker)
    return success();
  SmallVector<Operation *> marked;
  for (Operation &forwardOp : step.getForwardOps()) {
    Operation *op = &forwardOp;
    if (!op->hasAttr(kRecomputeAttrName))
      continue;
    if (!isMemoryEffectFree(op))
      return op->emitOpError("is marked gacc.recompute but has memory "
                             "effects: recomputing it in the backward would "
                             "repeat them");
    // Nothing to recompute from (a constant): it stays as it is.
    if (op->getNumOperands() != 0)
      marked.push_back(op);
  }
  for (Operation *op : llvm::reverse(marked))
    recompute(op, marker);
  for (RecomputeInputsOp op : llvm::make_early_inc_range(
           step.getBodyBlock().getOps<RecomputeInputsOp>()))
    narrowToForwardInputs(op, marker);
  step.walk([](Operation *op) { op->removeAttr(kRecomputeAttrName); });
  return success();
}

namespace {
struct RecomputeActivationsPass
    : public mlir::gacc::impl::GAccRecomputeActivationsPassBase<
          RecomputeActivationsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (policy == RecomputePolicy::None)
      return;
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
      // Said, so that running this pass before gacc-autodiff is not a
      // silent no-op.
      if (!step.isDifferentiated()) {
        step.emitWarning() << "gacc.train_step @" << step.getSymName()
                           << " is left as it is: gacc-recompute-activations "
                              "moves forward ops into the backward that "
                              "gacc-autodiff builds (run gacc-autodiff first)";
        continue;
      }
      if (policy == RecomputePolicy::Cheap)
        markCheapRecomputation(step);
      if (failed(recomputeMarked(step)))
        return signalPassFailure();
    }
  }
};
} // namespace

unsigned mlir::gacc::markCheapRecomputation(TrainStepOp step) {
  unsigned count = 0;
  UnitAttr unit = UnitAttr::get(step.getContext());
  Block *body = &step.getBodyBlock();
  DataLayout layout = DataLayout::closest(step);
  for (Operation &forwardOp : step.getForwardOps()) {
    Operation *op = &forwardOp;
    if (op->hasAttr(kRecomputeAttrName) || !isCheapToRecompute(op))
      continue;
    // What recomputing it keeps alive (operands of unmarked body ops; the
    // parameters and inputs live anyway) against what it frees.
    int64_t kept = 0, freed = 0;
    for (Value operand : llvm::SetVector<Value>(op->operand_begin(),
                                                op->operand_end())) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() == body &&
          !def->hasAttr(kRecomputeAttrName))
        kept += tensorBytes(operand.getType(), layout);
    }
    for (Type t : op->getResultTypes())
      freed += tensorBytes(t, layout);
    if (kept > freed)
      continue;
    op->setAttr(kRecomputeAttrName, unit);
    ++count;
  }
  return count;
}
