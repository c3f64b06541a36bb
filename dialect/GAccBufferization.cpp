//===- GAccBufferization.cpp - bufferization of gacc fusion ops -----------===//
//
// BufferizableOpInterface of gacc.matmul_accumulate and gacc.all_reduce:
// destination-style ops whose accumulator (buffer) bufferizes in place; the
// memref form keeps the op and drops its result. gacc.fused_attention and
// its backward: their inits (written, never read) in place likewise.
// gacc.recompute_inputs: each result is its operand's buffer (the op
// disappears).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::gacc;
using namespace mlir::bufferization;

namespace {
struct MatmulAccumulateBufferization
    : public DstBufferizableOpInterfaceExternalModel<
          MatmulAccumulateBufferization, MatmulAccumulateOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto mm = cast<MatmulAccumulateOp>(op);
    FailureOr<Value> a = getBuffer(rewriter, mm.getA(), options, state);
    FailureOr<Value> b = getBuffer(rewriter, mm.getB(), options, state);
    FailureOr<Value> c =
        getBuffer(rewriter, mm.getAccumulator(), options, state);
    if (failed(a) || failed(b) || failed(c))
      return failure();
    rewriter.setInsertionPoint(op);
    auto newOp = MatmulAccumulateOp::create(
        rewriter, op->getLoc(), Type(), *a, *b, *c, mm.getFirst(),
        mm.getTransposeA(), mm.getTransposeB());
    // What later passes learnt of the product (gacc.gemm_inputs) stays.
    newOp->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    replaceOpWithBufferizedValues(rewriter, op, *c);
    return success();
  }
};

/// gacc.all_reduce reduces its buffer in place.
struct AllReduceBufferization
    : public DstBufferizableOpInterfaceExternalModel<AllReduceBufferization,
                                                     AllReduceOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto reduce = cast<AllReduceOp>(op);
    FailureOr<Value> buffer =
        getBuffer(rewriter, reduce.getBuffer(), options, state);
    if (failed(buffer))
      return failure();
    rewriter.setInsertionPoint(op);
    AllReduceOp::create(rewriter, op->getLoc(), Type(), *buffer);
    replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};
/// gacc.fused_attention and gacc.fused_attention_backward: every operand
/// becomes its buffer, the inits' buffers are the results; the kernels
/// write their inits without reading them, so an init needs no copy of
/// what it held.
template <typename FusedOp>
struct FusedAttentionBufferization
    : public DstBufferizableOpInterfaceExternalModel<
          FusedAttentionBufferization<FusedOp>, FusedOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    SmallVector<Value> buffers, inits;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
      if (dps.isDpsInit(&operand))
        inits.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    FusedOp::create(rewriter, op->getLoc(), TypeRange{}, buffers,
                    op->getAttrs());
    replaceOpWithBufferizedValues(rewriter, op, inits);
    return success();
  }
};

/// gacc.recompute_inputs neither reads nor writes: each result is its
/// operand, equivalent buffer for buffer. Once bufferized the recomputed
/// ops write buffers of their own, so nothing is left to keep apart and the
/// op is dropped.
struct RecomputeInputsBufferization
    : public BufferizableOpInterface::ExternalModel<
          RecomputeInputsBufferization, RecomputeInputsOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()),
             BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    SmallVector<Value> replacements;
    for (Value input : op->getOperands()) {
      if (!isa<TensorType>(input.getType())) {
        replacements.push_back(input);
        continue;
      }
      FailureOr<Value> buffer = getBuffer(rewriter, input, options, state);
      if (failed(buffer))
        return failure();
      replacements.push_back(*buffer);
    }
    replaceOpWithBufferizedValues(rewriter, op, replacements);
    return success();
  }
};
} // namespace

void mlir::gacc::registerGAccBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GAccDialect *) {
    MatmulAccumulateOp::attachInterface<MatmulAccumulateBufferization>(*ctx);
    AllReduceOp::attachInterface<AllReduceBufferization>(*ctx);
    RecomputeInputsOp::attachInterface<RecomputeInputsBufferization>(*ctx);
    FusedAttentionOp::attachInterface<
        FusedAttentionBufferization<FusedAttentionOp>>(*ctx);
    FusedAttentionBackwardOp::attachInterface<
        FusedAttentionBufferization<FusedAttentionBackwardOp>>(*ctx);
  });
}
