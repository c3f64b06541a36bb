//===- FuseAccumulation.cpp - gacc-fuse-accumulation ----------------------===//
//
// Rewrite patterns that write contraction-produced gradients straight into
// their accumulators, turn the remaining accumulates into one elementwise
// kernel each, and the deferred update into one kernel per parameter.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "gacc-fuse-accumulation"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCFUSEACCUMULATIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The zero-initialized f32 contraction (one use, tensors) that produces
/// the gradient of `acc`, or null.
linalg::LinalgOp gradientContraction(AccumulateOp acc) {
  auto op = acc.getGradient().getDefiningOp<linalg::LinalgOp>();
  if (!op || !op->hasOneUse() || !op.hasPureTensorSemantics() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isZeroFill(op.getDpsInits()[0]) ||
      !linalg::isaContractionOpInterface(op))
    return linalg::LinalgOp();
  for (Value v : op->getOperands())
    if (!getElementTypeOrSelf(v.getType()).isF32())
      return linalg::LinalgOp();
  return op;
}

/// The dimension groups of a map's results: the positions of `group`'s
/// dimensions, in the map's order, when they are consecutive results.
std::optional<SmallVector<unsigned>> groupOrder(AffineMap map,
                                                ArrayRef<unsigned> group,
                                                unsigned &start) {
  SmallVector<unsigned> order;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (!llvm::is_contained(group, d))
      continue;
    if (!order.empty() && i != start + order.size())
      return std::nullopt;
    if (order.empty())
      start = i;
    order.push_back(d);
  }
  if (order.size() != group.size())
    return std::nullopt;
  return order;
}

/// One operand of a contraction seen as a matrix: its two groups of
/// dimensions each consecutive, `leading` first unless `transposed`.
struct MatrixView {
  bool transposed = false;
  SmallVector<unsigned> leading, trailing; // dimension orders
};

std::optional<MatrixView> matrixView(AffineMap map, ArrayRef<unsigned> rows,
                                     ArrayRef<unsigned> cols) {
  if (map.getNumResults() != rows.size() + cols.size() ||
      !map.isProjectedPermutation())
    return std::nullopt;
  unsigned rowStart = 0, colStart = 0;
  auto r = groupOrder(map, rows, rowStart);
  auto c = groupOrder(map, cols, colStart);
  if (!r || !c)
    return std::nullopt;
  return MatrixView{rowStart > colStart, *r, *c};
}

/// `v` collapsed to a matrix: its results of the first group into rows.
Value collapseToMatrix(OpBuilder &b, Location loc, Value v,
                       const MatrixView &view) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 2)
    return v;
  unsigned first = view.transposed ? view.trailing.size() : view.leading.size();
  ReassociationIndices a, c;
  for (unsigned i = 0; i < type.getRank(); ++i)
    (i < first ? a : c).push_back(i);
  return tensor::CollapseShapeOp::create(
      b, loc, v, SmallVector<ReassociationIndices>{a, c});
}

