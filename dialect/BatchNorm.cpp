//===- BatchNorm.cpp - gacc.batch_norm in linalg --------------------------===//
//
// The training-mode decomposition of gacc.batch_norm (the micro-batch's
// masked statistics, then the per-channel affine map), its hand-written
// adjoint (torch's batch_norm_backward), the statistics
// gacc-expand-accumulation reads to move the running statistics, and the
// evaluation form over the running statistics. Formulas:
// torch.nn.functional.batch_norm.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Indexing maps over x [m, C, ...] (rank r): all dimensions, the sample
/// (d0) and the channel (d1).
struct ChannelMaps {
  AffineMap all, sample, channel;
  ChannelMaps(OpBuilder &b, int64_t rank) {
    MLIRContext *ctx = b.getContext();
    all = b.getMultiDimIdentityMap(rank);
    sample = AffineMap::get(rank, 0, {b.getAffineDimExpr(0)}, ctx);
    channel = AffineMap::get(rank, 0, {b.getAffineDimExpr(1)}, ctx);
  }
};

/// Every dimension but the channels reduces.
SmallVector<utils::IteratorType> channelReduction(int64_t rank) {
  SmallVector<utils::IteratorType> it(rank, utils::IteratorType::reduction);
  it[1] = utils::IteratorType::parallel;
  return it;
}

/// Σ over the counted samples and every non-channel position of
/// `term(x, mean)` per channel (mean may be null), as [C].
Value buildChannelSum(OpBuilder &b, Location loc, Value x, Value mask,
                      Value mean,
                      function_ref<Value(OpBuilder &, Location, Value, Value)>
                          term) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  ChannelMaps maps(b, rank);
  auto cType = RankedTensorType::get({xt.getDimSize(1)}, xt.getElementType());
  SmallVector<Value> inputs = {x, mask};
  SmallVector<AffineMap> indexing = {maps.all, maps.sample};
  if (mean) {
    inputs.push_back(mean);
    indexing.push_back(maps.channel);
  }
  indexing.push_back(maps.channel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{cType}, inputs,
             ValueRange{buildFilled(b, loc, cType, 0.0)}, indexing,
             channelReduction(rank),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value t = term(nb, nl, a[0], mean ? a[2] : Value());
               Value w = arith::MulFOp::create(nb, nl, t, a[1]);
               linalg::YieldOp::create(
                   nb, nl, Value(arith::AddFOp::create(nb, nl, a.back(), w)));
             })
      .getResult(0);
}

/// v [C] · s (a 0-d tensor), elementwise.
Value buildScaleBy(OpBuilder &b, Location loc, Value v, Value s) {
  auto vt = cast<RankedTensorType>(v.getType());
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  return linalg::GenericOp::create(
             b, loc, TypeRange{vt}, ValueRange{v, s},
             ValueRange{tensor::EmptyOp::create(b, loc, vt.getShape(),
                                                vt.getElementType())},
             SmallVector<AffineMap>{id, AffineMap::get(1, 0, {}, ctx), id},
             SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
             [](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(
                   nb, nl, Value(arith::MulFOp::create(nb, nl, a[0], a[1])));
             })
      .getResult(0);
}

/// rsqrt(var + eps) [C].
Value buildRstd(OpBuilder &b, Location loc, Value var, double eps) {
  return buildElementwise(
      b, loc, ValueRange{var}, cast<RankedTensorType>(var.getType()),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value e = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(eps));
        Value shifted = arith::AddFOp::create(nb, nl, a[0], e);
        return math::RsqrtOp::create(nb, nl, shifted);
      });
}

/// x̂ = (x − mean) · rstd, inside a body.
Value buildXhat(OpBuilder &b, Location loc, Value x, Value mean, Value rstd) {
  Value centered = arith::SubFOp::create(b, loc, x, mean);
  return arith::MulFOp::create(b, loc, centered, rstd);
}

/// (x − mean) · rsqrt(var + eps) · weight + bias over x [m, C, ...], the
/// statistics [C].
Value buildNormalize(OpBuilder &b, Location loc, Value x, Value mean,
                     Value var, Value weight, Value bias, double eps) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  ChannelMaps maps(b, rank);
  Value rstd = buildRstd(b, loc, var, eps);
  return linalg::GenericOp::create(
             b, loc, TypeRange{xt}, ValueRange{x, mean, rstd, weight, bias},
             ValueRange{tensor::EmptyOp::create(b, loc, xt.getShape(),
                                                xt.getElementType())},
             SmallVector<AffineMap>{maps.all, maps.channel, maps.channel,
                                    maps.channel, maps.channel, maps.all},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             buildNormalizeBody)
      .getResult(0);
}

