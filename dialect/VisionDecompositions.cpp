//===- VisionDecompositions.cpp - the vision layer ops in linalg ----------===//
//
// Decompositions (linalg::AggregatedOpInterface) of gacc.conv2d, the 2-D
// pools, global average pooling and group normalization into upstream
// tensor, linalg and arith ops that gacc-autodiff differentiates: strided
// `tensor.extract_slice` taps of the padded input (im2col for the
// convolution, in the channels-first layout [C·K, N·OH·OW]; folded maxima
// or sums for the pools), `linalg.matmul`,
// `linalg.transpose`, reshapes and elementwise `linalg.generic` ops.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The spatial geometry of a sliding window over [N, C, H, W].
struct Window {
  int64_t kh, kw, sh, sw, ph, pw, dh = 1, dw = 1;
};

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elem) {
  return RankedTensorType::get(shape, elem);
}

/// x [N, C, H, W] padded by (ph, pw) on both sides with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value x, const Window &w,
                 double value) {
  if (w.ph == 0 && w.pw == 0)
    return x;
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> pad = {b.getIndexAttr(0), b.getIndexAttr(0),
                                   b.getIndexAttr(w.ph), b.getIndexAttr(w.pw)};
  auto type = tensorOf({t.getDimSize(0), t.getDimSize(1),
                        t.getDimSize(2) + 2 * w.ph, t.getDimSize(3) + 2 * w.pw},
                       t.getElementType());
  Value v = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(t.getElementType(), value));
  return tensor::PadOp::create(b, loc, type, x, pad, pad, v);
}

/// The tap (kh, kw) of the window over the padded xp: the [N, C, OH, OW]
/// strided slice starting at (kh·dh, kw·dw).
Value tap(OpBuilder &b, Location loc, Value xp, const Window &w, int64_t kh,
          int64_t kw, int64_t oh, int64_t ow) {
  auto t = cast<RankedTensorType>(xp.getType());
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(kh * w.dh),
                                       b.getIndexAttr(kw * w.dw)};
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(t.getDimSize(0)), b.getIndexAttr(t.getDimSize(1)),
      b.getIndexAttr(oh), b.getIndexAttr(ow)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       b.getIndexAttr(w.sh),
                                       b.getIndexAttr(w.sw)};
  auto type = tensorOf({t.getDimSize(0), t.getDimSize(1), oh, ow},
                       t.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, type, xp, offsets, sizes,
                                        strides);
}

/// Every tap of the window, in row-major (kh, kw) order.
SmallVector<Value> taps(OpBuilder &b, Location loc, Value xp,
                        const Window &w, int64_t oh, int64_t ow) {
  SmallVector<Value> all;
  for (int64_t kh = 0; kh < w.kh; ++kh)
    for (int64_t kw = 0; kw < w.kw; ++kw)
      all.push_back(tap(b, loc, xp, w, kh, kw, oh, ow));
  return all;
}

Value transpose(OpBuilder &b, Location loc, Value x,
                ArrayRef<int64_t> perm) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  Value init = tensor::EmptyOp::create(b, loc, shape, t.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
}

