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
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "gacc-recompute-activations"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCRECOMPUTEACTIVATIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

std::optional<RecomputePolicy> mlir::gacc::parseRecomputePolicy(StringRef name) {
  return llvm::StringSwitch<std::optional<RecomputePolicy>>(name)
      .Case("none", RecomputePolicy::None)
      .Case("marked", RecomputePolicy::Marked)
      .Case("cheap", RecomputePolicy::Cheap)
      .Default(std::nullopt);
}

namespace {

/// The body's gacc.backward_begin, or null before differentiation.
BackwardBeginOp findMarker(TrainStepOp step) {
  for (Operation &op : step.getBodyBlock())
    if (auto marker = dyn_cast<BackwardBeginOp>(op))
      return marker;
  return nullptr;
}

/// The forward ops of the body: those before the marker (all but the
/// terminator without one).
SmallVector<Operation *> forwardOps(TrainStepOp step) {
  SmallVector<Operation *> ops;
  for (Operation &op : step.getBodyBlock().without_terminator()) {
    if (isa<BackwardBeginOp>(op))
      break;
    ops.push_back(&op);
  }
  return ops;
}

bool hasTensorResult(Operation *op) {
  return llvm::any_of(op->getResultTypes(),
                      [](Type t) { return isa<TensorType>(t); });
}

/// Cheap to recompute, by the op's own interface or, for upstream ops,
/// by theirs: elementwise ops on tensors, linalg ops without reductions.
bool isCheapToRecompute(Operation *op) {
  if (!hasTensorResult(op) || op->getNumOperands() == 0 ||
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

/// The op of the body holding each use of `op`'s results after `marker`,
/// the earliest first in `first`; the uses themselves in `uses`.
Operation *backwardUses(Operation *op, Operation *marker,
                        SmallVectorImpl<OpOperand *> &uses) {
  Block *body = marker->getBlock();
  Operation *first = nullptr;
  for (OpResult result : op->getResults())
    for (OpOperand &use : result.getUses()) {
      Operation *holder = body->findAncestorOpInBlock(*use.getOwner());
      if (!holder || !marker->isBeforeInBlock(holder))
        continue;
      uses.push_back(&use);
      if (!first || holder->isBeforeInBlock(first))
        first = holder;
    }
  return first;
}

/// Clones marked forward op `op` before its first backward reader, its
/// operands through a gacc.recompute_inputs, and points the backward uses
/// at the clone.
void recompute(Operation *op, Operation *marker) {
  SmallVector<OpOperand *> uses;
  Operation *first = backwardUses(op, marker, uses);
  if (!first)
    return;
  OpBuilder b(first);
  llvm::SetVector<Value> inputs(op->operand_begin(), op->operand_end());
  auto kept = RecomputeInputsOp::create(b, op->getLoc(),
                                        inputs.getArrayRef());
  IRMapping mapping;
  mapping.map(inputs.getArrayRef(), kept.getResults());
  Operation *clone = b.clone(*op, mapping);
  clone->removeAttr(kRecomputeAttrName);
  for (OpOperand *use : uses)
    use->set(clone->getResult(cast<OpResult>(use->get()).getResultNumber()));
}

/// A gacc.recompute_inputs whose operand is itself recomputed (a chain of
/// marked ops) passes the clone on: the clone is used directly, and an op
/// left with no forward value to keep is erased.
void dropRecomputedInputs(RecomputeInputsOp kept, Operation *marker) {
  SmallVector<Value> forward;
  for (auto [input, result] : llvm::zip(kept.getInputs(), kept.getResults())) {
    Operation *def = input.getDefiningOp();
    bool recomputed = def && def->getBlock() == marker->getBlock() &&
                      marker->isBeforeInBlock(def);
    if (recomputed)
      result.replaceAllUsesWith(input);
    else
      forward.push_back(input);
  }
  if (forward.size() == kept.getInputs().size())
    return;
  if (!forward.empty()) {
    OpBuilder b(kept);
    auto narrowed = RecomputeInputsOp::create(b, kept.getLoc(), forward);
    for (auto [input, result] : llvm::zip(forward, narrowed.getResults()))
      for (auto [old, oldResult] :
           llvm::zip(kept.getInputs(), kept.getResults()))
        if (old == input)
          oldResult.replaceAllUsesWith(result);
  }
  kept.erase();
}

LogicalResult recomputeMarked(TrainStepOp step) {
  BackwardBeginOp marker = findMarker(step);
  if (!marker)
    return success();
  SmallVector<Operation *> marked;
  for (Operation *op : forwardOps(step)) {
    if (!op->hasAttr(kRecomputeAttrName))
      continue;
    if (op->getNumRegions() && !isa<linalg::LinalgOp>(op))
      return op->emitOpError("is marked gacc.recompute but holds regions "
                             "that cannot be cloned into the backward");
    if (!isMemoryEffectFree(op))
      return op->emitOpError("is marked gacc.recompute but has memory "
                             "effects: recomputing it in the backward would "
                             "repeat them");
    marked.push_back(op);
  }
  // Consumers first: a producer's clone then lands before the first clone
  // that reads it.
  for (Operation *op : llvm::reverse(marked))
    recompute(op, marker);
  SmallVector<RecomputeInputsOp> kept(
      step.getBodyBlock().getOps<RecomputeInputsOp>());
  for (RecomputeInputsOp op : kept)
    dropRecomputedInputs(op, marker);
  return success();
}

struct RecomputeActivationsPass
    : public mlir::gacc::impl::GAccRecomputeActivationsPassBase<
          RecomputeActivationsPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<RecomputePolicy> p = parseRecomputePolicy(policy);
    if (!p) {
      getOperation().emitError("gacc-recompute-activations: unknown policy '")
          << policy << "' (expected none, marked or cheap)";
      return signalPassFailure();
    }
    for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
      if (*p == RecomputePolicy::None)
        continue;
      if (*p == RecomputePolicy::Cheap)
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
  for (Operation *op : forwardOps(step))
    if (isCheapToRecompute(op) && !op->hasAttr(kRecomputeAttrName)) {
      op->setAttr(kRecomputeAttrName, unit);
      ++count;
    }
  return count;
}
