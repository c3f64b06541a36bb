//===- GAccToSCF.cpp - convert-gacc-to-scf --------------------------------===//
//
// A conversion pattern that lowers memref gacc.matmul_accumulate to an
// scf.parallel loop nest over the accumulator with a sequential K reduction
// (fp32 FMA), β = first ? 0 : 1, applied with a ConversionTarget on which
// the memref form is illegal; gacc.phase_begin, a marker for the memory
// plan, is erased on the way.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "convert-gacc-to-scf"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOSCFPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The phase markers have served the memory plan: nothing below loops
/// knows them.
struct ErasePhaseBegin : public OpConversionPattern<PhaseBeginOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PhaseBeginOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

struct MatmulAccumulateToLoops
    : public OpConversionPattern<MatmulAccumulateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatmulAccumulateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getResult())
      return rewriter.notifyMatchFailure(op, "the tensor form");
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB(), c = adaptor.getAccumulator();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    auto dim = [&](Value v, int64_t d) -> Value {
      return memref::DimOp::create(rewriter, loc, v, d);
    };
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value m = dim(c, 0), n = dim(c, 1), k = dim(a, ta ? 0 : 1);
    Value first = adaptor.getFirst();
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{c0, c0}, ValueRange{m, n},
        ValueRange{c1, c1}, [&](OpBuilder &pb, Location pl, ValueRange ij) {
          Value i = ij[0], j = ij[1];
          // β = 0 on the first micro-batch: C is not read at all.
          auto init = scf::IfOp::create(
              pb, pl, first,
              [&](OpBuilder &tb2, Location tl) {
                Value z = arith::ConstantOp::create(tb2, tl,
                                                    tb2.getF32FloatAttr(0.0));
                scf::YieldOp::create(tb2, tl, z);
              },
              [&](OpBuilder &eb, Location el) {
                Value old =
                    memref::LoadOp::create(eb, el, c, ValueRange{i, j});
                scf::YieldOp::create(eb, el, old);
              });
          auto loop = scf::ForOp::create(
              pb, pl, c0, k, c1, ValueRange{init.getResult(0)},
              [&](OpBuilder &lb, Location ll, Value kk, ValueRange acc) {
                Value av = memref::LoadOp::create(
                    lb, ll, a, ta ? ValueRange{kk, i} : ValueRange{i, kk});
                Value bv = memref::LoadOp::create(
                    lb, ll, b, tb ? ValueRange{j, kk} : ValueRange{kk, j});
                // bf16 or fp16 factors (a narrowed step's stored values)
                // are extended to fp32: exact.
                Type f32 = lb.getF32Type();
                if (av.getType() != f32) {
                  av = arith::ExtFOp::create(lb, ll, f32, av);
                  bv = arith::ExtFOp::create(lb, ll, f32, bv);
                }
                Value s = math::FmaOp::create(lb, ll, av, bv, acc[0]);
                scf::YieldOp::create(lb, ll, s);
              });
          memref::StoreOp::create(pb, pl, loop.getResult(0), c,
                                  ValueRange{i, j});
        });
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertGAccToSCFPass
    : public mlir::gacc::impl::ConvertGAccToSCFPassBase<ConvertGAccToSCFPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<MatmulAccumulateOp>(
        [](MatmulAccumulateOp op) { return op.getResult() != nullptr; });
    target.addIllegalOp<PhaseBeginOp>();
    RewritePatternSet patterns(ctx);
    populateGAccToSCFConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateGAccToSCFConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ErasePhaseBegin, MatmulAccumulateToLoops>(patterns.getContext());
}
