//===- Attention.cpp - gacc.attention, blockwise --------------------------===//
//
// gacc.attention's query blocks, its decomposition and its hand-written
// adjoint (a gacc.attention_backward), and that op's decomposition, both
// over blocks of query rows (after Rabe and Staats 2021,
// "Self-attention does not need O(n²) memory", and Dao 2023,
// FlashAttention-2): a block's scores and probabilities [m·H, rows, keys]
// are the only T-by-T-sized values, and the adjoint recomputes them per
// block from q and k instead of keeping them from the forward. A causal
// block reads only the keys up to its last row.
//
// Every tensor a block writes into starts as its own product (a fresh
// zero init, or the one block that covers all of it), never as a slice of
// a shared zero tensor: CSE would merge such roots across blocks, layers
// and the forward and backward, and one-shot bufferization would then
// copy, or keep a forward buffer alive into the backward.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::gacc;

/// Query rows per block without `query_block`: the scores and
/// probabilities of a block of GPT-2's shape (m = 16, 12 heads, T = 1024)
/// then take 96 MiB each, against 768 MiB for the whole T × T.
static constexpr int64_t kDefaultQueryBlock = 128;

/// `queryBlock`, or kDefaultQueryBlock (larger where T would give more than
/// kMaxQueryBlocks of it), at most T (of the [m, H, T, d] query `q`).
static int64_t queryBlockOrDefault(std::optional<uint64_t> queryBlock,
                                   ShapedType q) {
  int64_t t = q.getDimSize(2);
  if (queryBlock)
    return std::min(t, int64_t(*queryBlock));
  return std::min(t, std::max(kDefaultQueryBlock,
                              llvm::divideCeilSigned(t, kMaxQueryBlocks)));
}

int64_t AttentionOp::getQueryBlockOrDefault() {
  return queryBlockOrDefault(getQueryBlock(), getQuery().getType());
}

int64_t AttentionBackwardOp::getQueryBlockOrDefault() {
  return queryBlockOrDefault(getQueryBlock(), getQuery().getType());
}

namespace {

/// Query rows [row0, row0 + rows) and the keys [0, keys) they attend to.
struct QueryBlock {
  int64_t row0, rows, keys;
};

/// The query blocks of `op` (gacc.attention or its adjoint): rows of
/// getQueryBlockOrDefault() (the last one shorter when it does not divide
/// T); a causal block's keys end at its last row, a non-causal block reads
/// all T keys.
template <typename AttentionLikeOp>
SmallVector<QueryBlock> getQueryBlocks(AttentionLikeOp op) {
  int64_t t = op.getQuery().getType().getDimSize(2);
  int64_t step = op.getQueryBlockOrDefault();
  SmallVector<QueryBlock> blocks;
  forEachRowBlock(t, step, [&](int64_t r, int64_t rows) {
    blocks.push_back({r, rows, op.getCausal() ? r + rows : t});
  });
  return blocks;
}

/// The heads as a batch and back: [m, H, T, d] <-> [m·H, T, d].
SmallVector<ReassociationIndices> headsAsBatch() {
  return {{0, 1}, {2}, {3}};
}
Value collapseHeads(OpBuilder &b, Location loc, Value v) {
  return tensor::CollapseShapeOp::create(b, loc, v, headsAsBatch());
}
Value expandHeads(OpBuilder &b, Location loc, Value v,
                  RankedTensorType type) {
  return tensor::ExpandShapeOp::create(b, loc, type, v, headsAsBatch());
}

/// Rows [row0, row0 + rows) of dimension 1 of a [B, T, …] tensor.
Value sliceRows(OpBuilder &b, Location loc, Value v, int64_t row0,
                int64_t rows) {
  return buildSliceAlong(b, loc, v, 1, row0, rows);
}

/// `part` written over rows [row0, …) of dimension 1 of `whole`.
Value insertRows(OpBuilder &b, Location loc, Value part, Value whole,
                 int64_t row0) {
  return buildInsertAlong(b, loc, part, whole, 1, row0);
}

/// Accumulates products over rows [0, keys) of a [B, T, d] tensor (dk and
/// dv): the first product must cover all T rows and starts the sum (the
/// blocks are visited last first, and the last block reads every key);
/// later ones add into their rows in place (C += A·B).
class RowsAccumulator {
public:
  void add(OpBuilder &b, Location loc, Value a, Value bMat, bool transposeA,
           int64_t keys) {
    if (!sum) {
      sum = buildBatchMatmul(b, loc, a, bMat, transposeA, false);
      return;
    }
    Value rows = sliceRows(b, loc, sum, 0, keys);
    sum = insertRows(b, loc,
                     buildBatchMatmul(b, loc, a, bMat, transposeA, false, rows),
                     sum, 0);
  }
  Value get() const { return sum; }

private:
  Value sum;
};

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

} // namespace

