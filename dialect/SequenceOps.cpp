//===- SequenceOps.cpp - softmax and attention ----------------------------===//
//
// gacc.softmax and gacc.attention: verifiers and result types, and
// softmax's decomposition into linalg.softmax, which gacc-autodiff
// differentiates. Attention's query blocks, decomposition and adjoint live
// in Attention.cpp.
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
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType();
  if (q.getRank() != 4)
    return emitOpError("query must be rank 4 [m, heads, positions, head "
                       "size], got ")
           << q;
  if (getKey().getType() != q || getValue().getType() != q)
    return emitOpError("query, key and value must have one shape, got ")
           << q << ", " << getKey().getType() << ", "
           << getValue().getType();
  if (llvm::is_contained(q.getShape(), 0))
    return emitOpError("query must not have an empty dimension, got ") << q;
  if (getScale()) {
    // Applied in f32: positive, finite and normal there.
    double scale = getScale()->convertToDouble();
    if (!(scale >= double(std::numeric_limits<float>::min()) &&
          scale <= double(std::numeric_limits<float>::max())))
      return emitOpError("scale must be positive and finite in f32, got ")
             << scale;
  }
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(operands[0].getType());
  return success();
}

double AttentionOp::getScaleOrDefault() {
  if (getScale())
    return getScale()->convertToDouble();
  return 1.0 / std::sqrt(double(getQuery().getType().getDimSize(3)));
}
