//===- ParallelizeLoops.cpp - gacc-parallelize-loops ----------------------===//
//
// Splits each large linalg op on buffers into one slab per CPU thread along
// a parallel iteration dimension (upstream linalg::tileLinalgOp into an
// scf.parallel), which upstream convert-scf-to-openmp then runs on an
// OpenMP team: the CPU step's loops on every core.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "gacc-parallelize-loops"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCPARALLELIZELOOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Whether every output of `op` is indexed by iteration dimension `d`
/// itself, through a projected permutation (an output element per
/// distinct value of the dimensions it keeps), so that slabs along `d`
/// write disjoint output elements: (d0, d1) -> (d0) may split d0, but
/// (d0, d1) -> (d0 + d1) nothing.
bool indexesEveryOutput(linalg::LinalgOp op, unsigned d) {
  return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    return map.isProjectedPermutation() && map.isFunctionOfDim(d);
  });
}

/// The iteration dimension to split `op` along, or none. The op must be on
/// buffers, with static loop ranges and at least `minIterations`
/// iterations in all, and outside any scf.parallel or scf.forall. Of its
/// parallel dimensions with at least `threads` iterations that index every
/// output, the one whose slabs are most even (the least work in the
/// largest slab: ceil(range / threads) over range), the outermost of
/// equals: [5, 8192] with 2 threads splits the 8192, [64, 1024] the 64.
std::optional<unsigned> splitDimension(linalg::LinalgOp op, int64_t threads,
                                       int64_t minIterations) {
  if (!op.hasPureBufferSemantics() || op->getParentOfType<scf::ParallelOp>() ||
      op->getParentOfType<scf::ForallOp>())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t iterations = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r))
      return std::nullopt;
    iterations *= r;
  }
  if (iterations < minIterations)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  std::optional<unsigned> best;
  double bestShare = 0;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    if (iterators[d] != utils::IteratorType::parallel ||
        ranges[d] < threads || !indexesEveryOutput(op, d))
      continue;
    double share = double(llvm::divideCeil(ranges[d], threads)) / ranges[d];
    if (!best || share < bestShare) {
      best = d;
      bestShare = share;
    }
  }
  return best;
}

struct ParallelizeLoopsPass
    : mlir::gacc::impl::GAccParallelizeLoopsPassBase<ParallelizeLoopsPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (threads < 1 || minIterations < 1)
      return emitError(UnknownLoc::get(ctx))
             << "gacc-parallelize-loops: threads and min-iterations must be "
                "positive, got "
             << int64_t(threads) << " and " << int64_t(minIterations);
    if (threads > kMaxCpuThreads)
      return emitError(UnknownLoc::get(ctx))
             << "gacc-parallelize-loops: threads must be at most "
             << kMaxCpuThreads << ", got " << int64_t(threads);
    return success();
  }

  void runOnOperation() override {
    if (threads == 1)
      return;
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (auto d = splitDimension(op, threads, minIterations))
        work.push_back({op, *d});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, d] : work) {
      SmallVector<int64_t> sizes(op.getNumLoops(), 0);
      sizes[d] = llvm::divideCeil(op.getStaticLoopRanges()[d], threads);
      linalg::LinalgTilingOptions options;
      options.setTileSizes(sizes).setLoopType(
          linalg::LinalgTilingLoopType::ParallelLoops);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::tileLinalgOp(rewriter, op, options))) {
        op->emitError("cannot split this op into slabs along its iteration "
                      "dimension ")
            << d;
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
