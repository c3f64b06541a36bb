//===- GAccBufferization.cpp - bufferization of gacc fusion ops -----------===//
//
// BufferizableOpInterface of gacc.matmul_accumulate and gacc.all_reduce:
// destination-style ops whose accumulator (buffer) bufferizes in place; the
// memref form keeps the op and drops its result.
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
    (void)newOp;
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
} // namespace

void mlir::gacc::registerGAccBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GAccDialect *) {
    MatmulAccumulateOp::attachInterface<MatmulAccumulateBufferization>(*ctx);
    AllReduceOp::attachInterface<AllReduceBufferization>(*ctx);
  });
}