/// The convolution of one group: x [N, C, H, W], w [O, C, KH, KW],
/// bias [O] or null -> [N, O, OH, OW], through im2col and one matmul.
/// The padded input is moved to [C, N, H, W] once (blocks of whole rows),
/// so that the taps stack into the matrix [C·K, N·OH·OW] with no
/// transpose of single elements: y = W [O, C·K] · cols is one GEMM whose
/// rows are output channels, its weight gradient dy [O, N·OH·OW] · colsᵀ
/// one GEMM into the accumulator (gacc-fuse-accumulation), and only the
/// result moves back to [N, O, OH, OW] (blocks of OH·OW).
Value convolveGroup(OpBuilder &b, Location loc, Value x, Value weight,
                    Value bias, const Window &win, int64_t oh, int64_t ow) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(weight.getType());
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), o = wt.getDimSize(0);
  Type f32 = xt.getElementType();
  Value channelsFirst =
      transpose(b, loc, padSpatial(b, loc, x, win, 0.0), {1, 0, 2, 3});
  // Taps [C, N, OH, OW] stacked into [C, K, N, OH, OW].
  SmallVector<Value> stacked;
  for (Value t : taps(b, loc, channelsFirst, win, oh, ow))
    stacked.push_back(tensor::ExpandShapeOp::create(
        b, loc, tensorOf({c, 1, n, oh, ow}, f32), t,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}}));
  Value cube = stacked.size() == 1
                   ? stacked.front()
                   : tensor::ConcatOp::create(b, loc, /*dim=*/1, stacked)
                         .getResult();
  // im2col [C·K, N·OH·OW]: rows (c, kh, kw), columns (n, oh, ow).
  Value cols = tensor::CollapseShapeOp::create(
      b, loc, cube, SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}});
  Value wMat = tensor::CollapseShapeOp::create(
      b, loc, weight, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value y = buildMatmul(b, loc, wMat, cols, /*transposeA=*/false,
                        /*transposeB=*/false);
  if (bias)
    y = buildAddBias(b, loc, y, bias, /*biasDim=*/0);
  Value onhw = tensor::ExpandShapeOp::create(
      b, loc, tensorOf({o, n, oh, ow}, f32), y,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  return transpose(b, loc, onhw, {1, 0, 2, 3});
}

/// Channels [begin, begin + count) of x along `dim` (0 or 1).
Value sliceChannels(OpBuilder &b, Location loc, Value x, int64_t dim,
                    int64_t begin, int64_t count) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(t.getRank(), b.getIndexAttr(1));
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = count;
  offsets[dim] = b.getIndexAttr(begin);
  for (int64_t s : shape)
    sizes.push_back(b.getIndexAttr(s));
  return tensor::ExtractSliceOp::create(
      b, loc, tensorOf(shape, t.getElementType()), x, offsets, sizes,
      strides);
}

/// The pool window of a pool op.
template <typename PoolOp> Window poolWindow(PoolOp op) {
  ArrayRef<int64_t> k = op.getKernel(), s = op.getStrideOrKernel(),
                    p = op.getPadding();
  return {k[0], k[1], s[0], s[1], p[0], p[1]};
}

/// A splat f32 tensor of `type` holding `v`.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double v) {
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
}

} // namespace

FailureOr<SmallVector<Value>> Conv2DOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto wt = getWeight().getType();
  auto yt = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> s = getStride(), p = getPadding(), d = getDilation();
  Window win{wt.getDimSize(2), wt.getDimSize(3), s[0], s[1], p[0], p[1],
             d[0], d[1]};
  int64_t groups = getGroups(), oh = yt.getDimSize(2), ow = yt.getDimSize(3);
  if (groups == 1)
    return SmallVector<Value>{convolveGroup(b, loc, getInput(), getWeight(),
                                            getBias(), win, oh, ow)};
  int64_t cg = wt.getDimSize(1), og = wt.getDimSize(0) / groups;
  SmallVector<Value> outputs;
  for (int64_t g = 0; g < groups; ++g) {
    Value bias =
        getBias() ? sliceChannels(b, loc, getBias(), 0, g * og, og) : Value();
    outputs.push_back(convolveGroup(
        b, loc, sliceChannels(b, loc, getInput(), 1, g * cg, cg),
        sliceChannels(b, loc, getWeight(), 0, g * og, og), bias, win, oh,
        ow));
  }
  return SmallVector<Value>{
      tensor::ConcatOp::create(b, loc, /*dim=*/1, outputs).getResult()};
}

FailureOr<SmallVector<Value>> MaxPool2DOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto yt = cast<RankedTensorType>(getType());
  Window win = poolWindow(*this);
  Value xp = padSpatial(b, loc, getInput(), win,
                        -std::numeric_limits<double>::infinity());
  SmallVector<Value> all =
      taps(b, loc, xp, win, yt.getDimSize(2), yt.getDimSize(3));
  // Left to right: maxnumf gives a tie to its left operand, the earlier tap.
  Value m = all.front();
  for (Value t : ArrayRef<Value>(all).drop_front())
    m = arith::MaxNumFOp::create(b, loc, m, t);
  return SmallVector<Value>{m};
}

FailureOr<SmallVector<Value>> AvgPool2DOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto yt = cast<RankedTensorType>(getType());
  Window win = poolWindow(*this);
  Value xp = padSpatial(b, loc, getInput(), win, 0.0);
  SmallVector<Value> all =
      taps(b, loc, xp, win, yt.getDimSize(2), yt.getDimSize(3));
  Value sum = all.front();
  for (Value t : ArrayRef<Value>(all).drop_front())
    sum = arith::AddFOp::create(b, loc, sum, t);
  Value scale = splat(b, loc, yt, 1.0 / double(win.kh * win.kw));
  return SmallVector<Value>{arith::MulFOp::create(b, loc, sum, scale)};
}

