//===- DeferWeightGradients.cpp - gacc-defer-weight-gradients -------------===//
//
// Per weight gradient of the micro-batch loop, a cost model chooses between
// adding each micro-batch's product into the accumulator (a GEMM with
// K = m, β = 1) and keeping the product's operands for the window and
// computing the weight gradient once after the loop (K = N·m); a bias
// gradient of rows the window keeps (their column sums) is then summed once
// after the loop too.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// The slice that makes `operand` iteration i's rows of a loop-invariant
/// window: `operand` is `tensor.extract_slice %w[i, 0, 0] [1, m, k]` of an
/// [N, m, k] tensor defined outside a loop from 0 by 1; null otherwise.
tensor::ExtractSliceOp windowSlice(Value operand, scf::ForOp loop,
                                   int64_t trips) {
  auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !loop.isDefinedOutsideOfLoop(slice.getSource()) ||
      getConstantIntValue(loop.getLowerBound()) != 0 ||
      getConstantIntValue(loop.getStep()) != 1)
    return {};
  auto source = cast<RankedTensorType>(slice.getSource().getType());
  auto result = cast<RankedTensorType>(operand.getType());
  if (source.getRank() != 3 || !source.hasStaticShape() ||
      source.getDimSize(0) != trips ||
      source.getShape().drop_front() != result.getShape() ||
      !slice.hasUnitStride() ||
      slice.getStaticSizes() !=
          ArrayRef<int64_t>{1, result.getDimSize(0), result.getDimSize(1)})
    return {};
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  if (dyn_cast<Value>(offsets[0]) != loop.getInductionVar() ||
      !isConstantIntValue(offsets[1], 0) || !isConstantIntValue(offsets[2], 0))
    return {};
  return slice;
}

/// True if the loop computes `operand` per micro-batch by a linalg op or a
/// gacc op (which convert-gacc-to-linalg makes one), whose result starts as
/// a fresh tensor: bufferization then builds it in its rows of a window
/// buffer (empty-tensor elimination), with no copy. A heuristic of the cost
/// model: views, reshapes and the results of other ops count as copied.
bool isBuiltInPlace(Value operand, scf::ForOp loop) {
  Operation *def = operand.getDefiningOp();
  return def && !loop.isDefinedOutsideOfLoop(operand) &&
         (isa<linalg::LinalgOp>(def) ||
          isa_and_present<GAccDialect>(def->getDialect()));
}

/// True if `v` is a bf16/fp16 step's rounded value: gacc-narrow-stored-values
/// stores it in the compute type, so that its products run on tensor cores
/// with narrow operands, which an fp32 window buffer would undo (twice the
/// bytes, fp32 GEMMs). Such products keep accumulating.
bool isRounded(Value v) {
  MLIRContext *ctx = v.getContext();
  return matchRoundToCompute(v, BFloat16Type::get(ctx)) ||
         matchRoundToCompute(v, Float16Type::get(ctx));
}

