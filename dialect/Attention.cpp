//===- Attention.cpp - gacc.attention, blockwise --------------------------===//
//
// gacc.attention's decomposition and its hand-written adjoint, both over
// blocks of query rows (Rabe and Staats 2021; Dao 2023, FlashAttention-2):
// a block's scores and probabilities [m·H, rows, keys] are the only
// T-by-T-sized values, and the adjoint recomputes them per block from q
// and k instead of keeping them from the forward. A causal block reads
// only the keys up to its last row.
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

/// Query rows [row0, row0 + rows) and the keys [0, keys) they attend to.
struct QueryBlock {
  int64_t row0, rows, keys;
};

/// The query blocks of `op`: rows of getQueryBlockOrDefault() (the last
/// one shorter when it does not divide T); a causal block's keys end at
/// its last row, a non-causal block reads all T keys.
SmallVector<QueryBlock> getQueryBlocks(AttentionOp op) {
  int64_t t = op.getQuery().getType().getDimSize(2);
  int64_t step = op.getQueryBlockOrDefault();
  SmallVector<QueryBlock> blocks;
  for (int64_t r = 0; r < t; r += step) {
    int64_t rows = std::min(step, t - r);
    blocks.push_back({r, rows, op.getCausal() ? r + rows : t});
  }
  return blocks;
}

/// The heads as a batch: [m, H, T, d] -> [m·H, T, d].
Value collapseHeads(OpBuilder &b, Location loc, Value v) {
  SmallVector<ReassociationIndices> heads = {{0, 1}, {2}, {3}};
  return tensor::CollapseShapeOp::create(b, loc, v, heads);
}

/// Rows [row0, row0 + rows) of dimension 1 of a [B, T, …] tensor (`v`
/// itself when that is all of it).
Value sliceRows(OpBuilder &b, Location loc, Value v, int64_t row0,
                int64_t rows) {
  auto type = cast<RankedTensorType>(v.getType());
  if (row0 == 0 && rows == type.getDimSize(1))
    return v;
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[1] = b.getIndexAttr(row0);
  for (int64_t i = 0; i < type.getRank(); ++i)
    sizes.push_back(b.getIndexAttr(i == 1 ? rows : type.getDimSize(i)));
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// Rows [row0, row0 + rows) of `v` filled with zeros: the init of a
/// product written into them.
Value zeroRows(OpBuilder &b, Location loc, Value v, int64_t row0,
               int64_t rows) {
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  return linalg::FillOp::create(b, loc, zero, sliceRows(b, loc, v, row0, rows))
      .getResult(0);
}

/// `part` written over rows [row0, …) of dimension 1 of `whole` (`part`
/// itself when it is all of it).
Value insertRows(OpBuilder &b, Location loc, Value part, Value whole,
                 int64_t row0) {
  auto pt = cast<RankedTensorType>(part.getType());
  if (pt == whole.getType())
    return part;
  SmallVector<OpFoldResult> offsets(pt.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(pt.getRank(), b.getIndexAttr(1));
  offsets[1] = b.getIndexAttr(row0);
  for (int64_t size : pt.getShape())
    sizes.push_back(b.getIndexAttr(size));
  return tensor::InsertSliceOp::create(b, loc, part, whole, offsets, sizes,
                                       strides);
}

/// The probabilities P [B, rows, keys] of one query block: q·kᵀ (kᵀ
/// through the product's indexing map) times `scale`, the future (key j
/// after query row0 + i) at −∞ when `causal`, softmax over the keys.
Value buildBlockProbabilities(OpBuilder &b, Location loc, Value q, Value k,
                              const QueryBlock &block, double scale,
                              bool causal) {
  Value qb = sliceRows(b, loc, q, block.row0, block.rows);
  Value kb = sliceRows(b, loc, k, 0, block.keys);
  Value scores = buildBatchMatmul(b, loc, qb, kb, false, true);
  auto type = cast<RankedTensorType>(scores.getType());
  Value masked = buildElementwise(
      b, loc, ValueRange{scores}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value c =
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(scale));
        Value s = arith::MulFOp::create(nb, nl, a[0], c);
        if (!causal)
          return s;
        Value i = linalg::IndexOp::create(nb, nl, 1);
        Value j = linalg::IndexOp::create(nb, nl, 2);
        Value row = i;
        if (block.row0 != 0)
          row = arith::AddIOp::create(
              nb, nl, i, arith::ConstantIndexOp::create(nb, nl, block.row0));
        Value future =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ugt, j, row);
        Value minusInf = arith::ConstantOp::create(
            nb, nl,
            nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
        return arith::SelectOp::create(nb, nl, future, minusInf, s);
      });
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  return linalg::SoftmaxOp::create(b, loc, TypeRange{type}, masked, init, 2)
      .getResult()[0];
}

