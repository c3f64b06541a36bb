//===- LinalgBuilders.cpp - linalg building blocks of the layer ops -------===//
//
// Implements the formulas shared by the forward lowering and the adjoints:
// fills, matmuls with transposes, elementwise maps, row sums, the bias add
// and the stable softmax cross-entropy (forward sum and gradient).
//
//===----------------------------------------------------------------------===//

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gacc;

static SmallVector<utils::IteratorType> iterators(unsigned parallel,
                                                  unsigned reduction = 0) {
  SmallVector<utils::IteratorType> its(parallel, utils::IteratorType::parallel);
  its.append(reduction, utils::IteratorType::reduction);
  return its;
}

static Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value mlir::gacc::buildFilled(OpBuilder &b, Location loc,
                              RankedTensorType type, double value) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  Value v = f32Const(b, loc, value);
  return linalg::FillOp::create(b, loc, v, empty).getResult(0);
}

Value mlir::gacc::buildMatmul(OpBuilder &b, Location loc, Value a, Value bMat,
                              bool transposeA, bool transposeB) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bMat.getType());
  int64_t m = at.getDimSize(transposeA ? 1 : 0);
  int64_t n = bt.getDimSize(transposeB ? 0 : 1);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  auto mapA = AffineMap::get(3, 0, transposeA ? ArrayRef<AffineExpr>{d2, d0}
                                              : ArrayRef<AffineExpr>{d0, d2},
                             ctx);
  auto mapB = AffineMap::get(3, 0, transposeB ? ArrayRef<AffineExpr>{d1, d2}
                                              : ArrayRef<AffineExpr>{d2, d1},
                             ctx);
  auto mapC = AffineMap::get(3, 0, {d0, d1}, ctx);
  Value init = buildFilled(
      b, loc, RankedTensorType::get({m, n}, at.getElementType()), 0.0);
  auto maps = b.getAffineMapArrayAttr({mapA, mapB, mapC});
  // Default maps are implied; spell them only when an operand is transposed.
  SmallVector<NamedAttribute> attrs;
  if (transposeA || transposeB)
    attrs.push_back(b.getNamedAttr("indexing_maps", maps));
  auto mm = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                     ValueRange{a, bMat}, ValueRange{init},
                                     attrs);
  return mm.getResult(0);
}

Value mlir::gacc::buildElementwise(OpBuilder &b, Location loc,
                                   ValueRange inputs,
                                   RankedTensorType resultType,
                                   ScalarBodyFn body) {
  unsigned rank = resultType.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size() + 1, id);
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
      iterators(rank), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = body(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, r);
      });
  return op.getResult(0);
}

Value mlir::gacc::buildSumRows(OpBuilder &b, Location loc, Value x) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = RankedTensorType::get({xt.getDimSize(1)}, xt.getElementType());
  Value init = buildFilled(b, loc, rt, 0.0);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {d0, d1}, ctx),
                                 AffineMap::get(2, 0, {d1}, ctx)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{rt}, ValueRange{x}, ValueRange{init}, maps,
      {utils::IteratorType::reduction, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value s = arith::AddFOp::create(nb, nl, args[1], args[0]);
        linalg::YieldOp::create(nb, nl, s);
      });
  return op.getResult(0);
}

Value mlir::gacc::buildAddBias(OpBuilder &b, Location loc, Value x,
                               Value bias) {
  auto xt = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {d1}, ctx),
                                 AffineMap::get(2, 0, {d0, d1}, ctx)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{xt}, ValueRange{bias}, ValueRange{x}, maps,
      iterators(2), [](OpBuilder &nb, Location nl, ValueRange args) {
        Value s = arith::AddFOp::create(nb, nl, args[1], args[0]);
        linalg::YieldOp::create(nb, nl, s);
      });
  return op.getResult(0);
}

/// label (i32/i64) -> index, and whether it equals `ignoreIndex`.
static std::pair<Value, Value> labelIndex(OpBuilder &b, Location loc,
                                          Value label, int64_t ignoreIndex) {
  Value idx = arith::IndexCastOp::create(b, loc, b.getIndexType(), label);
  Value ign = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(label.getType(), ignoreIndex));
  Value ignored =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, label, ign);
  return {idx, ignored};
}

