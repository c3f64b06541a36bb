//===- LinalgBuilders.cpp - linalg building blocks of the layer ops -------===//
//
// Implements the formulas shared by the forward lowering and the adjoints:
// fills, matmuls with transposes, elementwise maps, row sums, the bias add
// and the stable softmax cross-entropy (forward sum and gradient); the
// rounding to the compute type and its matcher.
//
//===----------------------------------------------------------------------===//

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

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
  Value v = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(b, loc, v, empty).getResult(0);
}

Value mlir::gacc::buildMatmul(OpBuilder &b, Location loc, Value a, Value bMat,
                              bool transposeA, bool transposeB, Value init) {
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
  if (!init)
    init = buildFilled(
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

Value mlir::gacc::buildBatchMatmul(OpBuilder &b, Location loc, Value a,
                                   Value bMat, bool transposeA,
                                   bool transposeB, Value init) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bMat.getType());
  if (!init)
    init = buildFilled(
        b, loc,
        RankedTensorType::get({at.getDimSize(0),
                               at.getDimSize(transposeA ? 2 : 1),
                               bt.getDimSize(transposeB ? 1 : 2)},
                              at.getElementType()),
        0.0);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  auto map = [&](AffineExpr r, AffineExpr c) {
    return AffineMap::get(4, 0, {d0, r, c}, ctx);
  };
  // Over (b, i, j, k); default maps are implied, spelled only when an
  // operand is transposed.
  SmallVector<NamedAttribute> attrs;
  if (transposeA || transposeB)
    attrs.push_back(b.getNamedAttr(
        "indexing_maps",
        b.getAffineMapArrayAttr({transposeA ? map(d3, d1) : map(d1, d3),
                                 transposeB ? map(d2, d3) : map(d3, d2),
                                 map(d1, d2)})));
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{a, bMat}, ValueRange{init},
                                       attrs)
      .getResult(0);
}

Value mlir::gacc::buildSoftmaxGrad(OpBuilder &b, Location loc, Value y,
                                   Value dy, int64_t dim, double scale) {
  auto type = cast<RankedTensorType>(y.getType());
  unsigned rank = type.getRank();
  AffineMap full = b.getMultiDimIdentityMap(rank);
  AffineMap reduced = full.dropResult(dim);
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + dim);
  auto rowType = RankedTensorType::get(shape, type.getElementType());
  SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
  its[dim] = utils::IteratorType::reduction;
  Value dot = linalg::GenericOp::create(
                  b, loc, TypeRange{rowType}, ValueRange{dy, y},
                  ValueRange{buildFilled(b, loc, rowType, 0.0)},
                  SmallVector<AffineMap>{full, full, reduced}, its,
                  [](OpBuilder &nb, Location nl, ValueRange a) {
                    Value p = arith::MulFOp::create(nb, nl, a[0], a[1]);
                    linalg::YieldOp::create(
                        nb, nl, Value(arith::AddFOp::create(nb, nl, a[2], p)));
                  })
                  .getResult(0);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{dy, y, dot}, ValueRange{init},
             SmallVector<AffineMap>{full, full, reduced, full},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value d = arith::SubFOp::create(nb, nl, a[0], a[2]);
               Value dx = arith::MulFOp::create(nb, nl, a[1], d);
               if (scale != 1.0)
                 dx = arith::MulFOp::create(
                     nb, nl, dx,
                     arith::ConstantOp::create(nb, nl,
                                               nb.getF32FloatAttr(scale)));
               linalg::YieldOp::create(nb, nl, dx);
             })
      .getResult(0);
}

FailureOr<std::pair<bool, bool>>
mlir::gacc::getMatmulTransposes(Operation *op) {
  // linalg.matmul over (i, j, k); linalg.batch_matmul over (b, i, j, k).
  unsigned batch;
  if (isa<linalg::MatmulOp>(op))
    batch = 0;
  else if (isa<linalg::BatchMatmulOp>(op))
    batch = 1;
  else
    return failure();
  MLIRContext *ctx = op->getContext();
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < batch + 3; ++i)
    d.push_back(getAffineDimExpr(i, ctx));
  auto map = [&](AffineExpr r, AffineExpr c) {
    SmallVector<AffineExpr> e(d.begin(), d.begin() + batch);
    e.append({r, c});
    return AffineMap::get(batch + 3, 0, e, ctx);
  };
  AffineExpr i = d[batch], j = d[batch + 1], k = d[batch + 2];
  SmallVector<AffineMap> maps =
      cast<linalg::LinalgOp>(op).getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map(i, j))
    return failure();
  bool ta = maps[0] == map(k, i), tb = maps[1] == map(j, k);
  if ((!ta && maps[0] != map(i, k)) || (!tb && maps[1] != map(k, j)))
    return failure();
  return std::make_pair(ta, tb);
}