/// The loop-invariant [N·m, k] window whose rows [i·m, (i + 1)·m) are
/// `operand` in iteration i (see windowSlice), built before the loop; null
/// when there is none.
Value existingWindow(OpBuilder &b, Value operand, scf::ForOp loop,
                     int64_t trips) {
  tensor::ExtractSliceOp slice = windowSlice(operand, loop, trips);
  if (!slice)
    return Value();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  return tensor::CollapseShapeOp::create(
      b, slice.getLoc(), slice.getSource(),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

/// The ops of a generic's body before its terminator, when the body yields
/// one value: the last of them.
SmallVector<Operation *> bodyOps(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (ops.empty() || body.getTerminator()->getNumOperands() != 1 ||
      body.getTerminator()->getOperand(0) != ops.back()->getResult(0))
    return {};
  return ops;
}

/// A bias gradient accumulated in the loop: `first ? g : acc + g` (the
/// elementwise accumulate of gacc-fuse-accumulation) of g = the column sums
/// of `rows` [m, M] (a reduction over dimension 0 from a zero fill, in f64
/// and then truncated to f32, or in f32): once `rows` has a window, the
/// window's column sums after the loop are the same sum.
struct ColumnSumDeferral {
  linalg::GenericOp accumulate, sum, truncate; // truncate may be null
  unsigned position;
  Value rows;
  /// The deferral whose operand `operand` (0: A, 1: B) is `rows`.
  unsigned deferral = 0, operand = 0;
};

/// `acc` as a ColumnSumDeferral of `loop`, or nothing.
std::optional<ColumnSumDeferral> matchColumnSum(linalg::GenericOp acc,
                                                scf::ForOp loop) {
  if (acc.getNumDpsInputs() != 1 || acc.getNumDpsInits() != 1 ||
      acc.getNumResults() != 1 || !acc.getResult(0).hasOneUse())
    return std::nullopt;
  auto accArg = dyn_cast<BlockArgument>(acc.getDpsInits()[0]);
  OpOperand &use = *acc.getResult(0).getUses().begin();
  if (!accArg || accArg.getOwner() != loop.getBody() ||
      accArg.getArgNumber() == 0 || !accArg.hasOneUse() ||
      !isIdentityElementwise(acc) ||
      use.getOwner() != loop.getBody()->getTerminator() ||
      use.getOperandNumber() != accArg.getArgNumber() - 1)
    return std::nullopt;
  // first ? g : acc + g
  Block &body = acc.getRegion().front();
  SmallVector<Operation *> ops = bodyOps(acc);
  auto select = ops.empty() ? nullptr : dyn_cast<arith::SelectOp>(ops.back());
  if (ops.size() != 2 || !select ||
      !isFirstIteration(select.getCondition(), loop) ||
      select.getTrueValue() != body.getArgument(0) ||
      select.getFalseValue() != ops[0]->getResult(0) ||
      !isa<arith::AddFOp>(ops[0]) ||
      !llvm::is_contained(ops[0]->getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(ops[0]->getOperands(), body.getArgument(1)))
    return std::nullopt;
  // The f64 sums truncated, or the sums themselves.
  Value g = acc.getDpsInputs()[0];
  linalg::GenericOp truncate = g.getDefiningOp<linalg::GenericOp>();
  if (truncate) {
    ops = bodyOps(truncate);
    if (truncate.getNumDpsInputs() == 1 && isIdentityElementwise(truncate) &&
        truncate.getResult(0).getType() == acc.getResult(0).getType() &&
        ops.size() == 1 && isa<arith::TruncFOp>(ops[0]) &&
        ops[0]->getOperand(0) == truncate.getRegion().front().getArgument(0) &&
        g.hasOneUse())
      g = truncate.getDpsInputs()[0];
    else
      truncate = nullptr;
  }
  auto sum = g.getDefiningOp<linalg::GenericOp>();
  if (!sum || !g.hasOneUse() || sum.getNumDpsInputs() != 1 ||
      sum.getNumDpsInits() != 1 || !isZeroFill(sum.getDpsInits()[0]) ||
      sum.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                           utils::IteratorType::parallel})
    return std::nullopt;
  MLIRContext *ctx = sum.getContext();
  AffineExpr d0, d1;
  bindDims(ctx, d0, d1);
  if (sum.getIndexingMapsArray() !=
      SmallVector<AffineMap>{AffineMap::get(2, 0, {d0, d1}, ctx),
                             AffineMap::get(2, 0, {d1}, ctx)})
    return std::nullopt;
  // out + in, or out + extf(in).
  Block &sumBody = sum.getRegion().front();
  Value in = sumBody.getArgument(0), out = sumBody.getArgument(1);
  ops = bodyOps(sum);
  if (ops.size() == 2 && isa<arith::ExtFOp>(ops[0]) &&
      ops[0]->getOperand(0) == in)
    in = ops[0]->getResult(0);
  else if (ops.size() != 1)
    return std::nullopt;
  if (!isa<arith::AddFOp>(ops.back()) ||
      !llvm::is_contained(ops.back()->getOperands(), in) ||
      !llvm::is_contained(ops.back()->getOperands(), out))
    return std::nullopt;
  return ColumnSumDeferral{acc, sum, truncate, accArg.getArgNumber() - 1,
                           sum.getDpsInputs()[0]};
}

struct DeferWeightGradientsPass
    : public mlir::gacc::impl::GAccDeferWeightGradientsPassBase<
          DeferWeightGradientsPass> {
  using GAccDeferWeightGradientsPassBase::GAccDeferWeightGradientsPassBase;

  LogicalResult initialize(MLIRContext *ctx) override {
    return success(
        succeeded(checkOptionAtLeast(ctx, getArgument(), "max-window-bytes",
                                     maxWindowBytes, 0)) &&
        succeeded(checkOptionAtLeast(ctx, getArgument(), "launch-elements",
                                     launchElements, 0)));
  }

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
    if (!a.hasStaticShape() || !b.hasStaticShape() ||
        (narrowStorage && (isRounded(op.getA()) || isRounded(op.getB()))))
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
    // Launches, each worth `launchElements`: a GEMM per micro-batch, or one
    // after the loop and a copy per micro-batch of each operand that is not
    // written where the window keeps it.
    int64_t copies = 0;
    for (Value operand : {op.getA(), op.getB()})
      if (!windowSlice(operand, loop, trips) && !isBuiltInPlace(operand, loop))
        copies += trips;
    accumulating += trips * launchElements;
    deferring += (1 + copies) * launchElements;
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
             MutableArrayRef<Deferral> deferrals,
             ArrayRef<ColumnSumDeferral> columnSums) {
    Location loc = loop.getLoc();
    SmallVector<Value> inits;
    // The operands copied into window buffers, one buffer per value (two
    // products may share an operand), and the buffer of each.
    SmallVector<Value> copied;
    DenseMap<Value, unsigned> windowOf;
    rewriter.setInsertionPoint(loop);
    for (Deferral &deferral : deferrals) {
      Value operands[2] = {deferral.op.getA(), deferral.op.getB()};
      for (unsigned o = 0; o < 2; ++o) {
        deferral.window[o] = existingWindow(rewriter, operands[o], loop, trips);
        if (deferral.window[o] || windowOf.count(operands[o]))
          continue;
        windowOf[operands[o]] = copied.size();
        auto type = cast<RankedTensorType>(operands[o].getType());
        inits.push_back(tensor::EmptyOp::create(
            rewriter, loc,
            SmallVector<int64_t>{trips * type.getDimSize(0),
                                 type.getDimSize(1)},
            type.getElementType()));
        copied.push_back(operands[o]);
      }
    }
    unsigned firstNew = loop.getNumResults();
    SmallVector<Operation *> offsetOps;
    auto newYields = [&](OpBuilder &b, Location loc,
                         ArrayRef<BlockArgument> windows) {
      // Row offset of this micro-batch: (iv − lb) / step · m (moved to the
      // start of the body below).
      Value iv = loop.getInductionVar();
      Value index = arith::DivUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, iv, loop.getLowerBound()),
          loop.getStep());
      offsetOps.push_back(index.getDefiningOp()->getOperand(0).getDefiningOp());
      offsetOps.push_back(index.getDefiningOp());
      SmallVector<Value> yields;
      for (auto [w, operand] : llvm::enumerate(copied)) {
        auto type = cast<RankedTensorType>(operand.getType());
        Value m = arith::ConstantIndexOp::create(b, loc, type.getDimSize(0));
        Value row = arith::MulIOp::create(b, loc, index, m);
        offsetOps.push_back(m.getDefiningOp());
        offsetOps.push_back(row.getDefiningOp());
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
    // The row offsets first in the body, where they dominate the ops that
    // build the operands: empty-tensor elimination then builds each operand
    // in its rows of the window.
    Operation *front = &newLoop.getBody()->front();
    for (Operation *op : offsetOps)
      op->moveBefore(front);
    for (Deferral &deferral : deferrals)
      for (unsigned o = 0; o < 2; ++o)
        if (!deferral.window[o])
          deferral.window[o] = newLoop.getResult(
              firstNew + windowOf.lookup(o == 0 ? deferral.op.getA()
                                                : deferral.op.getB()));
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
    for (const ColumnSumDeferral &c : columnSums)
      deferColumnSum(rewriter, newLoop, c,
                     deferrals[c.deferral].window[c.operand]);
  }

  /// Replaces the accumulated column sums `c` in `loop` by the column sums
  /// of `window`, its rows' window, after the loop (the accumulator
  /// restarts at the first micro-batch, so the window's sums are its
  /// value).
  static void deferColumnSum(IRRewriter &rewriter, scf::ForOp loop,
                             ColumnSumDeferral c, Value window) {
    // The rows as the loop now has them (`c.rows` may be a value the loop's
    // rewrite replaced).
    Value rows = c.sum.getDpsInputs()[0];
    Location loc = c.accumulate.getLoc();
    // A fresh init of `v`'s type, filled with zero where `v` is a fill.
    auto freshInit = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                            type.getElementType());
      if (!isZeroFill(v))
        return empty;
      Value zero = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
      return linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    };
    IRMapping map;
    map.map(rows, window);
    map.map(c.sum.getDpsInits()[0], freshInit(c.sum.getDpsInits()[0]));
    Value sums = rewriter.clone(*c.sum, map)->getResult(0);
    if (c.truncate) {
      map.map(c.truncate.getDpsInits()[0],
              freshInit(c.truncate.getDpsInits()[0]));
      sums = rewriter.clone(*c.truncate, map)->getResult(0);
    }
    // The accumulator goes through the loop unchanged.
    rewriter.replaceAllUsesWith(loop.getResult(c.position), sums);
    rewriter.replaceOp(c.accumulate, c.accumulate.getDpsInits()[0]);
    // The per-micro-batch sums go, and their inits (a fill, empty tensors)
    // when nothing else uses them.
    SmallVector<Value> inits;
    for (linalg::GenericOp g : {c.truncate, c.sum})
      if (g) {
        inits.push_back(g.getDpsInits()[0]);
        rewriter.eraseOp(g);
      }
    while (!inits.empty()) {
      Value v = inits.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !v.use_empty() || !isa<tensor::EmptyOp, linalg::FillOp>(def))
        continue;
      llvm::append_range(inits, def->getOperands());
      rewriter.eraseOp(def);
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
      if (deferrals.empty())
        continue;
      // Bias gradients of rows that the window keeps anyway.
      SmallVector<ColumnSumDeferral> columnSums;
      for (auto g : loop.getBody()->getOps<linalg::GenericOp>()) {
        std::optional<ColumnSumDeferral> c = matchColumnSum(g, loop);
        for (unsigned d = 0; c && d < deferrals.size(); ++d) {
          Value operands[2] = {deferrals[d].op.getA(), deferrals[d].op.getB()};
          for (unsigned o = 0; c && o < 2; ++o)
            if (operands[o] == c->rows) {
              c->deferral = d;
              c->operand = o;
              columnSums.push_back(*c);
              c.reset();
            }
        }
      }
      defer(rewriter, loop, trips, deferrals, columnSums);
    }
  }
};

} // namespace
