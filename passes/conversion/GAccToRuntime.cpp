//===- GAccToRuntime.cpp - convert-gacc-to-runtime ------------------------===//
//
// A conversion pattern that lowers memref gacc.all_reduce to calls of the
// runtime's collective, gacc_all_reduce_sum_f32 (runtime/Collectives.cpp),
// applied with a ConversionTarget on which the memref form is illegal.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "abi/RuntimeABI.h"
#include "passes/conversion/RuntimeCalls.h"

#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "convert-gacc-to-runtime"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTORUNTIMEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;
namespace abi = ::gacc::abi;

namespace {

/// memref<?xf32, strided<[?], offset: ?>>: any 1-D fp32 buffer.
MemRefType anyVector(MLIRContext *ctx) {
  int64_t d = ShapedType::kDynamic;
  return MemRefType::get({d}, Float32Type::get(ctx),
                         StridedLayoutAttr::get(ctx, d, {d}));
}

FunctionType collectiveType(MLIRContext *ctx) {
  return FunctionType::get(ctx, {anyVector(ctx)}, {});
}

struct AllReduceToCall : public OpConversionPattern<AllReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getResult())
      return rewriter.notifyMatchFailure(op, "the tensor form");
    MLIRContext *ctx = op.getContext();
    FailureOr<func::FuncOp> callee = getOrDeclareRuntimeFunction(
        rewriter, op, abi::kAllReduceSumF32, collectiveType(ctx));
    if (failed(callee))
      return rewriter.notifyMatchFailure(op, "the collective's name is taken");
    Value buffer = memref::CastOp::create(rewriter, op.getLoc(),
                                          anyVector(ctx), adaptor.getBuffer());
    func::CallOp::create(rewriter, op.getLoc(), *callee, ValueRange{buffer});
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertGAccToRuntimePass
    : public mlir::gacc::impl::ConvertGAccToRuntimePassBase<
          ConvertGAccToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // The collective's name must be free or be the collective: say so
    // rather than leave the op unconverted.
    Operation *existing = module.lookupSymbol(abi::kAllReduceSumF32);
    auto func = dyn_cast_or_null<func::FuncOp>(existing);
    if (existing &&
        (!func || func.getFunctionType() != collectiveType(ctx))) {
      existing->emitError("@")
          << abi::kAllReduceSumF32
          << " is taken by another definition; the runtime's collective "
             "must be func.func ("
          << anyVector(ctx) << ") -> ()";
      return signalPassFailure();
    }
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<AllReduceOp>(
        [](AllReduceOp op) { return op.getResult() != nullptr; });
    RewritePatternSet patterns(ctx);
    populateGAccToRuntimeConversionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateGAccToRuntimeConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AllReduceToCall>(patterns.getContext());
}
