//===- FuseAttention.cpp - gacc-fuse-attention ----------------------------===//
//
// Rewrite patterns that make the attention of a bf16/fp16 step one fused
// kernel each way: a gacc.attention and the gacc.attention_backward that
// reads its result become gacc.fused_attention, whose softmax statistics
// the gacc.fused_attention_backward that replaces the adjoint reads; an
// attention without an adjoint (evaluation) becomes a fused_attention
// alone. Operands are rounded to the step's compute type on the way in and
// results extended to fp32 on the way out (elementwise ops the step's
// fusion merges into their producers and readers), so the ops around them
// see the same fp32 tensors as before.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "gacc-fuse-attention"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCFUSEATTENTIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The low-precision type the step around `op` computes in (the function's
/// kComputePrecisionAttrName), when the fused kernels take `q` [m, H, T,
/// d]: a head size that is a multiple of 8 up to 128, what cuDNN's fused
/// forward and backward both support on every architecture from sm_80 on
/// (cudnn-frontend's sdpa_support_surface.h). Null otherwise: the op keeps
/// its decomposition.
FloatType fusedComputeType(Operation *op, ShapedType q) {
  int64_t d = q.getDimSize(3);
  if (d % 8 != 0 || d > 128)
    return nullptr;
  return getEnclosingComputeType(op);
}

/// The gacc.attention whose result `output` is, directly or rounded to
/// `low` (a low-precision step rounds the attention's result before any
/// reader, its adjoint included); null otherwise.
AttentionOp attentionBehind(Value output, FloatType low) {
  if (auto attention = output.getDefiningOp<AttentionOp>())
    return attention;
  Value rounded = matchRoundToCompute(output, low);
  return rounded ? rounded.getDefiningOp<AttentionOp>() : nullptr;
}

/// `v`, or the value a gacc.recompute_inputs passes on as `v`.
Value throughRecomputeInputs(Value v) {
  if (auto kept = v.getDefiningOp<RecomputeInputsOp>())
    return kept.getInputs()[cast<OpResult>(v).getResultNumber()];
  return v;
}

/// Whether `a` and `b` hold the same values: one value (through
/// gacc.recompute_inputs), or the results of equivalent ops of such
/// operands (gacc-recompute-activations' clones of a forward op), up to
/// `depth` ops deep.
bool sameValues(Value a, Value b, unsigned depth = 8) {
  a = throughRecomputeInputs(a);
  b = throughRecomputeInputs(b);
  if (a == b)
    return true;
  auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
  if (!ra || !rb || depth == 0 ||
      ra.getResultNumber() != rb.getResultNumber() ||
      !isMemoryEffectFree(ra.getOwner()))
    return false;
  // The ops' regions' block arguments, paired as the comparison meets them.
  llvm::DenseMap<Value, Value> paired;
  return OperationEquivalence::isEquivalentTo(
      ra.getOwner(), rb.getOwner(),
      [&](Value x, Value y) {
        return success(paired.lookup(x) == y || sameValues(x, y, depth - 1));
      },
      [&](Value x, Value y) { paired[x] = y; },
      OperationEquivalence::IgnoreLocations);
}

/// Whether `backward` is the adjoint of `forward`: the same q, k and v
/// (sameValues), scale and mask.
bool isAdjointOf(AttentionBackwardOp backward, AttentionOp forward) {
  return forward.getScaleOrDefault() == backward.getScaleOrDefault() &&
         forward.getCausal() == backward.getCausal() &&
         sameValues(forward.getQuery(), backward.getQuery()) &&
         sameValues(forward.getKey(), backward.getKey()) &&
         sameValues(forward.getValue(), backward.getValue());
}

/// An empty tensor of `type`'s shape with `elem` elements.
Value emptyLike(OpBuilder &b, Location loc, ShapedType type, Type elem) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), elem);
}

/// The statistics [m, H, T, 1] f32 of a [m, H, T, d] query.
Value emptyStats(OpBuilder &b, Location loc, ShapedType q) {
  SmallVector<int64_t> shape(q.getShape());
  shape.back() = 1;
  return tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
}