std::array<Value, 4> mlir::gacc::buildPhilox4x32(OpBuilder &b, Location loc,
                                                 std::array<Value, 4> c,
                                                 std::array<Value, 2> k) {
  auto constant = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  };
  Value m0 = constant(0xD2511F53u), m1 = constant(0xCD9E8D57u);
  Value w0 = constant(0x9E3779B9u), w1 = constant(0xBB67AE85u);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, loc, k[0], w0);
      k[1] = arith::AddIOp::create(b, loc, k[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    auto xor3 = [&](Value x, Value y, Value z) -> Value {
      Value xy = arith::XOrIOp::create(b, loc, x, y);
      return arith::XOrIOp::create(b, loc, xy, z);
    };
    // The braced list is evaluated left to right.
    c = {xor3(p1.getHigh(), c[1], k[0]), p1.getLow(),
         xor3(p0.getHigh(), c[3], k[1]), p0.getLow()};
  }
  return c;
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

Value mlir::gacc::buildConvertElements(OpBuilder &b, Location loc, Value x,
                                       Type elemType) {
  auto t = cast<RankedTensorType>(x.getType());
  auto from = cast<FloatType>(t.getElementType());
  return buildElementwise(
      b, loc, ValueRange{x}, t.clone(elemType),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        if (cast<FloatType>(elemType).getWidth() < from.getWidth())
          return arith::TruncFOp::create(nb, nl, elemType, a[0]);
        return arith::ExtFOp::create(nb, nl, elemType, a[0]);
      });
}

Value mlir::gacc::buildRoundToCompute(OpBuilder &b, Location loc, Value x,
                                      FloatType computeType) {
  auto type = cast<RankedTensorType>(x.getType());
  return buildElementwise(
      b, loc, ValueRange{x}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value low = arith::TruncFOp::create(nb, nl, computeType, a[0]);
        return arith::ExtFOp::create(nb, nl, nb.getF32Type(), low);
      });
}

bool mlir::gacc::isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.value(), m_AnyZeroFloat());
}

bool mlir::gacc::isIdentityElementwise(linalg::GenericOp op) {
  return op.getNumReductionLoops() == 0 &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); });
}

Value mlir::gacc::matchRoundToCompute(Value v, FloatType computeType) {
  auto op = v.getDefiningOp<linalg::GenericOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || !isIdentityElementwise(op))
    return {};
  Value yielded = op.getBlock()->getTerminator()->getOperand(0);
  auto ext = yielded.getDefiningOp<arith::ExtFOp>();
  auto trunc = ext ? ext.getIn().getDefiningOp<arith::TruncFOp>() : nullptr;
  if (!trunc || trunc.getType() != computeType ||
      trunc.getIn() != op.getBlock()->getArgument(0))
    return {};
  return op.getDpsInputs()[0];
}

bool mlir::gacc::isElementwiseSum(Operation *operation) {
  auto op = dyn_cast<linalg::GenericOp>(operation);
  return op && op.hasPureTensorSemantics() && isIdentityElementwise(op) &&
         linalg::isaElemwiseSingleBinaryOpInterface(op) &&
         isa<arith::AddFOp>(op.getBlock()->front());
}

bool mlir::gacc::isExactIn(const APFloat &value, FloatType type) {
  APFloat converted = value;
  bool losesInfo = false;
  converted.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
  return !losesInfo;
}

/// An f64 tensor rounded to f32 elementwise.
static Value truncToF32(OpBuilder &b, Location loc, Value x) {
  return buildConvertElements(b, loc, x, b.getF32Type());
}

/// acc + f64(x): long reductions (over every row of a micro-batch or of its
/// sequence positions) accumulate in f64, so that a sum over one large
/// micro-batch and the sum of N smaller ones agree to fp32 rounding.
static Value addF64(OpBuilder &b, Location loc, Value acc, Value x) {
  Value wide = arith::ExtFOp::create(b, loc, b.getF64Type(), x);
  return arith::AddFOp::create(b, loc, acc, wide);
}

Value mlir::gacc::buildSumRowsF64(OpBuilder &b, Location loc, Value x,
                                  Value partial) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = RankedTensorType::get({xt.getDimSize(1)}, b.getF64Type());
  Value init = partial ? partial : buildFilled(b, loc, rt, 0.0);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {d0, d1}, ctx),
                                 AffineMap::get(2, 0, {d1}, ctx)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{rt}, ValueRange{x}, ValueRange{init}, maps,
      {utils::IteratorType::reduction, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, addF64(nb, nl, args[1], args[0]));
      });
  return op.getResult(0);
}

Value mlir::gacc::buildSumRows(OpBuilder &b, Location loc, Value x) {
  return truncToF32(b, loc, buildSumRowsF64(b, loc, x));
}