FailureOr<SmallVector<Value>> AttentionOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  Value q = collapseHeads(b, loc, getQuery()),
        k = collapseHeads(b, loc, getKey()),
        v = collapseHeads(b, loc, getValue());
  RowsWriter out(cast<RankedTensorType>(q.getType()), 1);
  for (const QueryBlock &block : getQueryBlocks(*this)) {
    Value p = buildBlockProbabilities(b, loc, q, k, block,
                                      getScaleOrDefault(), getCausal());
    out.write(b, loc,
              buildBatchMatmul(b, loc, p, sliceRows(b, loc, v, 0, block.keys),
                               false, false),
              block.row0);
  }
  return SmallVector<Value>{
      expandHeads(b, loc, out.get(), getQuery().getType())};
}

/// The adjoint is one gacc.attention_backward, whose decomposition
/// (below) is the blockwise recomputation; on the cuda target
/// gacc-fuse-attention may make the pair one fused kernel each.
LogicalResult
AttentionOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                          ArrayRef<bool> needed,
                          SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  Value dResult = resultAdjoints[0];
  if (!dResult || !llvm::is_contained(needed, true))
    return success();
  auto backward = AttentionBackwardOp::create(
      b, getLoc(), getQuery(), getKey(), getValue(), getResult(), dResult,
      getScaleAttr(), getCausalAttr(), getQueryBlockAttr());
  for (unsigned i = 0; i < 3; ++i)
    if (needed[i])
      operandAdjoints[i] = backward->getResult(i);
  return success();
}

FailureOr<SmallVector<Value>>
AttentionBackwardOp::decomposeOperation(OpBuilder &b) {
  Location loc = getLoc();
  // q, k and v through recompute_inputs: the blocks built here are the
  // backward's own (CSE cannot merge them into the forward's, which die
  // there).
  auto kept = RecomputeInputsOp::create(
      b, loc, ValueRange{getQuery(), getKey(), getValue()});
  Value q = collapseHeads(b, loc, kept.getResult(0)),
        k = collapseHeads(b, loc, kept.getResult(1)),
        v = collapseHeads(b, loc, kept.getResult(2)),
        dO = collapseHeads(b, loc, getOutputGrad());
  double scale = getScaleOrDefault();
  // In a low-precision step P and dS are rounded before their products,
  // as FlashAttention-2's kernels round them for the tensor cores (dS is
  // computed from the fp32 P): every factor of the four products is then a
  // rounded value, which gacc-narrow-stored-values and
  // gacc-mark-gemm-inputs make low-precision GEMMs.
  FloatType low = getEnclosingComputeType(*this);
  auto rounded = [&](Value x) {
    return low ? buildRoundToCompute(b, loc, x, low) : x;
  };
  RowsWriter dq(cast<RankedTensorType>(q.getType()), 1);
  RowsAccumulator dk, dv;
  // Last block first: it reads every key, so it starts dk and dv whole.
  SmallVector<QueryBlock> blocks = getQueryBlocks(*this);
  for (const QueryBlock &block : llvm::reverse(blocks)) {
    Value p = buildBlockProbabilities(b, loc, q, k, block, scale,
                                      getCausal());
    Value dOb = sliceRows(b, loc, dO, block.row0, block.rows);
    // dv[keys] += Pᵀ·dO.
    dv.add(b, loc, rounded(p), dOb, /*transposeA=*/true, block.keys);
    // dS = P ⊙ (dP − rowsum(P ⊙ dP))·scale, dP = dO·vᵀ: softmax's adjoint
    // (a row's keys all lie in its block).
    Value dP = buildBatchMatmul(b, loc, dOb,
                                sliceRows(b, loc, v, 0, block.keys), false,
                                true);
    Value dS = rounded(buildSoftmaxGrad(b, loc, p, dP, 2, scale));
    // dq[rows] = dS·k, dk[keys] += dSᵀ·q.
    dq.write(b, loc,
             buildBatchMatmul(b, loc, dS, sliceRows(b, loc, k, 0, block.keys),
                              false, false),
             block.row0);
    dk.add(b, loc, dS, sliceRows(b, loc, q, block.row0, block.rows),
           /*transposeA=*/true, block.keys);
  }
  auto type = getQuery().getType();
  return SmallVector<Value>{expandHeads(b, loc, dq.get(), type),
                            expandHeads(b, loc, dk.get(), type),
                            expandHeads(b, loc, dv.get(), type)};
}