/// `values` rounded to `low`, elementwise.
SmallVector<Value> narrowed(OpBuilder &b, Location loc, ValueRange values,
                            FloatType low) {
  return llvm::map_to_vector(
      values, [&](Value v) { return buildConvertElements(b, loc, v, low); });
}

/// The fused forward of `op` at `op` (its result replaced by the output
/// extended to fp32); returns it.
FusedAttentionOp fuseForward(PatternRewriter &rewriter, AttentionOp op,
                             FloatType low) {
  Location loc = op.getLoc();
  auto q = op.getQuery().getType();
  SmallVector<Value> qkv =
      narrowed(rewriter, loc, {op.getQuery(), op.getKey(), op.getValue()}, low);
  Value output = emptyLike(rewriter, loc, q, low);
  Value stats = emptyStats(rewriter, loc, q);
  auto fused = FusedAttentionOp::create(
      rewriter, loc, TypeRange{output.getType(), stats.getType()}, qkv[0],
      qkv[1], qkv[2], output, stats,
      rewriter.getF64FloatAttr(op.getScaleOrDefault()), op.getCausalAttr());
  rewriter.replaceOp(op, buildConvertElements(rewriter, loc, fused.getResult(0),
                                              rewriter.getF32Type()));
  return fused;
}

/// A gacc.attention_backward whose `output` is a gacc.attention's result
/// (or that result rounded to the step's type, which the bf16 output
/// already is): both fused, the backward reading the forward's bf16 output
/// and statistics.
struct FuseAttentionPair : public OpRewritePattern<AttentionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto q = op.getQuery().getType();
    FloatType low = fusedComputeType(op, q);
    if (!low)
      return rewriter.notifyMatchFailure(op, "no fused kernel for it");
    AttentionOp forward = attentionBehind(op.getOutput(), low);
    if (!forward || !isAdjointOf(op, forward))
      return rewriter.notifyMatchFailure(op, "not a fused forward's adjoint");
    rewriter.setInsertionPoint(forward);
    FusedAttentionOp fused = fuseForward(rewriter, forward, low);
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    SmallVector<Value> in = narrowed(
        rewriter, loc, {op.getQuery(), op.getKey(), op.getValue()}, low);
    Value dO = buildConvertElements(rewriter, loc, op.getOutputGrad(), low);
    SmallVector<Value> grads = {emptyLike(rewriter, loc, q, low),
                                emptyLike(rewriter, loc, q, low),
                                emptyLike(rewriter, loc, q, low)};
    auto backward = FusedAttentionBackwardOp::create(
        rewriter, loc, ValueRange(grads).getTypes(), in[0], in[1], in[2],
        fused.getResult(0), dO, fused.getResult(1), grads[0], grads[1],
        grads[2], fused.getScaleAttr(), fused.getCausalAttr());
    rewriter.replaceOp(
        op, llvm::map_to_vector(backward.getResults(), [&](Value g) {
          return buildConvertElements(rewriter, loc, g, rewriter.getF32Type());
        }));
    return success();
  }
};

/// A gacc.attention whose result no adjoint reads as its output
/// (evaluation): the fused forward, its statistics unread.
struct FuseForwardAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    FloatType low = fusedComputeType(op, op.getQuery().getType());
    if (!low)
      return rewriter.notifyMatchFailure(op, "no fused kernel for it");
    // Its adjoint reads its result, or the result rounded.
    SmallVector<Operation *> readers(op->getUsers());
    for (Operation *user : op->getUsers())
      if (user->getNumResults() == 1 &&
          matchRoundToCompute(user->getResult(0), low) == op.getResult())
        llvm::append_range(readers, user->getUsers());
    if (llvm::any_of(readers, [&](Operation *reader) {
          auto backward = dyn_cast<AttentionBackwardOp>(reader);
          return backward && isAdjointOf(backward, op) &&
                 attentionBehind(backward.getOutput(), low) == op;
        }))
      return rewriter.notifyMatchFailure(op, "fused with its adjoint");
    fuseForward(rewriter, op, low);
    return success();
  }
};

struct FuseAttentionPass
    : public mlir::gacc::impl::GAccFuseAttentionPassBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttentionPair, FuseForwardAttention>(patterns.getContext());
}