Value mlir::gacc::buildAddBias(OpBuilder &b, Location loc, Value x,
                               Value bias, unsigned biasDim) {
  auto xt = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  SmallVector<AffineMap> maps = {
      AffineMap::get(2, 0, {biasDim == 0 ? d0 : d1}, ctx),
      AffineMap::get(2, 0, {d0, d1}, ctx)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{xt}, ValueRange{bias}, ValueRange{x}, maps,
      iterators(2), [](OpBuilder &nb, Location nl, ValueRange args) {
        Value s = arith::AddFOp::create(nb, nl, args[1], args[0]);
        linalg::YieldOp::create(nb, nl, s);
      });
  return op.getResult(0);
}

/// Whether a label (i32/i64) equals `ignoreIndex`.
static Value isIgnored(OpBuilder &b, Location loc, Value label,
                       int64_t ignoreIndex) {
  Value ign = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(label.getType(), ignoreIndex));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, label, ign);
}

/// The target weight w_ij of class j in row i (`hit`: j is the label):
/// 1 or 0 without smoothing, (1 − ε) + ε/C or ε/C with (f32 constants).
static Value targetWeight(OpBuilder &b, Location loc, Value hit,
                          double labelSmoothing, int64_t numClasses) {
  double off = labelSmoothing / double(numClasses);
  double on = labelSmoothing == 0.0 ? 1.0 : (1.0 - labelSmoothing) + off;
  return arith::SelectOp::create(b, loc, hit, f32Const(b, loc, on),
                                 f32Const(b, loc, off));
}

CrossEntropyStats mlir::gacc::buildCrossEntropyStats(OpBuilder &b,
                                                     Location loc,
                                                     Value logits,
                                                     Value labels,
                                                     double labelSmoothing) {
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
      iterators(1, 1), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value shifted = arith::SubFOp::create(nb, nl, args[0], args[1]);
        Value e = math::ExpOp::create(nb, nl, shifted);
        Value sum = arith::AddFOp::create(nb, nl, args[3], e);
        Value j = linalg::IndexOp::create(nb, nl, 1);
        Value y = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                             args[2]);
        Value hit =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, j, y);
        Value lab;
        if (labelSmoothing == 0.0) {
          Value withLabel = arith::AddFOp::create(nb, nl, args[4], args[0]);
          lab = arith::SelectOp::create(nb, nl, hit, withLabel, args[4]);
        } else {
          Value w = targetWeight(nb, nl, hit, labelSmoothing,
                                 zt.getDimSize(1));
          lab = arith::AddFOp::create(
              nb, nl, args[4], arith::MulFOp::create(nb, nl, w, args[0]));
        }
        linalg::YieldOp::create(nb, nl, ValueRange{sum, lab});
      });
  return {rowMax, stats.getResult(0), stats.getResult(1)};
}

Value mlir::gacc::buildCrossEntropySumF64(OpBuilder &b, Location loc,
                                          const CrossEntropyStats &stats,
                                          Value labels, int64_t ignoreIndex,
                                          Value partial) {
  MLIRContext *ctx = b.getContext();
  auto scalar = RankedTensorType::get({}, b.getF64Type());
  Value init = partial ? partial : buildFilled(b, loc, scalar, 0.0);
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
        Value ignored = isIgnored(nb, nl, args[3], ignoreIndex);
        Value zeroF = f32Const(nb, nl, 0.0);
        Value contrib = arith::SelectOp::create(nb, nl, ignored, zeroF, l);
        linalg::YieldOp::create(nb, nl, addF64(nb, nl, args[4], contrib));
      });
  return op.getResult(0);
}

Value mlir::gacc::buildCrossEntropySum(OpBuilder &b, Location loc,
                                       const CrossEntropyStats &stats,
                                       Value labels, int64_t ignoreIndex) {
  return truncToF32(
      b, loc, buildCrossEntropySumF64(b, loc, stats, labels, ignoreIndex));
}

Value mlir::gacc::buildCrossEntropyGrad(OpBuilder &b, Location loc,
                                        Value logits, Value labels,
                                        const CrossEntropyStats &stats,
                                        Value lossAdjoint,
                                        int64_t ignoreIndex,
                                        double labelSmoothing) {
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
        Value y = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                             args[3]);
        Value ignored = isIgnored(nb, nl, args[3], ignoreIndex);
        Value j = linalg::IndexOp::create(nb, nl, 1);
        Value hit =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, j, y);
        Value zeroF = f32Const(nb, nl, 0.0);
        Value t = targetWeight(nb, nl, hit, labelSmoothing, zt.getDimSize(1));
        Value d = arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, p, t), args[4]);
        Value r = arith::SelectOp::create(nb, nl, ignored, zeroF, d);
        linalg::YieldOp::create(nb, nl, r);
      });
  return op.getResult(0);
}

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