/// A contraction C[m…, n…] += A[m…, k…]·B[k…, n…] (any order of the two
/// groups in each operand, each group consecutive and in the same order
/// wherever it appears, no batch dimension) written into the accumulator
/// as one gacc.matmul_accumulate on the operands collapsed to matrices:
/// matmul in every transposition, a batch matmul whose weight is shared
/// by the batch (the batch joins the contracted dimensions), linalg.generic
/// contractions.
struct FuseGemmIntoAccumulate : public OpRewritePattern<AccumulateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AccumulateOp acc,
                                PatternRewriter &rewriter) const override {
    linalg::LinalgOp op = gradientContraction(acc);
    if (!op)
      return rewriter.notifyMatchFailure(acc, "not a zero-initialized f32 "
                                              "contraction");
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || !dims->batch.empty())
      return rewriter.notifyMatchFailure(acc, "a batched contraction");
    // A matrix-vector product (an empty group) is no GEMM here.
    if (dims->m.empty() || dims->n.empty() || dims->k.empty())
      return rewriter.notifyMatchFailure(acc, "an empty dimension group");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto a = matrixView(maps[0], dims->m, dims->k);
    auto bv = matrixView(maps[1], dims->k, dims->n);
    auto c = matrixView(maps[2], dims->m, dims->n);
    if (!a || !bv || !c || a->trailing != bv->leading ||
        a->leading != c->leading || bv->trailing != c->trailing)
      return rewriter.notifyMatchFailure(acc, "not a matrix product of "
                                              "consecutive dimension groups");
    Location loc = acc.getLoc();
    Value aMat = collapseToMatrix(rewriter, loc, op.getDpsInputs()[0], *a);
    Value bMat = collapseToMatrix(rewriter, loc, op.getDpsInputs()[1], *bv);
    Value cMat = collapseToMatrix(rewriter, loc, acc.getAccumulator(), *c);
    // C stored as [n, m] is Cᵀ = op(B)ᵀ·op(A)ᵀ.
    Value first = aMat, second = bMat;
    bool transFirst = a->transposed, transSecond = bv->transposed;
    if (c->transposed) {
      std::swap(first, second);
      transFirst = !bv->transposed;
      transSecond = !a->transposed;
    }
    Value r = MatmulAccumulateOp::create(rewriter, loc, cMat.getType(), first,
                                         second, cMat, acc.getFirst(),
                                         transFirst, transSecond)
                  .getResult();
    if (r.getType() != acc.getType())
      r = tensor::ExpandShapeOp::create(
          rewriter, loc, acc.getType(), r,
          cast<tensor::CollapseShapeOp>(cMat.getDefiningOp())
              .getReassociationIndices());
    rewriter.replaceOp(acc, r);
    rewriter.eraseOp(op);
    return success();
  }
};

/// accumulate(expand_shape(g), acc) -> expand_shape(accumulate(g,
/// collapse_shape(acc))): a gradient computed in a reshaped view of its
/// parameter (a conv2d weight [O, C, KH, KW], whose gradient is a GEMM into
/// [O, C·KH·KW]) meets the accumulator viewed the same way, so that the
/// contraction patterns write it in place.
struct AccumulateThroughExpandShape : public OpRewritePattern<AccumulateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AccumulateOp acc,
                                PatternRewriter &rewriter) const override {
    auto expand = acc.getGradient().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand->hasOneUse())
      return rewriter.notifyMatchFailure(acc, "not a reshaped gradient");
    Location loc = acc.getLoc();
    SmallVector<ReassociationIndices> groups =
        expand.getReassociationIndices();
    Value accView = tensor::CollapseShapeOp::create(
        rewriter, loc, acc.getAccumulator(), groups);
    Value inner = AccumulateOp::create(rewriter, loc, accView.getType(),
                                       expand.getSrc(), accView,
                                       acc.getFirst());
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(acc, acc.getType(),
                                                       inner, groups);
    // The gradient's producer keeps one use, as the contraction patterns
    // require.
    rewriter.eraseOp(expand);
    return success();
  }
};

/// Any other contraction accumulates in place: its init becomes the
/// accumulator and its body starts from 0 instead of the accumulator's old
/// value at the first reduction point of the window's first micro-batch
/// (β = 0 without a zero-fill; the old value is selected away, never
/// used). The reset relies on the reduction visiting index 0 of every
/// reduction dimension before the others (lexicographic order, as every
/// loop lowering does); a pass that tiles or splits this op's reductions
/// would have to keep the reset on the first chunk only.
struct AccumulateContractionInPlace : public OpRewritePattern<AccumulateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AccumulateOp acc,
                                PatternRewriter &rewriter) const override {
    linalg::LinalgOp op = gradientContraction(acc);
    if (!op)
      return rewriter.notifyMatchFailure(acc, "not a zero-initialized f32 "
                                              "contraction");
    Location loc = acc.getLoc();
    Value first = acc.getFirst();
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    Block *body = op.getBlock();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{acc.getType()}, op.getDpsInputs(),
        ValueRange{acc.getAccumulator()}, op.getIndexingMapsArray(),
        op.getIteratorTypesArray(),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value reset = first;
          Value c0 = arith::ConstantIndexOp::create(b, l, 0);
          for (unsigned d : reductions)
            reset = arith::AndIOp::create(
                b, l, reset,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                      linalg::IndexOp::create(b, l, d), c0));
          Value zero =
              arith::ConstantOp::create(b, l, b.getF32FloatAttr(0.0));
          IRMapping mapping;
          for (auto [from, to] : llvm::zip(body->getArguments(), args))
            mapping.map(from, to);
          mapping.map(body->getArgument(2),
                      arith::SelectOp::create(b, l, reset, zero, args[2]));
          for (Operation &inner : *body)
            b.clone(inner, mapping);
        });
    rewriter.replaceOp(acc, generic->getResults());
    rewriter.eraseOp(op);
    return success();
  }
};