CrossEntropyStats mlir::gacc::buildCrossEntropyStats(OpBuilder &b,
                                                     Location loc,
                                                     Value logits,
                                                     Value labels) {
  auto zt = cast<RankedTensorType>(logits.getType());
  auto rowType =
      RankedTensorType::get({zt.getDimSize(0)}, zt.getElementType());
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  AffineMap mIJ = AffineMap::get(2, 0, {d0, d1}, ctx);
  AffineMap mI = AffineMap::get(2, 0, {d0}, ctx);

  Value maxInit = buildFilled(b, loc, rowType,
                              -std::numeric_limits<double>::infinity());
  Value rowMax =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowType}, ValueRange{logits}, ValueRange{maxInit},
          SmallVector<AffineMap>{mIJ, mI}, iterators(1, 1),
          [](OpBuilder &nb, Location nl, ValueRange args) {
            Value m = arith::MaximumFOp::create(nb, nl, args[1], args[0]);
            linalg::YieldOp::create(nb, nl, m);
          })
          .getResult(0);

  // Two distinct inits: one tensor as the init of two results would need a
  // copy when bufferized.
  Value sumInit = buildFilled(b, loc, rowType, 0.0);
  Value labelInit = buildFilled(b, loc, rowType, 0.0);
  auto stats = linalg::GenericOp::create(
      b, loc, TypeRange{rowType, rowType}, ValueRange{logits, rowMax, labels},
      ValueRange{sumInit, labelInit}, SmallVector<AffineMap>{mIJ, mI, mI, mI, mI},
      iterators(1, 1), [](OpBuilder &nb, Location nl, ValueRange args) {
        Value shifted = arith::SubFOp::create(nb, nl, args[0], args[1]);
        Value e = math::ExpOp::create(nb, nl, shifted);
        Value sum = arith::AddFOp::create(nb, nl, args[3], e);
        Value j = linalg::IndexOp::create(nb, nl, 1);
        Value y = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                             args[2]);
        Value hit =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, j, y);
        Value withLabel = arith::AddFOp::create(nb, nl, args[4], args[0]);
        Value lab = arith::SelectOp::create(nb, nl, hit, withLabel, args[4]);
        linalg::YieldOp::create(nb, nl, ValueRange{sum, lab});
      });
  return {rowMax, stats.getResult(0), stats.getResult(1)};
}

Value mlir::gacc::buildCrossEntropySum(OpBuilder &b, Location loc,
                                       const CrossEntropyStats &stats,
                                       Value labels, int64_t ignoreIndex) {
  MLIRContext *ctx = b.getContext();
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value init = buildFilled(b, loc, scalar, 0.0);
  AffineExpr d0;
  bindDims(ctx, d0);
  AffineMap mI = AffineMap::get(1, 0, {d0}, ctx);
  AffineMap mScalar = AffineMap::get(1, 0, {}, ctx);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{scalar},
      ValueRange{stats.rowMax, stats.sumExp, stats.labelLogit, labels},
      ValueRange{init}, SmallVector<AffineMap>{mI, mI, mI, mI, mScalar},
      iterators(0, 1), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value lse = arith::AddFOp::create(
            nb, nl, args[0], math::LogOp::create(nb, nl, args[1]));
        Value l = arith::SubFOp::create(nb, nl, lse, args[2]);
        auto [idx, ignored] = labelIndex(nb, nl, args[3], ignoreIndex);
        (void)idx;
        Value zeroF = f32Const(nb, nl, 0.0);
        Value contrib = arith::SelectOp::create(nb, nl, ignored, zeroF, l);
        Value s = arith::AddFOp::create(nb, nl, args[4], contrib);
        linalg::YieldOp::create(nb, nl, s);
      });
  return op.getResult(0);
}

Value mlir::gacc::buildCrossEntropyGrad(OpBuilder &b, Location loc,
                                        Value logits, Value labels,
                                        const CrossEntropyStats &stats,
                                        Value lossAdjoint,
                                        int64_t ignoreIndex) {
  auto zt = cast<RankedTensorType>(logits.getType());
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  AffineMap mIJ = AffineMap::get(2, 0, {d0, d1}, ctx);
  AffineMap mI = AffineMap::get(2, 0, {d0}, ctx);
  AffineMap mScalar = AffineMap::get(2, 0, {}, ctx);
  Value init = tensor::EmptyOp::create(b, loc, zt.getShape(),
                                       zt.getElementType());
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{zt},
      ValueRange{logits, stats.rowMax, stats.sumExp, labels, lossAdjoint},
      ValueRange{init},
      SmallVector<AffineMap>{mIJ, mI, mI, mI, mScalar, mIJ}, iterators(2),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value shifted = arith::SubFOp::create(nb, nl, args[0], args[1]);
        Value p = arith::DivFOp::create(
            nb, nl, math::ExpOp::create(nb, nl, shifted), args[2]);
        auto [y, ignored] = labelIndex(nb, nl, args[3], ignoreIndex);
        Value j = linalg::IndexOp::create(nb, nl, 1);
        Value hit =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, j, y);
        Value one = f32Const(nb, nl, 1.0);
        Value zeroF = f32Const(nb, nl, 0.0);
        Value t = arith::SelectOp::create(nb, nl, hit, one, zeroF);
        Value d = arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, p, t), args[4]);
        Value r = arith::SelectOp::create(nb, nl, ignored, zeroF, d);
        linalg::YieldOp::create(nb, nl, r);
      });
  return op.getResult(0);
}