Value mlir::gacc::buildSliceAlong(OpBuilder &b, Location loc, Value v,
                                  int64_t dim, int64_t offset, int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  if (offset == 0 && size == type.getDimSize(dim))
    return v;
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[dim] = b.getIndexAttr(offset);
  for (int64_t i = 0; i < type.getRank(); ++i)
    sizes.push_back(b.getIndexAttr(i == dim ? size : type.getDimSize(i)));
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

Value mlir::gacc::buildInsertAlong(OpBuilder &b, Location loc, Value part,
                                   Value whole, int64_t dim, int64_t offset) {
  auto pt = cast<RankedTensorType>(part.getType());
  if (pt == whole.getType())
    return part;
  SmallVector<OpFoldResult> offsets(pt.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(pt.getRank(), b.getIndexAttr(1));
  offsets[dim] = b.getIndexAttr(offset);
  for (int64_t size : pt.getShape())
    sizes.push_back(b.getIndexAttr(size));
  return tensor::InsertSliceOp::create(b, loc, part, whole, offsets, sizes,
                                       strides);
}

int64_t mlir::gacc::getRowsPerBlock(int64_t rows, int64_t width) {
  return std::clamp<int64_t>(kRowBlockElements / std::max<int64_t>(width, 1),
                             1, std::max<int64_t>(rows, 1));
}

void RowsWriter::write(OpBuilder &b, Location loc, Value part,
                       int64_t offset) {
  if (!whole && part.getType() != type)
    whole = tensor::EmptyOp::create(b, loc, type.getShape(),
                                    type.getElementType());
  whole = whole ? buildInsertAlong(b, loc, part, whole, dim, offset) : part;
}

Value mlir::gacc::buildCollapseToMatrix(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  if (t.getRank() == 2)
    return x;
  SmallVector<ReassociationIndices> both = {{0, 1}};
  if (t.getRank() == 1)
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1, t.getDimSize(0)}, t.getElementType()),
        x, both);
  ReassociationIndices lead, last = {t.getRank() - 1};
  for (int64_t i = 0; i + 1 < t.getRank(); ++i)
    lead.push_back(i);
  return tensor::CollapseShapeOp::create(b, loc, x,
                                         SmallVector<ReassociationIndices>{
                                             lead, last});
}

Value mlir::gacc::buildExpandFromMatrix(OpBuilder &b, Location loc, Value m,
                                        RankedTensorType type) {
  if (type.getRank() == 2)
    return m;
  if (type.getRank() == 1)
    return tensor::CollapseShapeOp::create(
        b, loc, type, m, SmallVector<ReassociationIndices>{{0, 1}});
  ReassociationIndices lead, last = {type.getRank() - 1};
  for (int64_t i = 0; i + 1 < type.getRank(); ++i)
    lead.push_back(i);
  return tensor::ExpandShapeOp::create(
      b, loc, type, m, SmallVector<ReassociationIndices>{lead, last});
}

