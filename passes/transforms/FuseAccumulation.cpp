//===- FuseAccumulation.cpp - gacc-fuse-accumulation ----------------------===//
//
// Writes matmul-produced gradients straight into their accumulators, turns
// the remaining accumulates into one elementwise kernel each, and the
// deferred update into one kernel per parameter.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "gacc-fuse-accumulation"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCFUSEACCUMULATIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// True if `v` is `linalg.fill` of constant 0.0.
static bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  auto cst = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto f = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  return f && f.getValue().isZero();
}

/// Rewrite 1: accumulate(matmul(A, B, zero-init)) -> matmul_accumulate.
static bool fuseIntoMatmul(RewriterBase &rewriter, AccumulateOp acc) {
  auto mm = acc.getGradient().getDefiningOp<linalg::MatmulOp>();
  if (!mm || !mm->hasOneUse() || !mm.hasPureTensorSemantics() ||
      !isZeroFill(mm.getOutputs()[0]))
    return false;
  FailureOr<std::pair<bool, bool>> transposes = getMatmulTransposes(mm);
  if (failed(transposes))
    return false;
  auto [transA, transB] = *transposes;
  rewriter.setInsertionPoint(acc);
  auto fused = MatmulAccumulateOp::create(
      rewriter, acc.getLoc(), acc.getType(), mm.getInputs()[0],
      mm.getInputs()[1], acc.getAccumulator(), acc.getFirst(), transA, transB);
  rewriter.replaceOp(acc, fused.getResult());
  rewriter.eraseOp(mm);
  return true;
}

/// Rewrite 2: accumulate -> one elementwise kernel, first ? g : acc + g.
static void lowerAccumulate(RewriterBase &rewriter, AccumulateOp acc) {
  rewriter.setInsertionPoint(acc);
  auto type = cast<RankedTensorType>(acc.getType());
  AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
  Value first = acc.getFirst();
  auto generic = linalg::GenericOp::create(
      rewriter, acc.getLoc(), TypeRange{type}, ValueRange{acc.getGradient()},
      ValueRange{acc.getAccumulator()}, SmallVector<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value sum = arith::AddFOp::create(b, loc, args[1], args[0]);
        Value r = arith::SelectOp::create(b, loc, first, args[0], sum);
        linalg::YieldOp::create(b, loc, r);
      });
  rewriter.replaceOp(acc, generic.getResults());
}

/// Rewrite 3: apply_optimizer -> one kernel reading accumulator, parameter
/// and state once and writing parameter and state; the optimizer's own rule
/// (OptimizerAttrInterface) builds the element update.
static void lowerApplyOptimizer(RewriterBase &rewriter, ApplyOptimizerOp op) {
  rewriter.setInsertionPoint(op);
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
  auto generic = linalg::GenericOp::create(
      rewriter, loc, types, ValueRange{op.getAccumulator()}, outs, maps,
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange args) {
        // The one normalization: the window's summed gradient / its count,
        // then the clipping coefficient.
        Value g = arith::DivFOp::create(b, l, args[0], count);
        if (clip)
          g = arith::MulFOp::create(b, l, g, clip);
        SmallVector<Value> results =
            optimizer.buildUpdate(b, l, g, args[1], args.drop_front(2), lr,
                                  firstStep, stepNumber, decay);
        linalg::YieldOp::create(b, l, results);
      });
  rewriter.replaceOp(op, generic.getResults());
}

struct FuseAccumulationPass
    : public mlir::gacc::impl::GAccFuseAccumulationPassBase<FuseAccumulationPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<AccumulateOp> accs;
    getOperation().walk([&](AccumulateOp a) { accs.push_back(a); });
    for (AccumulateOp a : accs)
      if (!fuseIntoMatmul(rewriter, a))
        lowerAccumulate(rewriter, a);
    SmallVector<ApplyOptimizerOp> updates;
    getOperation().walk([&](ApplyOptimizerOp u) { updates.push_back(u); });
    for (ApplyOptimizerOp u : updates)
      lowerApplyOptimizer(rewriter, u);
  }
};

} // namespace