/// accumulate -> one elementwise kernel, first ? g : acc + g.
struct LowerAccumulate : public OpRewritePattern<AccumulateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AccumulateOp acc,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(acc.getType());
    AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
    Value first = acc.getFirst();
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        acc, TypeRange{type}, ValueRange{acc.getGradient()},
        ValueRange{acc.getAccumulator()}, SmallVector<AffineMap>{id, id},
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value sum = arith::AddFOp::create(b, loc, args[1], args[0]);
          Value r = arith::SelectOp::create(b, loc, first, args[0], sum);
          linalg::YieldOp::create(b, loc, r);
        });
    return success();
  }
};

/// apply_optimizer -> one kernel reading accumulator, parameter and state
/// once and writing parameter and state; the optimizer's own rule
/// (OptimizerAttrInterface) builds the element update.
struct LowerApplyOptimizer : public OpRewritePattern<ApplyOptimizerOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyOptimizerOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto optimizer = cast<OptimizerAttrInterface>(op.getOptimizer());
    auto type = cast<RankedTensorType>(op.getParam().getType());
    AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
    Value zero64 = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getI64IntegerAttr(0));
    Value one64 = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getI64IntegerAttr(1));
    Value firstStep = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, op.getStep(), zero64);
    // The 1-based number of this optimizer step, for bias corrections.
    Value stepNumber = arith::SIToFPOp::create(
        rewriter, loc, rewriter.getF32Type(),
        arith::AddIOp::create(rewriter, loc, op.getStep(), one64));
    Value count = op.getCount(), clip = op.getClip(), lr = op.getLr();
    bool decay = !op.getNoWeightDecay();
    SmallVector<Value> outs = {op.getParam()};
    llvm::append_range(outs, op.getState());
    SmallVector<AffineMap> maps(1 + outs.size(), id);
    SmallVector<Type> types(outs.size(), type);
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, types, ValueRange{op.getAccumulator()}, outs, maps,
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          // The one normalization: the window's summed gradient / its
          // count, then the clipping coefficient.
          Value g = arith::DivFOp::create(b, l, args[0], count);
          if (clip)
            g = arith::MulFOp::create(b, l, g, clip);
          SmallVector<Value> results =
              optimizer.buildUpdate(b, l, g, args[1], args.drop_front(2), lr,
                                    firstStep, stepNumber, decay);
          linalg::YieldOp::create(b, l, results);
        });
    return success();
  }
};

struct FuseAccumulationPass
    : public mlir::gacc::impl::GAccFuseAccumulationPassBase<
          FuseAccumulationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAccumulationPatterns(patterns);
    // Only these patterns, no folding: the IR around them stays as it was.
    GreedyRewriteConfig config;
    config.enableFolding(false).setRegionSimplificationLevel(
        GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateFuseAccumulationPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  // Reshapes out of the way, a GEMM first, then any other contraction,
  // then the plain accumulate.
  patterns.add<AccumulateThroughExpandShape>(ctx, /*benefit=*/4);
  patterns.add<FuseGemmIntoAccumulate>(ctx, /*benefit=*/3);
  patterns.add<AccumulateContractionInPlace>(ctx, /*benefit=*/2);
  patterns.add<LowerAccumulate, LowerApplyOptimizer>(ctx, /*benefit=*/1);
}