Value mlir::gacc::buildFlatten(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  if (t.getRank() == 1)
    return x;
  ReassociationIndices all;
  for (int64_t i = 0; i < t.getRank(); ++i)
    all.push_back(i);
  return tensor::CollapseShapeOp::create(
      b, loc, x, SmallVector<ReassociationIndices>{all});
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

Value mlir::gacc::buildEmbedding(OpBuilder &b, Location loc, Value indices,
                                 Value weight) {
  auto it = cast<RankedTensorType>(indices.getType());
  auto wt = cast<RankedTensorType>(weight.getType());
  SmallVector<int64_t> shape(it.getShape());
  shape.push_back(wt.getDimSize(1));
  auto rt = RankedTensorType::get(shape, wt.getElementType());
  unsigned rank = rt.getRank();
  AffineMap out = b.getMultiDimIdentityMap(rank);
  AffineMap idxMap = out.getMajorSubMap(rank - 1);
  Value init = tensor::EmptyOp::create(b, loc, shape, wt.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{rt}, ValueRange{indices}, ValueRange{init},
             SmallVector<AffineMap>{idxMap, out}, iterators(rank),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value row = arith::IndexCastOp::create(nb, nl,
                                                      nb.getIndexType(),
                                                      args[0]);
               Value col = linalg::IndexOp::create(nb, nl, rank - 1);
               Value v = tensor::ExtractOp::create(nb, nl, weight,
                                                   ValueRange{row, col});
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

Value mlir::gacc::buildOneHot(OpBuilder &b, Location loc, Value flatIndices,
                              int64_t vocabulary) {
  auto it = cast<RankedTensorType>(flatIndices.getType());
  auto rt = RankedTensorType::get({it.getDimSize(0), vocabulary},
                                  b.getF32Type());
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  Value init = tensor::EmptyOp::create(b, loc, rt.getShape(), b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{rt}, ValueRange{flatIndices}, ValueRange{init},
             SmallVector<AffineMap>{AffineMap::get(2, 0, {d0}, ctx),
                                    AffineMap::get(2, 0, {d0, d1}, ctx)},
             iterators(2),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = linalg::IndexOp::create(nb, nl, 1);
               Value idx = arith::IndexCastOp::create(nb, nl,
                                                      nb.getIndexType(),
                                                      args[0]);
               Value hit = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, v, idx);
               Value r = arith::SelectOp::create(nb, nl, hit,
                                                 f32Const(nb, nl, 1.0),
                                                 f32Const(nb, nl, 0.0));
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Layer normalization
//===----------------------------------------------------------------------===//

namespace {
struct RowMaps {
  AffineMap ij, i, j;
};
RowMaps rowMaps(MLIRContext *ctx) {
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  return {AffineMap::get(2, 0, {d0, d1}, ctx), AffineMap::get(2, 0, {d0}, ctx),
          AffineMap::get(2, 0, {d1}, ctx)};
}
} // namespace

LayerNormStats mlir::gacc::buildLayerNormStats(OpBuilder &b, Location loc,
                                               Value x, double eps) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rows = xt.getDimSize(0), d = xt.getDimSize(1);
  auto rowType = RankedTensorType::get({rows}, b.getF32Type());
  RowMaps m = rowMaps(b.getContext());
  Value sumInit = buildFilled(b, loc, rowType, 0.0);
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{rowType}, ValueRange{x},
                  ValueRange{sumInit}, SmallVector<AffineMap>{m.ij, m.i},
                  iterators(1, 1),
                  [](OpBuilder &nb, Location nl, ValueRange a) {
                    linalg::YieldOp::create(
                        nb, nl, Value(arith::AddFOp::create(nb, nl, a[1], a[0])));
                  })
                  .getResult(0);
  Value invD = f32Const(b, loc, 1.0 / double(d));
  Value mean = buildElementwise(
      b, loc, ValueRange{sum}, rowType,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::MulFOp::create(nb, nl, a[0], invD);
      });
  Value sqInit = buildFilled(b, loc, rowType, 0.0);
  Value sq = linalg::GenericOp::create(
                 b, loc, TypeRange{rowType}, ValueRange{x, mean},
                 ValueRange{sqInit}, SmallVector<AffineMap>{m.ij, m.i, m.i},
                 iterators(1, 1),
                 [](OpBuilder &nb, Location nl, ValueRange a) {
                   Value c = arith::SubFOp::create(nb, nl, a[0], a[1]);
                   Value s = arith::MulFOp::create(nb, nl, c, c);
                   linalg::YieldOp::create(
                       nb, nl, Value(arith::AddFOp::create(nb, nl, a[2], s)));
                 })
                 .getResult(0);
  Value epsV = f32Const(b, loc, eps);
  Value rstd = buildElementwise(
      b, loc, ValueRange{sq}, rowType,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value var = arith::MulFOp::create(nb, nl, a[0], invD);
        Value ve = arith::AddFOp::create(nb, nl, var, epsV);
        return math::RsqrtOp::create(nb, nl, ve);
      });
  return {mean, rstd};
}

Value mlir::gacc::buildLayerNorm(OpBuilder &b, Location loc, Value x,
                                 const LayerNormStats &stats, Value weight,
                                 Value bias) {
  auto xt = cast<RankedTensorType>(x.getType());
  RowMaps m = rowMaps(b.getContext());
  Value init = tensor::EmptyOp::create(b, loc, xt.getShape(),
                                       xt.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{xt},
             ValueRange{x, stats.mean, stats.rstd, weight, bias},
             ValueRange{init},
             SmallVector<AffineMap>{m.ij, m.i, m.i, m.j, m.j, m.ij},
             iterators(2), buildNormalizeBody)
      .getResult(0);
}

void mlir::gacc::buildNormalizeBody(OpBuilder &b, Location loc,
                                    ValueRange a) {
  Value c = arith::SubFOp::create(b, loc, a[0], a[1]);
  Value xhat = arith::MulFOp::create(b, loc, c, a[2]);
  Value y = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, xhat, a[3]), a[4]);
  linalg::YieldOp::create(b, loc, y);
}

