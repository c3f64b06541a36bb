//===- GAccAdjoints.cpp - reverse-mode rules of the layer ops -------------===//
//
// DifferentiableOpInterface implementations: each layer op emits the
// adjoints of its operands in upstream linalg/tensor/arith ops. Formulas are
// the standard reverse-mode derivatives (PyTorch's autograd formulas for
// linear, relu and cross_entropy in tools/autograd/derivatives.yaml).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

using namespace mlir;
using namespace mlir::gacc;

LogicalResult LinearOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &operandAdjoints) {
  Location loc = getLoc();
  Value dy = resultAdjoints[0];
  operandAdjoints.assign(getNumOperands(), Value());
  // dx = dy · W   ([m, out] · [out, in]).
  if (needed[0])
    operandAdjoints[0] = buildMatmul(b, loc, dy, getWeight(), false, false);
  // dW = dyᵀ · x  ([out, m] · [m, in]): kept as its own matmul so that
  // gacc-fuse-accumulation can write it straight into the accumulator.
  if (needed[1])
    operandAdjoints[1] = buildMatmul(b, loc, dy, getInput(), true, false);
  // db = Σ_batch dy.
  if (getBias() && needed[2])
    operandAdjoints[2] = buildSumRows(b, loc, dy);
  return success();
}

LogicalResult ReluOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                   ArrayRef<bool> needed,
                                   SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(1, Value());
  if (!needed[0])
    return success();
  auto type = cast<RankedTensorType>(getType());
  operandAdjoints[0] = buildElementwise(
      b, getLoc(), ValueRange{getInput(), resultAdjoints[0]}, type,
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0));
        Value pos = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                          args[0], zero);
        return arith::SelectOp::create(nb, nl, pos, args[1], zero);
      });
  return success();
}

LogicalResult
CrossEntropyOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                             ArrayRef<bool> needed,
                             SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  if (!needed[0])
    return success();
  Location loc = getLoc();
  CrossEntropyStats stats =
      buildCrossEntropyStats(b, loc, getLogits(), getLabels());
  operandAdjoints[0] =
      buildCrossEntropyGrad(b, loc, getLogits(), getLabels(), stats,
                            resultAdjoints[0], getIgnoreIndex());
  return success();
}
