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
#include "passes/conversion/RuntimeCalls.h"

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

/// Calls `abi::cudnnAttention(backward, type)` with `buffers` (each cast to
/// a rank-4 memref of dynamic sizes and strides), the scale (f32) and the
/// causal flag (i32), declaring the callee unless it exists. Fails when its
/// name is taken by a function of another type.
LogicalResult emitCall(ConversionPatternRewriter &rewriter, Operation *op,
                       bool backward, ValueRange buffers, double scale,
                       bool causal) {
  Location loc = op->getLoc();
  Type io = cast<MemRefType>(buffers.front().getType()).getElementType();
  std::string name = abi::cudnnAttention(
      backward, io.isBF16() ? abi::kBF16Operands : abi::kF16Operands);
  // The declaration first: nothing is created when its name is taken.
  SmallVector<Type> types;
  for (Value buffer : buffers)
    types.push_back(getDynamicStridedMemRefType(
        cast<MemRefType>(buffer.getType()).getElementType(), 4));
  types.push_back(rewriter.getF32Type());
  types.push_back(rewriter.getI32Type());
  FailureOr<func::FuncOp> callee = getOrDeclareRuntimeFunction(
      rewriter, op, name, rewriter.getFunctionType(types, {}));
  if (failed(callee))
    return failure();
  SmallVector<Value> operands;
  for (auto [buffer, type] : llvm::zip(buffers, types))
    operands.push_back(memref::CastOp::create(rewriter, loc, type, buffer));
  operands.push_back(arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(float(scale))));
  operands.push_back(arith::ConstantOp::create(
      rewriter, loc, rewriter.getI32IntegerAttr(causal)));
  func::CallOp::create(rewriter, loc, *callee, operands);
  return success();
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
    if (!takesRuntimeOperands(op))
      return rewriter.notifyMatchFailure(op, "a buffer cuDNN cannot take");
    if (failed(emitCall(rewriter, op,
                        std::is_same_v<FusedOp, FusedAttentionBackwardOp>,
                        adaptor.getOperands(),
                        op.getScale().convertToDouble(), op.getCausal())))
      return rewriter.notifyMatchFailure(op, "the entry point's name is "
                                             "taken by another function");
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertGAccToCuDNNPass
    : public mlir::gacc::impl::ConvertGAccToCuDNNPassBase<
          ConvertGAccToCuDNNPass> {
  void runOnOperation() override {
    // One error per op cuDNN cannot take, before converting: the pattern
    // only notes why it does not match (the driver may try it again), and
    // reports an error only for a taken entry-point name
    // (getOrDeclareRuntimeFunction).
    bool refused = false;
    getOperation().walk([&](Operation *op) {
      if (!isa<FusedAttentionOp, FusedAttentionBackwardOp>(op) ||
          !cast<DestinationStyleOpInterface>(op).hasPureBufferSemantics() ||
          takesRuntimeOperands(op))
        return;
      op->emitOpError("has a buffer cuDNN's entry point cannot take (another "
                      "memory space, or a layout that is not strided)");
      refused = true;
    });
    if (refused)
      return signalPassFailure();
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