LayerNormGrads mlir::gacc::buildLayerNormGrad(OpBuilder &b, Location loc,
                                              Value x,
                                              const LayerNormStats &stats,
                                              Value weight, Value dy,
                                              bool needX) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rows = xt.getDimSize(0), d = xt.getDimSize(1);
  RowMaps m = rowMaps(b.getContext());
  auto rowType = RankedTensorType::get({rows}, b.getF32Type());
  auto xhatOf = [](OpBuilder &nb, Location nl, Value xv, Value mean,
                   Value rstd) -> Value {
    return arith::MulFOp::create(nb, nl,
                                 arith::SubFOp::create(nb, nl, xv, mean), rstd);
  };
  // dweight = Σ_r dy·x̂, dbias = Σ_r dy: one reduction over rows (in f64).
  auto colType64 = RankedTensorType::get({d}, b.getF64Type());
  Value dwInit = buildFilled(b, loc, colType64, 0.0);
  Value dbInit = buildFilled(b, loc, colType64, 0.0);
  auto params = linalg::GenericOp::create(
      b, loc, TypeRange{colType64, colType64},
      ValueRange{x, stats.mean, stats.rstd, dy}, ValueRange{dwInit, dbInit},
      SmallVector<AffineMap>{m.ij, m.i, m.i, m.ij, m.j, m.j},
      {utils::IteratorType::reduction, utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value xhat = xhatOf(nb, nl, a[0], a[1], a[2]);
        Value dw =
            addF64(nb, nl, a[4], arith::MulFOp::create(nb, nl, a[3], xhat));
        Value db = addF64(nb, nl, a[5], a[3]);
        linalg::YieldOp::create(nb, nl, ValueRange{dw, db});
      });
  LayerNormGrads grads{Value(), truncToF32(b, loc, params.getResult(0)),
                       truncToF32(b, loc, params.getResult(1))};
  if (!needX)
    return grads;
  // Row sums of g = dy·weight and of g·x̂.
  Value gInit = buildFilled(b, loc, rowType, 0.0);
  Value gxInit = buildFilled(b, loc, rowType, 0.0);
  auto sums = linalg::GenericOp::create(
      b, loc, TypeRange{rowType, rowType},
      ValueRange{x, stats.mean, stats.rstd, dy, weight},
      ValueRange{gInit, gxInit},
      SmallVector<AffineMap>{m.ij, m.i, m.i, m.ij, m.j, m.i, m.i},
      iterators(1, 1), [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value xhat = xhatOf(nb, nl, a[0], a[1], a[2]);
        Value g = arith::MulFOp::create(nb, nl, a[3], a[4]);
        Value s = arith::AddFOp::create(nb, nl, a[5], g);
        Value sx = arith::AddFOp::create(
            nb, nl, a[6], arith::MulFOp::create(nb, nl, g, xhat));
        linalg::YieldOp::create(nb, nl, ValueRange{s, sx});
      });
  Value invD = f32Const(b, loc, 1.0 / double(d));
  Value init = tensor::EmptyOp::create(b, loc, xt.getShape(),
                                       xt.getElementType());
  grads.dx =
      linalg::GenericOp::create(
          b, loc, TypeRange{xt},
          ValueRange{x, stats.mean, stats.rstd, dy, weight, sums.getResult(0),
                     sums.getResult(1)},
          ValueRange{init},
          SmallVector<AffineMap>{m.ij, m.i, m.i, m.ij, m.j, m.i, m.i, m.ij},
          iterators(2),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value xhat = xhatOf(nb, nl, a[0], a[1], a[2]);
            Value g = arith::MulFOp::create(nb, nl, a[3], a[4]);
            Value meanG = arith::MulFOp::create(nb, nl, a[5], invD);
            Value meanGX = arith::MulFOp::create(nb, nl, a[6], invD);
            Value t = arith::SubFOp::create(
                nb, nl, arith::SubFOp::create(nb, nl, g, meanG),
                arith::MulFOp::create(nb, nl, xhat, meanGX));
            linalg::YieldOp::create(
                nb, nl, Value(arith::MulFOp::create(nb, nl, t, a[2])));
          })
          .getResult(0);
  return grads;
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

Value mlir::gacc::buildGelu(OpBuilder &b, Location loc, Value x,
                            bool tanhForm) {
  auto type = cast<RankedTensorType>(x.getType());
  return buildElementwise(
      b, loc, ValueRange{x}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = a[0];
        Value half = f32Const(nb, nl, 0.5), one = f32Const(nb, nl, 1.0);
        Value inner;
        if (tanhForm) {
          Value x3 = arith::MulFOp::create(
              nb, nl, v, arith::MulFOp::create(nb, nl, v, v));
          Value arg = arith::MulFOp::create(
              nb, nl, f32Const(nb, nl, kGeluSqrt2OverPi),
              arith::AddFOp::create(
                  nb, nl, v,
                  arith::MulFOp::create(nb, nl, f32Const(nb, nl, kGeluCubic),
                                        x3)));
          inner = math::TanhOp::create(nb, nl, arg);
        } else {
          inner = math::ErfOp::create(
              nb, nl,
              arith::MulFOp::create(nb, nl, v,
                                    f32Const(nb, nl, 0.7071067811865476)));
        }
        Value h = arith::MulFOp::create(nb, nl, half, v);
        return arith::MulFOp::create(nb, nl, h,
                                     arith::AddFOp::create(nb, nl, one, inner));
      });
}

