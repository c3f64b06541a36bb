//===- StridedCopiesToLinalg.cpp - gacc-strided-copies-to-linalg ----------===//
//
// Rewrites each memref.copy that is not between contiguous row-major
// buffers (what bufferization makes of a strided tensor.insert_slice or a
// tensor.pad) into linalg.copy, which the pipelines lower with the other
// linalg ops (loops on the CPU, kernels on the GPU) instead of a call of
// MLIR's C runner utilities (memrefCopy), which gacc's runtime does not
// link.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "gacc-strided-copies-to-linalg"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCSTRIDEDCOPIESTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

bool isContiguous(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && memref::isStaticShapeAndContiguousRowMajor(type);
}

/// memref.copy between buffers of which one is strided -> linalg.copy.
struct StridedCopyToLinalg : public OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    if (isContiguous(op.getSource()) && isContiguous(op.getTarget()))
      return rewriter.notifyMatchFailure(op, "a contiguous copy (memcpy)");
    if (!isa<MemRefType>(op.getSource().getType()) ||
        !isa<MemRefType>(op.getTarget().getType()))
      return rewriter.notifyMatchFailure(op, "not ranked memrefs");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct StridedCopiesToLinalgPass
    : public mlir::gacc::impl::GAccStridedCopiesToLinalgPassBase<
          StridedCopiesToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateStridedCopiesToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateStridedCopiesToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<StridedCopyToLinalg>(patterns.getContext());
}