/// Σ dy and Σ dy·x̂ per channel over every position of dy [m, C, ...]
/// (padding rows too: their outputs are normalized by the statistics as
/// well), in one pass, summed in f64 and rounded to f32 [C].
std::pair<Value, Value> buildGradientSums(OpBuilder &b, Location loc, Value dy,
                                          Value x, Value mean, Value rstd) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  ChannelMaps maps(b, rank);
  auto c64 = RankedTensorType::get({xt.getDimSize(1)}, b.getF64Type());
  auto sums = linalg::GenericOp::create(
      b, loc, TypeRange{c64, c64}, ValueRange{dy, x, mean, rstd},
      ValueRange{buildFilled(b, loc, c64, 0.0), buildFilled(b, loc, c64, 0.0)},
      SmallVector<AffineMap>{maps.all, maps.all, maps.channel, maps.channel,
                             maps.channel, maps.channel},
      channelReduction(rank), [](OpBuilder &nb, Location nl, ValueRange a) {
        Value xhat = buildXhat(nb, nl, a[1], a[2], a[3]);
        Value dyXhat = arith::MulFOp::create(nb, nl, a[0], xhat);
        Type f64 = nb.getF64Type();
        Value s = arith::AddFOp::create(
            nb, nl, a[4], arith::ExtFOp::create(nb, nl, f64, a[0]));
        Value sx = arith::AddFOp::create(
            nb, nl, a[5], arith::ExtFOp::create(nb, nl, f64, dyXhat));
        linalg::YieldOp::create(nb, nl, ValueRange{s, sx});
      });
  Type f32 = b.getF32Type();
  return {buildConvertElements(b, loc, sums.getResult(0), f32),
          buildConvertElements(b, loc, sums.getResult(1), f32)};
}

} // namespace

BatchNormOp::Statistics BatchNormOp::buildStatistics(OpBuilder &b) {
  Location loc = getLoc();
  Value x = getInput();
  auto xt = getInput().getType();
  Type f32 = xt.getElementType();
  int64_t perSample = xt.getNumElements() / (xt.getDimSize(0) *
                                             xt.getDimSize(1));
  Value mask = getSampleMask();
  if (!mask)
    mask = buildFilled(b, loc, RankedTensorType::get({xt.getDimSize(0)}, f32),
                       1.0);
  // count = Σ mask · (values per sample and channel); 1 / max(count, 1)
  // (a micro-batch of padding only divides nothing by 1).
  auto scalarType = RankedTensorType::get({}, f32);
  MLIRContext *ctx = b.getContext();
  AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
  AffineMap to0 = AffineMap::get(1, 0, {}, ctx);
  Value count =
      linalg::GenericOp::create(
          b, loc, TypeRange{scalarType}, ValueRange{mask},
          ValueRange{buildFilled(b, loc, scalarType, 0.0)},
          SmallVector<AffineMap>{id1, to0},
          SmallVector<utils::IteratorType>{utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value p = arith::ConstantOp::create(
                nb, nl, nb.getF32FloatAttr(double(perSample)));
            Value n = arith::MulFOp::create(nb, nl, a[0], p);
            linalg::YieldOp::create(
                nb, nl, Value(arith::AddFOp::create(nb, nl, a[1], n)));
          })
          .getResult(0);
  Value invCount = buildElementwise(
      b, loc, ValueRange{count}, scalarType,
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value one = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0));
        Value n = arith::MaximumFOp::create(nb, nl, a[0], one);
        return arith::DivFOp::create(nb, nl, one, n);
      });
  Value sum = buildChannelSum(
      b, loc, x, mask, Value(),
      [](OpBuilder &, Location, Value v, Value) { return v; });
  Value mean = buildScaleBy(b, loc, sum, invCount);
  Value squares = buildChannelSum(
      b, loc, x, mask, mean,
      [](OpBuilder &nb, Location nl, Value v, Value mu) -> Value {
        Value c = arith::SubFOp::create(nb, nl, v, mu);
        return arith::MulFOp::create(nb, nl, c, c);
      });
  return {count, mean, buildScaleBy(b, loc, squares, invCount)};
}