Value mlir::gacc::buildGeluGrad(OpBuilder &b, Location loc, Value x, Value dy,
                                bool tanhForm) {
  auto type = cast<RankedTensorType>(x.getType());
  return buildElementwise(
      b, loc, ValueRange{x, dy}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = a[0];
        Value half = f32Const(nb, nl, 0.5), one = f32Const(nb, nl, 1.0);
        Value x2 = arith::MulFOp::create(nb, nl, v, v);
        Value d;
        if (tanhForm) {
          Value x3 = arith::MulFOp::create(nb, nl, v, x2);
          Value k = f32Const(nb, nl, kGeluSqrt2OverPi);
          Value arg = arith::MulFOp::create(
              nb, nl, k,
              arith::AddFOp::create(
                  nb, nl, v,
                  arith::MulFOp::create(nb, nl, f32Const(nb, nl, kGeluCubic),
                                        x3)));
          Value t = math::TanhOp::create(nb, nl, arg);
          Value left =
              arith::MulFOp::create(nb, nl, half,
                                    arith::AddFOp::create(nb, nl, one, t));
          Value sech2 = arith::SubFOp::create(
              nb, nl, one, arith::MulFOp::create(nb, nl, t, t));
          Value dArg = arith::MulFOp::create(
              nb, nl, k,
              arith::AddFOp::create(
                  nb, nl, one,
                  arith::MulFOp::create(
                      nb, nl, f32Const(nb, nl, 3.0 * kGeluCubic), x2)));
          Value right = arith::MulFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, half, v),
              arith::MulFOp::create(nb, nl, sech2, dArg));
          d = arith::AddFOp::create(nb, nl, left, right);
        } else {
          Value cdf = arith::MulFOp::create(
              nb, nl, half,
              arith::AddFOp::create(
                  nb, nl, one,
                  math::ErfOp::create(
                      nb, nl,
                      arith::MulFOp::create(
                          nb, nl, v, f32Const(nb, nl, 0.7071067811865476)))));
          Value pdf = arith::MulFOp::create(
              nb, nl, f32Const(nb, nl, 0.3989422804014327),
              math::ExpOp::create(
                  nb, nl,
                  arith::MulFOp::create(nb, nl, f32Const(nb, nl, -0.5), x2)));
          d = arith::AddFOp::create(nb, nl, cdf,
                                    arith::MulFOp::create(nb, nl, v, pdf));
        }
        return arith::MulFOp::create(nb, nl, a[1], d);
      });
}

//===----------------------------------------------------------------------===//
// Normalization counts
//===----------------------------------------------------------------------===//

Value mlir::gacc::buildSampleMask(OpBuilder &b, Location loc, Value labels,
                                  int64_t ignoreIndex) {
  // The maximum of the "not ignored" indicator over each sample's targets
  // (dimension 0 parallel, the others reduced; none for [m] labels).
  auto lt = cast<RankedTensorType>(labels.getType());
  unsigned rank = lt.getRank();
  auto rowType = RankedTensorType::get({lt.getDimSize(0)}, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{rowType}, ValueRange{labels},
             ValueRange{buildFilled(b, loc, rowType, 0.0)},
             SmallVector<AffineMap>{
                 b.getMultiDimIdentityMap(rank),
                 AffineMap::get(rank, 0, {b.getAffineDimExpr(0)},
                                b.getContext())},
             iterators(1, rank - 1),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value ignored = isIgnored(nb, nl, a[0], ignoreIndex);
               Value one = arith::SelectOp::create(
                   nb, nl, ignored, f32Const(nb, nl, 0.0),
                   f32Const(nb, nl, 1.0));
               linalg::YieldOp::create(
                   nb, nl, Value(arith::MaximumFOp::create(nb, nl, a[1], one)));
             })
      .getResult(0);
}

