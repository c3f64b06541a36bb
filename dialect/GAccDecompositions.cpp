//===- GAccDecompositions.cpp - the layer ops as upstream IR --------------===//
//
// linalg::AggregatedOpInterface of the gacc layer ops: each decomposes into
// upstream linalg, tensor, arith and math ops built by LinalgBuilders (the
// same formulas the hand-written adjoints use). convert-gacc-to-linalg
// applies these; gacc-autodiff differentiates them where an op has no
// hand-written adjoint.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::gacc;

FailureOr<SmallVector<Value>> LinearOp::decomposeOperation(OpBuilder &b) {
  // y = x · Wᵀ (+ b): W is [out, in] as in torch.nn.Linear; leading
  // dimensions are flattened into matrix rows.
  Location loc = getLoc();
  Value x = buildCollapseToMatrix(b, loc, getInput());
  Value y = buildMatmul(b, loc, x, getWeight(),
                        /*transposeA=*/false, /*transposeB=*/true);
  if (getBias())
    y = buildAddBias(b, loc, y, getBias());
  return SmallVector<Value>{
      buildExpandFromMatrix(b, loc, y, cast<RankedTensorType>(getType()))};
}

FailureOr<SmallVector<Value>> ReluOp::decomposeOperation(OpBuilder &b) {
  return SmallVector<Value>{buildElementwise(
      b, getLoc(), ValueRange{getInput()}, cast<RankedTensorType>(getType()),
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0));
        return arith::MaximumFOp::create(nb, nl, args[0], zero);
      })};
}

FailureOr<SmallVector<Value>> CrossEntropyOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  Value logits = buildCollapseToMatrix(b, loc, getLogits());
  Value labels = buildFlatten(b, loc, getLabels());
  CrossEntropyStats stats = buildCrossEntropyStats(
      b, loc, logits, labels, getLabelSmoothing().convertToDouble());
  return SmallVector<Value>{
      buildCrossEntropySum(b, loc, stats, labels, getIgnoreIndex())};
}

FailureOr<SmallVector<Value>> EmbeddingOp::decomposeOperation(OpBuilder &b) {
  return SmallVector<Value>{
      buildEmbedding(b, getLoc(), getIndices(), getWeight())};
}

FailureOr<SmallVector<Value>> LayerNormOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  Value x = buildCollapseToMatrix(b, loc, getInput());
  LayerNormStats stats =
      buildLayerNormStats(b, loc, x, getEps().convertToDouble());
  Value y = buildLayerNorm(b, loc, x, stats, getWeight(), getBias());
  return SmallVector<Value>{
      buildExpandFromMatrix(b, loc, y, getInput().getType())};
}

FailureOr<SmallVector<Value>> GeluOp::decomposeOperation(OpBuilder &b) {
  return SmallVector<Value>{
      buildGelu(b, getLoc(), getInput(), getApproximate() == "tanh")};
}