FailureOr<SmallVector<Value>> BatchNormOp::decomposeOperation(OpBuilder &b) {
  Statistics stats = buildStatistics(b);
  return SmallVector<Value>{buildNormalize(b, getLoc(), getInput(), stats.mean,
                                           stats.variance, getWeight(),
                                           getBias(),
                                           getEps().convertToDouble())};
}

/// torch's batch_norm_backward (training), with the sample mask k:
/// dbias = Σ dy, dweight = Σ dy·x̂ (every position), and
/// dx = weight · rstd · (dy − k · (Σ dy + x̂ · Σ dy·x̂) / count): the
/// statistics depend on the counted samples only, every output on them.
/// One pass for both sums and one for dx, where differentiating the
/// decomposition takes a pass per term.
LogicalResult BatchNormOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                        ArrayRef<bool> needed,
                                        SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  Value dy = resultAdjoints[0];
  if (!dy || !(needed[0] || needed[1] || needed[2]))
    return success();
  Location loc = getLoc();
  Value x = getInput();
  Statistics stats = buildStatistics(b);
  Value rstd = buildRstd(b, loc, stats.variance, getEps().convertToDouble());
  auto [sumDy, sumDyXhat] =
      buildGradientSums(b, loc, dy, x, stats.mean, rstd);
  if (needed[1])
    operandAdjoints[1] = sumDyXhat;
  if (needed[2])
    operandAdjoints[2] = sumDy;
  if (!needed[0])
    return success();
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  ChannelMaps maps(b, rank);
  Value mask = getSampleMask();
  if (!mask)
    mask = buildFilled(
        b, loc, RankedTensorType::get({xt.getDimSize(0)}, xt.getElementType()),
        1.0);
  Value invCount = buildElementwise(
      b, loc, ValueRange{stats.count},
      cast<RankedTensorType>(stats.count.getType()),
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value one = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0));
        Value n = arith::MaximumFOp::create(nb, nl, a[0], one);
        return arith::DivFOp::create(nb, nl, one, n);
      });
  AffineMap scalar = AffineMap::get(rank, 0, {}, b.getContext());
  operandAdjoints[0] =
      linalg::GenericOp::create(
          b, loc, TypeRange{xt},
          ValueRange{dy, x, mask, stats.mean, rstd, getWeight(), sumDy,
                     sumDyXhat, invCount},
          ValueRange{tensor::EmptyOp::create(b, loc, xt.getShape(),
                                             xt.getElementType())},
          SmallVector<AffineMap>{maps.all, maps.all, maps.sample,
                                 maps.channel, maps.channel, maps.channel,
                                 maps.channel, maps.channel, scalar, maps.all},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value xhat = buildXhat(nb, nl, a[1], a[3], a[4]);
            Value spread = arith::MulFOp::create(nb, nl, xhat, a[7]);
            Value sums = arith::AddFOp::create(nb, nl, a[6], spread);
            Value counted = arith::MulFOp::create(nb, nl, a[2], a[8]);
            Value correction = arith::MulFOp::create(nb, nl, sums, counted);
            Value centered = arith::SubFOp::create(nb, nl, a[0], correction);
            Value scale = arith::MulFOp::create(nb, nl, a[5], a[4]);
            linalg::YieldOp::create(
                nb, nl, Value(arith::MulFOp::create(nb, nl, scale, centered)));
          })
          .getResult(0);
  return success();
}

Value BatchNormOp::buildInference(OpBuilder &b, ValueRange running) {
  return buildNormalize(b, getLoc(), getInput(), running[0], running[1],
                        getWeight(), getBias(), getEps().convertToDouble());
}

std::optional<BatchStatistics> BatchNormOp::getDeclaredBatchStatistics() {
  return getBatchStatistics();
}

SmallVector<FlatSymbolRefAttr> BatchNormOp::getRunningStatistics() {
  return {getRunningMeanAttr(), getRunningVarAttr()};
}

int64_t BatchNormOp::getStatisticValuesPerSample() {
  auto x = getInput().getType();
  return x.getNumElements() / (x.getDimSize(0) * x.getDimSize(1));
}

SmallVector<FlatSymbolRefAttr> BatchNormOp::getNonNegativeRunningStatistics() {
  return {getRunningVarAttr()};
}

void BatchNormOp::setSampleMask(Value mask) {
  getSampleMaskMutable().assign(mask);
}
