//===- UndefinedReads.cpp - a training step's reads of tensor.empty -------===//
//
// TrainStepOp's check that its forward never reads the contents of a
// tensor.empty, which are undefined: an op that adds one to the samples
// trains on whatever the buffer held (a loss of 1.6e14, then NaN, blamed
// on the learning rate). tensor.empty gives a shape; a destination-style
// op writes it.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// What a use does with an undefined tensor's values.
enum class UseKind {
  /// Reads them: an error.
  Read,
  /// Leaves them unread (an init written, a destination inserted into).
  WriteOnly,
  /// Leaves them unread in a result that is as undefined (a cast, reshape
  /// or slice), followed in turn.
  View,
};
} // namespace

static UseKind classify(OpOperand &use) {
  Operation *user = use.getOwner();
  // A linalg op reads an operand, input or init, where its payload does.
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
    return linalgOp.payloadUsesValueFromOperand(&use) ? UseKind::Read
                                                      : UseKind::WriteOnly;
  // Any other destination-style op (tensor.insert_slice, tensor.insert, a
  // layer op's init) writes its inits. (gacc.matmul_accumulate, which
  // reads its init, is created after the forward is differentiated.)
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(user);
      dps && dps.isDpsInit(&use))
    return UseKind::WriteOnly;
  if (isa<tensor::CastOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::ExtractSliceOp>(user))
    return UseKind::View;
  if (isa<tensor::DimOp>(user))
    return UseKind::WriteOnly;
  // A loop or branch (scf.for filling an init) is not looked into; any
  // other op reads its operands (tensor.pad its source).
  return isa<LoopLikeOpInterface, RegionBranchOpInterface>(user)
             ? UseKind::WriteOnly
             : UseKind::Read;
}

LogicalResult mlir::gacc::verifyNoUndefinedReads(TrainStepOp step) {
  // Each undefined value with the tensor.empty it comes from.
  SmallVector<std::pair<Value, tensor::EmptyOp>> undefined;
  auto forward = step.getForwardOps();
  for (Operation &op : forward)
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      undefined.push_back({empty.getResult(), empty});
  // Where the forward ends: the backward marker, or the terminator.
  Operation *backward = &*forward.end();
  if (!isPhaseBegin(backward, StepPhase::backward))
    backward = nullptr;
  while (!undefined.empty()) {
    auto [value, empty] = undefined.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      // The backward is generated; its own inits are its business.
      Operation *top =
          step.getBodyBlock().findAncestorOpInBlock(*use.getOwner());
      if (backward && top && !top->isBeforeInBlock(backward))
        continue;
      switch (classify(use)) {
      case UseKind::WriteOnly:
        continue;
      case UseKind::View:
        undefined.push_back({use.getOwner()->getResult(0), empty});
        continue;
      case UseKind::Read:
        InFlightDiagnostic diag =
            use.getOwner()->emitOpError("reads operand #")
            << use.getOperandNumber()
            << ", the undefined contents of a tensor.empty (which gives only "
               "a shape): fill it first (linalg.fill), or give it as an init "
               "the op writes without reading";
        diag.attachNote(empty.getLoc()) << "the tensor.empty";
        return diag;
      }
    }
  }
  return success();
}
