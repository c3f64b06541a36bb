//===- Autodiff.cpp - gacc-autodiff: reverse-mode gradients ---------------===//
//
// Differentiates the micro-batch body of each gacc.train_step with respect to
// its parameters and appends the gradients to the body's gacc.yield.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "gacc-autodiff"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCAUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

static bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

/// Reverse-mode differentiation of one body.
static LogicalResult differentiate(TrainStepOp step) {
  Block &body = step.getBodyBlock();
  auto yield = cast<YieldOp>(body.getTerminator());
  Value loss = step.getLoss();

  // Values that depend on a parameter: only these need adjoints.
  llvm::DenseSet<Value> active;
  for (BlockArgument p : step.getParamArguments())
    active.insert(p);
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        active.insert(r);
  if (!active.contains(loss))
    return step.emitOpError("loss does not depend on any parameter");

  OpBuilder b(yield);
  Location loc = yield.getLoc();
  llvm::DenseMap<Value, Value> adjoint;
  auto addAdjoint = [&](Value v, Value contribution) {
    auto it = adjoint.find(v);
    if (it == adjoint.end()) {
      adjoint[v] = contribution;
      return;
    }
    it->second = buildElementwise(
        b, loc, ValueRange{it->second, contribution},
        cast<RankedTensorType>(v.getType()),
        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::AddFOp::create(nb, nl, a[0], a[1]);
        });
  };
  // The body's loss is a sum over the micro-batch: its adjoint is 1, or
  // the loss scale when the step scales its loss before differentiation.
  if (step.hasLossScaling())
    addAdjoint(loss, LossScaleOp::create(b, loc, loss.getType()));
  else
    addAdjoint(loss, buildFilled(b, loc,
                                 cast<RankedTensorType>(loss.getType()), 1.0));

  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value r) { return adjoint.count(r); }))
      continue;
    auto diff = dyn_cast<DifferentiableOpInterface>(&op);
    if (!diff)
      return op.emitOpError("lies between a parameter and the loss but is "
                            "not differentiable (it does not implement "
                            "DifferentiableOpInterface)");
    SmallVector<Value> resultAdjoints;
    for (Value r : op.getResults()) {
      auto it = adjoint.find(r);
      resultAdjoints.push_back(
          it != adjoint.end()
              ? it->second
              : buildFilled(b, loc, cast<RankedTensorType>(r.getType()), 0.0));
    }
    SmallVector<bool> needed;
    for (Value v : op.getOperands())
      needed.push_back(active.contains(v) && isFloatTensor(v.getType()));
    SmallVector<Value> operandAdjoints;
    if (failed(diff.buildAdjoint(b, resultAdjoints, needed, operandAdjoints)))
      return failure();
    for (auto [v, need, a] :
         llvm::zip(op.getOperands(), needed, operandAdjoints))
      if (need && a)
        addAdjoint(v, a);
  }

  SmallVector<Value> values = {loss};
  for (BlockArgument p : step.getParamArguments()) {
    auto it = adjoint.find(p);
    values.push_back(it != adjoint.end()
                         ? it->second
                         : buildFilled(b, loc,
                                       cast<RankedTensorType>(p.getType()),
                                       0.0));
  }
  YieldOp::create(b, loc, values);
  yield.erase();
  return success();
}

struct AutodiffPass : public mlir::gacc::impl::GAccAutodiffPassBase<AutodiffPass> {
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
