//===- DeferWeightGradients.cpp - gacc-defer-weight-gradients -------------===//
//
// Per weight gradient of the micro-batch loop, a cost model chooses between
// adding each micro-batch's product into the accumulator (a GEMM with
// K = m, β = 1) and keeping the product's operands for the window and
// computing the weight gradient once after the loop (K = N·m).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "gacc-defer-weight-gradients"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCDEFERWEIGHTGRADIENTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// A weight gradient accumulated in the micro-batch loop that the pass
/// computes once after it instead.
struct Deferral {
  MatmulAccumulateOp op;
  /// The accumulator's position among the loop's iter_args.
  unsigned position;
  /// Per operand (A, B): the window of every micro-batch's operand when it
  /// exists before the loop ([N·m, ·], a collapse of an [N, m, ·] input),
  /// else null: the loop then copies the operand into a window buffer.
  Value window[2];
};

/// True if `first` is `iv == lb` of `loop`: the accumulator restarts at the
/// loop's first iteration, so the loop runs the whole window.
bool isFirstIteration(Value first, scf::ForOp loop) {
  auto cmp = first.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return false;
  Value iv = loop.getInductionVar(), lb = loop.getLowerBound();
  return (cmp.getLhs() == iv && isEqualConstantIntOrValue(cmp.getRhs(), lb)) ||
         (cmp.getRhs() == iv && isEqualConstantIntOrValue(cmp.getLhs(), lb));
}

