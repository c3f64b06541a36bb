//===- GAccToCuDNN.cpp - convert-gacc-to-cudnn ----------------------------===//
//
// Conversion patterns that lower the memref forms of gacc.fused_attention
// and gacc.fused_attention_backward to calls of the runtime's cuDNN fused
// attention (abi::cudnnAttention, runtime/CudnnAttention.h), applied with a
// ConversionTarget on which both are illegal. Each operand is passed as a
// rank-4 memref of any sizes and strides (the runtime reads the strides:
// q, k and v are often views of one fused qkv projection), then the scale
// and the causal flag.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "abi/RuntimeABI.h"

#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "convert-gacc-to-cudnn"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOCUDNNPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;
namespace abi = ::gacc::abi;

namespace {

/// A rank-4 memref of `elem` of any sizes, strides and offset.
MemRefType dynamicStrided4(Type elem) {
  int64_t d = ShapedType::kDynamic;
  SmallVector<int64_t> dims(4, d);
  return MemRefType::get(dims, elem,
                         StridedLayoutAttr::get(elem.getContext(), d, dims));
}

/// Calls `abi::cudnnAttention(backward, type)` with `buffers` (each cast to
/// dynamicStrided4), the scale (f32) and the causal flag (i32), declaring
/// the callee at the start of the module unless it exists.
void emitCall(ConversionPatternRewriter &rewriter, Operation *op, bool backward,
              ValueRange buffers, double scale, bool causal) {
  Location loc = op->getLoc();
  Type io = cast<MemRefType>(buffers.front().getType()).getElementType();
  std::string name = abi::cudnnAttention(
      backward, io.isBF16() ? abi::kBF16Operands : abi::kF16Operands);
  SmallVector<Value> operands;
  for (Value buffer : buffers)
    operands.push_back(memref::CastOp::create(
        rewriter, loc,
        dynamicStrided4(cast<MemRefType>(buffer.getType()).getElementType()),
        buffer));
  operands.push_back(arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(float(scale))));
  operands.push_back(arith::ConstantOp::create(
      rewriter, loc, rewriter.getI32IntegerAttr(causal)));
  auto module = op->getParentOfType<ModuleOp>();
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    callee = func::FuncOp::create(
        rewriter, module.getLoc(), name,
        rewriter.getFunctionType(ValueRange(operands).getTypes(), {}));
    callee.setPrivate();
  }
  func::CallOp::create(rewriter, loc, callee, operands);
}

/// A fused attention kernel (memref form) as the runtime's cuDNN call:
/// every operand in order, inputs then outputs.
template <typename FusedOp>
struct FusedAttentionToCall : public OpConversionPattern<FusedOp> {
  using OpConversionPattern<FusedOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FusedOp op, typename FusedOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "the tensor form");
    emitCall(rewriter, op, std::is_same_v<FusedOp, FusedAttentionBackwardOp>,
             adaptor.getOperands(), op.getScale().convertToDouble(),
             op.getCausal());
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertGAccToCuDNNPass
    : public mlir::gacc::impl::ConvertGAccToCuDNNPassBase<
          ConvertGAccToCuDNNPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalOp<FusedAttentionOp, FusedAttentionBackwardOp>();
    RewritePatternSet patterns(ctx);
    populateGAccToCuDNNConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateGAccToCuDNNConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FusedAttentionToCall<FusedAttentionOp>,
               FusedAttentionToCall<FusedAttentionBackwardOp>>(
      patterns.getContext());
}