FailureOr<SmallVector<Value>>
GlobalAvgPool2DOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto xt = getInput().getType();
  auto yt = cast<RankedTensorType>(getType());
  MLIRContext *ctx = b.getContext();
  AffineExpr n, c, h, w;
  bindDims(ctx, n, c, h, w);
  auto f64 = b.getF64Type();
  Value init = buildFilled(b, loc, tensorOf(yt.getShape(), f64), 0.0);
  SmallVector<utils::IteratorType> its = {
      utils::IteratorType::parallel, utils::IteratorType::parallel,
      utils::IteratorType::reduction, utils::IteratorType::reduction};
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{getInput()},
          ValueRange{init},
          SmallVector<AffineMap>{AffineMap::get(4, 0, {n, c, h, w}, ctx),
                                 AffineMap::get(4, 0, {n, c}, ctx)},
          its,
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value x = arith::ExtFOp::create(nb, nl, nb.getF64Type(), a[0]);
            linalg::YieldOp::create(
                nb, nl, Value(arith::AddFOp::create(nb, nl, a[1], x)));
          })
          .getResult(0);
  double inv = 1.0 / double(xt.getDimSize(2) * xt.getDimSize(3));
  return SmallVector<Value>{buildElementwise(
      b, loc, ValueRange{sum}, yt,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value scale = arith::ConstantOp::create(nb, nl, nb.getF64FloatAttr(inv));
        Value mean = arith::MulFOp::create(nb, nl, a[0], scale);
        return arith::TruncFOp::create(nb, nl, nb.getF32Type(), mean);
      })};
}

FailureOr<SmallVector<Value>> GroupNormOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto xt = getInput().getType();
  Type f32 = xt.getElementType();
  int64_t rank = xt.getRank(), g = getNumGroups();
  // x [N, C, ...] viewed as [N, G, C/G, ...] (channels split into groups),
  // then as rows [N·G, C/G·...]: one row per (sample, group).
  SmallVector<int64_t> grouped = {xt.getDimSize(0), g, xt.getDimSize(1) / g};
  llvm::append_range(grouped, xt.getShape().drop_front(2));
  SmallVector<ReassociationIndices> splitChannels = {{0}, {1, 2}};
  ReassociationIndices perGroup;
  for (int64_t d = 2; d <= rank; ++d) {
    if (d > 2)
      splitChannels.push_back({d});
    perGroup.push_back(d);
  }
  SmallVector<ReassociationIndices> toRows = {{0, 1}, perGroup};
  Value rows = tensor::CollapseShapeOp::create(
      b, loc,
      tensor::ExpandShapeOp::create(b, loc, tensorOf(grouped, f32),
                                    getInput(), splitChannels),
      toRows);
  LayerNormStats stats =
      buildLayerNormStats(b, loc, rows, getEps().convertToDouble());
  MLIRContext *ctx = b.getContext();
  AffineExpr r, e;
  bindDims(ctx, r, e);
  auto rowsType = cast<RankedTensorType>(rows.getType());
  Value normalized =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowsType}, ValueRange{rows, stats.mean, stats.rstd},
          ValueRange{tensor::EmptyOp::create(b, loc, rowsType.getShape(), f32)},
          SmallVector<AffineMap>{AffineMap::get(2, 0, {r, e}, ctx),
                                 AffineMap::get(2, 0, {r}, ctx),
                                 AffineMap::get(2, 0, {r}, ctx),
                                 AffineMap::get(2, 0, {r, e}, ctx)},
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value centered = arith::SubFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl, Value(arith::MulFOp::create(nb, nl, centered, a[2])));
          })
          .getResult(0);
  // Back to x's shape, then the per-channel affine map.
  Value back = tensor::CollapseShapeOp::create(
      b, loc,
      tensor::ExpandShapeOp::create(b, loc, tensorOf(grouped, f32),
                                    normalized, toRows),
      splitChannels);
  AffineMap all = b.getMultiDimIdentityMap(rank);
  AffineMap channel = AffineMap::get(rank, 0, {b.getAffineDimExpr(1)}, ctx);
  return SmallVector<Value>{
      linalg::GenericOp::create(
          b, loc, TypeRange{xt}, ValueRange{back, getWeight(), getBias()},
          ValueRange{tensor::EmptyOp::create(b, loc, xt.getShape(), f32)},
          SmallVector<AffineMap>{all, channel, channel, all},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value scaled = arith::MulFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl, Value(arith::AddFOp::create(nb, nl, scaled, a[2])));
          })
          .getResult(0)};
}