Value mlir::gacc::buildNonIgnoredCount(OpBuilder &b, Location loc,
                                       Value labels, int64_t ignoreIndex,
                                       bool perToken) {
  auto lt = cast<RankedTensorType>(labels.getType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = lt.getRank();
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value counted;
  if (perToken || rank == 1) {
    Value init = buildFilled(b, loc, scalar, 0.0);
    counted =
        linalg::GenericOp::create(
            b, loc, TypeRange{scalar}, ValueRange{labels}, ValueRange{init},
            SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank),
                                   AffineMap::get(rank, 0, {}, ctx)},
            iterators(0, rank),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value ignored = isIgnored(nb, nl, a[0], ignoreIndex);
              Value one = arith::SelectOp::create(nb, nl, ignored,
                                                  f32Const(nb, nl, 0.0),
                                                  f32Const(nb, nl, 1.0));
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, a[1], one)));
            })
            .getResult(0);
  } else {
    // A sample counts when any of its targets is not ignored.
    Value any = buildSampleMask(b, loc, labels, ignoreIndex);
    Value init = buildFilled(b, loc, scalar, 0.0);
    AffineExpr d0;
    bindDims(ctx, d0);
    counted = linalg::GenericOp::create(
                  b, loc, TypeRange{scalar}, ValueRange{any}, ValueRange{init},
                  SmallVector<AffineMap>{AffineMap::get(1, 0, {d0}, ctx),
                                         AffineMap::get(1, 0, {}, ctx)},
                  iterators(0, 1),
                  [](OpBuilder &nb, Location nl, ValueRange a) {
                    linalg::YieldOp::create(
                        nb, nl,
                        Value(arith::AddFOp::create(nb, nl, a[1], a[0])));
                  })
                  .getResult(0);
  }
  return tensor::ExtractOp::create(b, loc, counted, ValueRange{});
}

Value mlir::gacc::buildScaledSumOfSquares(OpBuilder &b, Location loc, Value x,
                                          Value scale) {
  auto t = cast<RankedTensorType>(x.getType());
  unsigned rank = t.getRank();
  auto scalar = RankedTensorType::get({}, b.getF64Type());
  Value init = buildFilled(b, loc, scalar, 0.0);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{scalar}, ValueRange{x}, ValueRange{init},
      SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank),
                             AffineMap::get(rank, 0, {}, b.getContext())},
      iterators(0, rank), [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = arith::MulFOp::create(nb, nl, a[0], scale);
        linalg::YieldOp::create(
            nb, nl,
            addF64(nb, nl, a[1], arith::MulFOp::create(nb, nl, v, v)));
      });
  return tensor::ExtractOp::create(b, loc, op.getResult(0), ValueRange{});
}

Value mlir::gacc::buildUpdateDivisor(OpBuilder &b, Location loc, Value count,
                                     Value lossScale) {
  Value divisor = arith::MaximumFOp::create(b, loc, count, f32Const(b, loc, 1.0));
  if (lossScale)
    divisor = arith::MulFOp::create(b, loc, divisor, lossScale);
  return divisor;
}

Value mlir::gacc::buildClipCoefficient(OpBuilder &b, Location loc, Value norm,
                                       double maxNorm) {
  Value quotient = arith::DivFOp::create(
      b, loc, f32Const(b, loc, maxNorm),
      arith::AddFOp::create(b, loc, norm, f32Const(b, loc, 1e-6)));
  return arith::MinimumFOp::create(b, loc, f32Const(b, loc, 1.0), quotient);
}

/// The learning rate of this optimizer step under `schedule` (see
/// #gacc.lr_schedule): t = `step` (optimizer steps already taken).
Value mlir::gacc::buildScheduledLR(OpBuilder &b, Location loc,
                              LRScheduleAttr schedule, Value baseLr,
                              Value step) {
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  Value t = arith::SIToFPOp::create(b, loc, b.getF32Type(), step);
  Value lr = baseLr;
  StringRef decay = schedule.getDecay();
  if (decay != "constant") {
    Value minLr = c(schedule.getMinLr().convertToDouble());
    Value p = arith::DivFOp::create(
        b, loc,
        arith::SubFOp::create(b, loc, t, c(double(schedule.getWarmupSteps()))),
        c(double(schedule.getDecaySteps())));
    p = arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, p, c(0.0)), c(1.0));
    Value factor;
    if (decay == "cosine")
      factor = arith::MulFOp::create(
          b, loc, c(0.5),
          arith::AddFOp::create(
              b, loc, c(1.0),
              math::CosOp::create(b, loc,
                                  arith::MulFOp::create(b, loc, c(M_PI), p))));
    else
      factor = arith::SubFOp::create(b, loc, c(1.0), p);
    lr = arith::AddFOp::create(
        b, loc, minLr,
        arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, lr, minLr),
                              factor));
  }
  if (int64_t w = schedule.getWarmupSteps()) {
    Value warm = arith::MulFOp::create(
        b, loc, baseLr,
        arith::DivFOp::create(b, loc, arith::AddFOp::create(b, loc, t, c(1.0)),
                              c(double(w))));
    Value inWarmup = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                           t, c(double(w)));
    lr = arith::SelectOp::create(b, loc, inWarmup, warm, lr);
  }
  return lr;
}
