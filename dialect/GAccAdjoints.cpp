//===- GAccAdjoints.cpp - reverse-mode rules of the layer ops -------------===//
//
// The hand-written DifferentiableOpInterface rules of the layer ops that
// keep one (relu's tie rule, gelu, cross_entropy, embedding, layer_norm):
// each emits the adjoints of its operands in upstream linalg/tensor/arith
// ops. Formulas are PyTorch's autograd formulas
// (tools/autograd/derivatives.yaml). gacc.linear has none: gacc-autodiff
// differentiates its decomposition.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

using namespace mlir;
using namespace mlir::gacc;

LogicalResult ReluOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                   ArrayRef<bool> needed,
                                   SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(1, Value());
  if (!needed[0])
    return success();
  auto type = cast<RankedTensorType>(getType());
  operandAdjoints[0] = buildElementwise(
      b, getLoc(), ValueRange{getResult(), resultAdjoints[0]}, type,
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
  // Sequence targets are flattened: one row of logits per target.
  Value logits = buildCollapseToMatrix(b, loc, getLogits());
  Value labels = buildFlatten(b, loc, getLabels());
  double smoothing = getLabelSmoothing().convertToDouble();
  CrossEntropyStats stats =
      buildCrossEntropyStats(b, loc, logits, labels, smoothing);
  Value dz = buildCrossEntropyGrad(b, loc, logits, labels, stats,
                                   resultAdjoints[0], getIgnoreIndex(),
                                   smoothing);
  operandAdjoints[0] =
      buildExpandFromMatrix(b, loc, dz, getLogits().getType());
  return success();
}


LogicalResult
EmbeddingOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                          ArrayRef<bool> needed,
                          SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  if (!needed[1])
    return success();
  Location loc = getLoc();
  // dW = onehot(indices)ᵀ · dy over the flattened positions: one matmul,
  // which gacc-fuse-accumulation writes straight into the accumulator.
  // Over a large vocabulary the one-hot rows come in blocks (each product
  // adds into the one before it, and the accumulate adds their sum), so
  // that no [positions, V] tensor exists (GPT-2's would take 3.1 GiB).
  int64_t vocabulary = getWeight().getType().getDimSize(0);
  Value indices = buildFlatten(b, loc, getIndices());
  Value dy = buildCollapseToMatrix(b, loc, resultAdjoints[0]);
  int64_t rows = cast<RankedTensorType>(indices.getType()).getDimSize(0);
  Value dW;
  forEachRowBlock(rows, getRowsPerBlock(rows, vocabulary),
                  [&](int64_t row0, int64_t n) {
    Value onehot = buildOneHot(
        b, loc, buildSliceAlong(b, loc, indices, 0, row0, n), vocabulary);
    dW = buildMatmul(b, loc, onehot, buildSliceAlong(b, loc, dy, 0, row0, n),
                     /*transposeA=*/true, /*transposeB=*/false, dW);
  });
  operandAdjoints[1] = dW;
  return success();
}

LogicalResult
LayerNormOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                          ArrayRef<bool> needed,
                          SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  Location loc = getLoc();
  Value x = buildCollapseToMatrix(b, loc, getInput());
  Value dy = buildCollapseToMatrix(b, loc, resultAdjoints[0]);
  LayerNormStats stats =
      buildLayerNormStats(b, loc, x, getEps().convertToDouble());
  LayerNormGrads g =
      buildLayerNormGrad(b, loc, x, stats, getWeight(), dy, needed[0]);
  if (needed[0])
    operandAdjoints[0] =
        buildExpandFromMatrix(b, loc, g.dx, getInput().getType());
  if (needed[1])
    operandAdjoints[1] = g.dweight;
  if (needed[2])
    operandAdjoints[2] = g.dbias;
  return success();
}

LogicalResult GeluOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                   ArrayRef<bool> needed,
                                   SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(1, Value());
  if (needed[0])
    operandAdjoints[0] = buildGeluGrad(b, getLoc(), getInput(),
                                       resultAdjoints[0],
                                       getApproximate() == "tanh");
  return success();
}
