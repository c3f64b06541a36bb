//===- SequenceOps.cpp - softmax and attention ----------------------------===//
//
// gacc.softmax, gacc.attention and gacc.attention_backward: verifiers and
// result types, and softmax's decomposition into linalg.softmax, which
// gacc-autodiff differentiates. Attention's query blocks, decompositions
// and adjoint live in Attention.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::gacc;

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  if (getInput().getType().getRank() == 0)
    return emitOpError("needs a dimension to normalize over (rank >= 1)");
  return success();
}

FailureOr<SmallVector<Value>> SoftmaxOp::decomposeOperation(OpBuilder &b) {
  auto type = getInput().getType();
  Value init = tensor::EmptyOp::create(b, getLoc(), type.getShape(),
                                       type.getElementType());
  return SmallVector<Value>{
      linalg::SoftmaxOp::create(b, getLoc(), TypeRange{type}, getInput(),
                                init, type.getRank() - 1)
          .getResult()[0]};
}

//===----------------------------------------------------------------------===//
// AttentionOp and AttentionBackwardOp
//===----------------------------------------------------------------------===//

/// The checks gacc.attention and its adjoint share: `q` rank 4 [m, H, T,
/// d] with no empty dimension, every one of `others` (named by `names`) of
/// q's type, a scale that is positive, finite and normal in f32, and a
/// `query_block` that cuts T into at most kMaxQueryBlocks blocks.
static LogicalResult verifyAttention(Operation *op, ShapedType q,
                                     ArrayRef<Type> others,
                                     ArrayRef<StringRef> names,
                                     std::optional<APFloat> scale,
                                     std::optional<uint64_t> queryBlock) {
  if (q.getRank() != 4)
    return op->emitOpError("query must be rank 4 [m, heads, positions, "
                           "head size], got ")
           << q;
  for (auto [type, name] : llvm::zip(others, names))
    if (type != q)
      return op->emitOpError() << name << " must have the query's shape " << q
                               << ", got " << type;
  if (llvm::is_contained(q.getShape(), 0))
    return op->emitOpError("query must not have an empty dimension, got ") << q;
  if (scale) {
    // Applied in f32: positive, finite and normal there.
    double value = scale->convertToDouble();
    if (!(value >= double(std::numeric_limits<float>::min()) &&
          value <= double(std::numeric_limits<float>::max())))
      return op->emitOpError("scale must be positive and finite in f32, got ")
             << value;
  }
  int64_t t = q.getDimSize(2);
  if (queryBlock &&
      llvm::divideCeilSigned(t, std::min<int64_t>(t, int64_t(*queryBlock))) >
          kMaxQueryBlocks)
    return op->emitOpError("query_block ")
           << *queryBlock << " cuts the " << t << " positions into "
           << llvm::divideCeilSigned(t, int64_t(*queryBlock))
           << " blocks, more than the " << kMaxQueryBlocks
           << " one op unrolls; give query_block ≥ "
           << llvm::divideCeilSigned(t, kMaxQueryBlocks);
  return success();
}

/// `scale`, or 1/sqrt(d) of a [m, H, T, d] query.
static double scaleOrDefault(std::optional<APFloat> scale, ShapedType q) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(double(q.getDimSize(3)));
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getQuery().getType(),
                         {getKey().getType(), getValue().getType()},
                         {"key", "value"}, getScale(), getQueryBlock());
}

LogicalResult AttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(operands[0].getType());
  return success();
}

double AttentionOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getQuery().getType());
}

LogicalResult AttentionBackwardOp::verify() {
  return verifyAttention(*this, getQuery().getType(),
                         {getKey().getType(), getValue().getType(),
                          getOutput().getType(), getOutputGrad().getType()},
                         {"key", "value", "output", "output_grad"}, getScale(),
                         getQueryBlock());
}

/// dq, dk and dv: of the query's type.
LogicalResult AttentionBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferred) {
  inferred.append(3, operands[0].getType());
  return success();
}

double AttentionBackwardOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getQuery().getType());
}