/// dS = P ⊙ (dP − D)·scale with D[b, i] = Σ_j P[b, i, j]·dP[b, i, j]
/// for a block's P and dP [B, rows, keys]: softmax's adjoint (torch's
/// _softmax_backward_data), scaled. Every row's keys lie in its block, so
/// D is whole; masked entries have P = 0 and get dS = 0.
Value buildScoresAdjoint(OpBuilder &b, Location loc, Value p, Value dP,
                         double scale) {
  using utils::IteratorType;
  auto type = cast<RankedTensorType>(p.getType());
  auto rowType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1)}, type.getElementType());
  AffineMap full = b.getMultiDimIdentityMap(3);
  AffineMap row = full.dropResult(2);
  Value d =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowType}, ValueRange{p, dP},
          ValueRange{buildFilled(b, loc, rowType, 0.0)},
          SmallVector<AffineMap>{full, full, row},
          SmallVector<IteratorType>{IteratorType::parallel,
                                    IteratorType::parallel,
                                    IteratorType::reduction},
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value pdp = arith::MulFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, a[2], pdp).getResult());
          })
          .getResult(0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{p, dP, d},
             ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(),
                                                type.getElementType())},
             SmallVector<AffineMap>{full, full, row, full},
             SmallVector<IteratorType>(3, IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value diff = arith::SubFOp::create(nb, nl, a[1], a[2]);
               Value g = arith::MulFOp::create(nb, nl, a[0], diff);
               Value c = arith::ConstantOp::create(
                   nb, nl, nb.getF32FloatAttr(scale));
               linalg::YieldOp::create(
                   nb, nl, arith::MulFOp::create(nb, nl, g, c).getResult());
             })
      .getResult(0);
}

} // namespace

FailureOr<SmallVector<Value>> AttentionOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  auto qt = getQuery().getType();
  Value q = collapseHeads(b, loc, getQuery()),
        k = collapseHeads(b, loc, getKey()),
        v = collapseHeads(b, loc, getValue());
  auto bt = cast<RankedTensorType>(q.getType());
  // Each block's P·v is written into its rows of the result.
  Value out = tensor::EmptyOp::create(b, loc, bt.getShape(),
                                      bt.getElementType());
  for (const QueryBlock &block : getQueryBlocks(*this)) {
    Value p = buildBlockProbabilities(b, loc, q, k, block,
                                      getScaleOrDefault(), getCausal());
    Value rows = zeroRows(b, loc, out, block.row0, block.rows);
    Value pv = buildBatchMatmul(b, loc, p, sliceRows(b, loc, v, 0, block.keys),
                                false, false, rows);
    out = insertRows(b, loc, pv, out, block.row0);
  }
  return SmallVector<Value>{tensor::ExpandShapeOp::create(
      b, loc, qt, out, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}})};
}

LogicalResult
AttentionOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                          ArrayRef<bool> needed,
                          SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  Value dResult = resultAdjoints[0];
  if (!dResult || !llvm::is_contained(needed, true))
    return success();
  Location loc = getLoc();
  // q, k and v through recompute_inputs: the blocks built here are the
  // backward's own (CSE cannot merge them into the forward's, which die
  // there).
  auto kept = RecomputeInputsOp::create(
      b, loc, ValueRange{getQuery(), getKey(), getValue()});
  Value q = collapseHeads(b, loc, kept.getResult(0)),
        k = collapseHeads(b, loc, kept.getResult(1)),
        v = collapseHeads(b, loc, kept.getResult(2)),
        dO = collapseHeads(b, loc, dResult);
  auto bt = cast<RankedTensorType>(q.getType());
  double scale = getScaleOrDefault();
  bool needScores = needed[0] || needed[1];
  Value dq = needed[0] ? Value(tensor::EmptyOp::create(
                             b, loc, bt.getShape(), bt.getElementType()))
                       : Value();
  Value dk = needed[1] ? buildFilled(b, loc, bt, 0.0) : Value();
  Value dv = needed[2] ? buildFilled(b, loc, bt, 0.0) : Value();
  for (const QueryBlock &block : getQueryBlocks(*this)) {
    Value p = buildBlockProbabilities(b, loc, q, k, block, scale,
                                      getCausal());
    Value dOb = sliceRows(b, loc, dO, block.row0, block.rows);
    // dv[keys] += Pᵀ·dO.
    if (dv) {
      Value rows = sliceRows(b, loc, dv, 0, block.keys);
      dv = insertRows(b, loc, buildBatchMatmul(b, loc, p, dOb, true, false,
                                               rows),
                      dv, 0);
    }
    if (!needScores)
      continue;
    // dS = P ⊙ (dO·vᵀ − D)·scale.
    Value dP = buildBatchMatmul(b, loc, dOb,
                                sliceRows(b, loc, v, 0, block.keys), false,
                                true);
    Value dS = buildScoresAdjoint(b, loc, p, dP, scale);
    // dq[rows] = dS·k.
    if (dq) {
      Value rows = zeroRows(b, loc, dq, block.row0, block.rows);
      dq = insertRows(b, loc,
                      buildBatchMatmul(b, loc, dS,
                                       sliceRows(b, loc, k, 0, block.keys),
                                       false, false, rows),
                      dq, block.row0);
    }
    // dk[keys] += dSᵀ·q.
    if (dk) {
      Value rows = sliceRows(b, loc, dk, 0, block.keys);
      dk = insertRows(b, loc,
                      buildBatchMatmul(b, loc, dS,
                                       sliceRows(b, loc, q, block.row0,
                                                 block.rows),
                                       true, false, rows),
                      dk, 0);
    }
  }
  auto qt = getQuery().getType();
  SmallVector<ReassociationIndices> heads = {{0, 1}, {2}, {3}};
  SmallVector<Value, 3> grads = {dq, dk, dv};
  for (auto [i, grad] : llvm::enumerate(grads))
    if (grad)
      operandAdjoints[i] = tensor::ExpandShapeOp::create(b, loc, qt, grad,
                                                         heads);
  return success();
}