/// The loop-invariant [N·m, k] window whose rows [i·m, (i + 1)·m) are
/// `operand` in iteration i: `operand` is `tensor.extract_slice %w[i, 0,
/// 0] [1, m, k]` of an [N, m, k] tensor defined outside a loop from 0 by 1;
/// null otherwise.
Value existingWindow(OpBuilder &b, Value operand, scf::ForOp loop,
                     int64_t trips) {
  auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !loop.isDefinedOutsideOfLoop(slice.getSource()) ||
      getConstantIntValue(loop.getLowerBound()) != 0 ||
      getConstantIntValue(loop.getStep()) != 1)
    return Value();
  auto source = cast<RankedTensorType>(slice.getSource().getType());
  auto result = cast<RankedTensorType>(operand.getType());
  if (source.getRank() != 3 || !source.hasStaticShape() ||
      source.getDimSize(0) != trips ||
      source.getShape().drop_front() != result.getShape() ||
      !slice.hasUnitStride() ||
      slice.getStaticSizes() !=
          ArrayRef<int64_t>{1, result.getDimSize(0), result.getDimSize(1)})
    return Value();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  if (dyn_cast<Value>(offsets[0]) != loop.getInductionVar() ||
      !isConstantIntValue(offsets[1], 0) || !isConstantIntValue(offsets[2], 0))
    return Value();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  return tensor::CollapseShapeOp::create(
      b, slice.getLoc(), slice.getSource(),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

struct DeferWeightGradientsPass
    : public mlir::gacc::impl::GAccDeferWeightGradientsPassBase<
          DeferWeightGradientsPass> {
  using GAccDeferWeightGradientsPassBase::GAccDeferWeightGradientsPassBase;

  /// `op` as a deferral when it is a weight gradient dW = Aᵀ·B accumulated
  /// across the iterations of `loop` and the cost model prefers one product
  /// after the loop.
  std::optional<Deferral> match(MatmulAccumulateOp op, scf::ForOp loop,
                                int64_t trips) {
    auto acc = dyn_cast<BlockArgument>(op.getAccumulator());
    if (!op.getResult() || !acc || acc.getOwner() != loop.getBody() ||
        acc.getArgNumber() == 0 || !acc.hasOneUse() ||
        !op.getResult().hasOneUse() || !op.getTransposeA() ||
        op.getTransposeB() || !isFirstIteration(op.getFirst(), loop))
      return std::nullopt;
    unsigned position = acc.getArgNumber() - 1;
    OpOperand &use = *op.getResult().getUses().begin();
    if (use.getOwner() != loop.getBody()->getTerminator() ||
        use.getOperandNumber() != position)
      return std::nullopt;
    auto a = cast<RankedTensorType>(op.getA().getType());
    auto b = cast<RankedTensorType>(op.getB().getType());
    if (!a.hasStaticShape() || !b.hasStaticShape())
      return std::nullopt;
    // Elements moved per window. Accumulating: the accumulator is written
    // by the first micro-batch and read and written by each other one.
    // Deferring: each micro-batch's operand rows are written to the window
    // (unless they are already one) and read once by the product, which
    // writes the accumulator once.
    int64_t m = a.getDimSize(0), rows = a.getDimSize(1),
            cols = b.getDimSize(1);
    int64_t accumulating = (2 * trips - 1) * rows * cols;
    int64_t deferring = 2 * trips * m * (rows + cols) + rows * cols;
    int64_t windowBytes = trips * m * (rows + cols) * 4;
    LLVM_DEBUG(llvm::dbgs() << "gacc-defer-weight-gradients: " << op
                            << ": accumulating " << accumulating
                            << " elements, deferring " << deferring << "\n");
    if (deferring >= accumulating || windowBytes > maxWindowBytes)
      return std::nullopt;
    return Deferral{op, position, {Value(), Value()}};
  }

  /// Rewrites the deferrals of `loop`: window buffers carried by the loop
  /// (or the windows that exist before it), each accumulator passed through
  /// the loop untouched, and one product per accumulator after it.
  void defer(IRRewriter &rewriter, scf::ForOp loop, int64_t trips,
             MutableArrayRef<Deferral> deferrals) {
    Location loc = loop.getLoc();
    SmallVector<Value> inits;
    SmallVector<std::pair<unsigned, unsigned>> copied; // deferral, operand
    rewriter.setInsertionPoint(loop);
    for (auto [d, deferral] : llvm::enumerate(deferrals)) {
      Value operands[2] = {deferral.op.getA(), deferral.op.getB()};
      for (unsigned o = 0; o < 2; ++o) {
        deferral.window[o] = existingWindow(rewriter, operands[o], loop, trips);
        if (deferral.window[o])
          continue;
        auto type = cast<RankedTensorType>(operands[o].getType());
        inits.push_back(tensor::EmptyOp::create(
            rewriter, loc,
            SmallVector<int64_t>{trips * type.getDimSize(0),
                                 type.getDimSize(1)},
            type.getElementType()));
        copied.push_back({unsigned(d), o});
      }
    }
    unsigned firstNew = loop.getNumResults();
    auto newYields = [&](OpBuilder &b, Location loc,
                         ArrayRef<BlockArgument> windows) {
      // Row offset of this micro-batch: (iv − lb) / step · m.
      Value iv = loop.getInductionVar();
      Value index = arith::DivUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, iv, loop.getLowerBound()),
          loop.getStep());
      SmallVector<Value> yields;
      for (auto [w, copy] : llvm::enumerate(copied)) {
        MatmulAccumulateOp op = deferrals[copy.first].op;
        Value operand = copy.second == 0 ? op.getA() : op.getB();
        auto type = cast<RankedTensorType>(operand.getType());
        Value row = arith::MulIOp::create(
            b, loc, index,
            arith::ConstantIndexOp::create(b, loc, type.getDimSize(0)));
        SmallVector<OpFoldResult> offsets{row, b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes{b.getIndexAttr(type.getDimSize(0)),
                                        b.getIndexAttr(type.getDimSize(1))};
        SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
        yields.push_back(tensor::InsertSliceOp::create(
            b, loc, operand, windows[w], offsets, sizes, strides));
      }
      return yields;
    };
    FailureOr<LoopLikeOpInterface> replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rewriter, inits,
                                         /*replaceInitOperandUsesInLoop=*/false,
                                         newYields);
    if (failed(replaced))
      return;
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    for (auto [w, copy] : llvm::enumerate(copied))
      deferrals[copy.first].window[copy.second] =
          newLoop.getResult(firstNew + w);
    rewriter.setInsertionPointAfter(newLoop);
    Value first = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (Deferral &deferral : deferrals) {
      MatmulAccumulateOp op = deferral.op;
      Location opLoc = op.getLoc();
      // The accumulator goes through the loop unchanged.
      rewriter.replaceOp(op, op.getAccumulator());
      Value result = newLoop.getResult(deferral.position);
      auto product = MatmulAccumulateOp::create(
          rewriter, opLoc, result.getType(), deferral.window[0],
          deferral.window[1], result, first, /*transpose_a=*/true,
          /*transpose_b=*/false);
      rewriter.replaceAllUsesExcept(result, product.getResult(), product);
    }
  }

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      std::optional<APInt> count = loop.getStaticTripCount();
      if (!count || count->getSExtValue() < 2)
        continue;
      int64_t trips = count->getSExtValue();
      SmallVector<Deferral> deferrals;
      for (auto op : loop.getBody()->getOps<MatmulAccumulateOp>())
        if (std::optional<Deferral> d = match(op, loop, trips))
          deferrals.push_back(*d);
      if (!deferrals.empty())
        defer(rewriter, loop, trips, deferrals);
    }
  }
};

} // namespace
