//===- SequenceOps.cpp - softmax and attention ----------------------------===//
//
// gacc.softmax and gacc.attention: verifiers, result types and their
// decompositions into linalg (linalg.softmax, linalg.batch_matmul and an
// elementwise scaling and causal mask), which gacc-autodiff differentiates.
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

/// A zero-initialized default-map linalg.batch_matmul a·b.
static Value batchMatmul(OpBuilder &b, Location loc, Value a, Value bMat) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bMat.getType());
  auto type = RankedTensorType::get(
      {at.getDimSize(0), at.getDimSize(1), bt.getDimSize(2)},
      at.getElementType());
  Value init = buildFilled(b, loc, type, 0.0);
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{type},
                                       ValueRange{a, bMat}, ValueRange{init})
      .getResult(0);
}

FailureOr<SmallVector<Value>> AttentionOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto qt = getQuery().getType();
  int64_t m = qt.getDimSize(0), h = qt.getDimSize(1), t = qt.getDimSize(2),
          d = qt.getDimSize(3);
  Type f32 = qt.getElementType();
  SmallVector<ReassociationIndices> heads = {{0, 1}, {2}, {3}};
  auto collapse = [&](Value v) -> Value {
    return tensor::CollapseShapeOp::create(b, loc, v, heads);
  };
  Value q = collapse(getQuery()), k = collapse(getKey()),
        v = collapse(getValue());
  // kᵀ [m·H, d, T].
  Value ktInit = tensor::EmptyOp::create(b, loc, {m * h, d, t}, f32);
  Value kt = linalg::TransposeOp::create(b, loc, k, ktInit,
                                         ArrayRef<int64_t>{0, 2, 1})
                 .getResult()[0];
  Value scores = batchMatmul(b, loc, q, kt);
  // Scaled, the future masked with −∞ (position i sees j ≤ i).
  auto st = cast<RankedTensorType>(scores.getType());
  double scale = getScaleOrDefault();
  bool causal = getCausal();
  AffineMap id = b.getMultiDimIdentityMap(3);
  Value masked =
      linalg::GenericOp::create(
          b, loc, TypeRange{st}, ValueRange{scores},
          ValueRange{tensor::EmptyOp::create(b, loc, st.getShape(), f32)},
          SmallVector<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value c = arith::ConstantOp::create(nb, nl,
                                                nb.getF32FloatAttr(scale));
            Value s = arith::MulFOp::create(nb, nl, a[0], c);
            if (causal) {
              Value i = linalg::IndexOp::create(nb, nl, 1);
              Value j = linalg::IndexOp::create(nb, nl, 2);
              Value future = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::ugt, j, i);
              Value minusInf = arith::ConstantOp::create(
                  nb, nl,
                  nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
              s = arith::SelectOp::create(nb, nl, future, minusInf, s);
            }
            linalg::YieldOp::create(nb, nl, s);
          })
          .getResult(0);
  Value probs =
      linalg::SoftmaxOp::create(
          b, loc, TypeRange{st}, masked,
          tensor::EmptyOp::create(b, loc, st.getShape(), f32), 2)
          .getResult()[0];
  Value out = batchMatmul(b, loc, probs, v);
  return SmallVector<Value>{tensor::ExpandShapeOp::create(
      b, loc, qt, out, heads)};
}
