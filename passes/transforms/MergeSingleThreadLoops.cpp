//===- MergeSingleThreadLoops.cpp - gacc-merge-single-thread-loops --------===//
//
// Merges runs of one-iteration scf.parallel loops (the device's scalar
// work: a loss summed to a scalar, a conversion, the micro-batch loop's
// carried values) that only allocations, frees, memory-free ops and
// kernels that do not conflict with them separate (classifyCrossing; a
// free of a buffer an earlier loop reads moves after the merged loop), so
// that the GPU mapping makes one one-thread kernel of each run instead of
// one per loop, as long as the merged kernel's parameters stay within
// PTX's limit.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/KernelOrder.h"
#include "passes/analysis/KernelParameters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "gacc-merge-single-thread-loops"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMERGESINGLETHREADLOOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The one value of the loop's induction variable, if the loop is one
/// iteration of one dimension without reductions.
std::optional<int64_t> singleIteration(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || !loop.getInitVals().empty())
    return std::nullopt;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[0]);
  if (!lb || !ub || !step || *step <= 0 || *ub <= *lb || *ub - *lb > *step)
    return std::nullopt;
  return *lb;
}

/// Puts `first`'s body at the start of `second`'s (its induction variable
/// replaced by its one value) and erases `first`.
void prependBody(scf::ParallelOp first, int64_t firstIv,
                 scf::ParallelOp second) {
  OpBuilder b = OpBuilder::atBlockBegin(second.getBody());
  IRMapping map;
  map.map(first.getInductionVars()[0],
          arith::ConstantIndexOp::create(b, first.getLoc(), firstIv));
  for (Operation &op : first.getBody()->without_terminator())
    b.clone(op, map);
  first.erase();
}

/// Merges the runs of one block; a loop whose merge would take more than
/// `maxParameterBytes` of kernel parameters starts a new run.
void mergeRuns(Block &block, ArrayRef<std::string> gemmCallees,
               bool distinctArguments, int64_t maxParameterBytes) {
  scf::ParallelOp pending;
  int64_t pendingIv = 0;
  // The buffers the pending loops write (collectAccesses), or nothing when
  // some effect cannot be placed.
  std::optional<SmallVector<Value>> pendingWrites;
  // The frees that follow the pending loop, in their order.
  SmallVector<Operation *> delayed;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto loop = dyn_cast<scf::ParallelOp>(op);
    std::optional<int64_t> iv = loop ? singleIteration(loop) : std::nullopt;
    if (iv) {
      if (pending && fitsKernelParameters({pending, loop}, maxParameterBytes)) {
        prependBody(pending, pendingIv, loop);
        // The frees stay after the run's loop, wherever it ends.
        Operation *after = loop;
        for (Operation *free : delayed) {
          free->moveAfter(after);
          after = free;
        }
      } else {
        // A new run: the earlier loop and its frees stay where they are.
        delayed.clear();
      }
      pending = loop;
      pendingIv = *iv;
      SmallVector<Value> reads, writes;
      pendingWrites = collectAccesses(loop, reads, writes)
                          ? std::optional(std::move(writes))
                          : std::nullopt;
      continue;
    }
    if (!pending)
      continue;
    auto viewed = [&](Value buffer) {
      return touchesMemoryOf(pending, buffer, distinctArguments);
    };
    auto written = [&](Value buffer) {
      return !pendingWrites || llvm::any_of(*pendingWrites, [&](Value w) {
        return mayAlias(w, buffer, distinctArguments);
      });
    };
    switch (classifyCrossing(op, {viewed, written}, gemmCallees)) {
    case Crossing::Free:
      break;
    case Crossing::DelayFree:
      delayed.push_back(&op);
      break;
    case Crossing::Blocks:
      pending = nullptr;
      delayed.clear();
      break;
    }
  }
}

struct MergeSingleThreadLoopsPass
    : public mlir::gacc::impl::GAccMergeSingleThreadLoopsPassBase<
          MergeSingleThreadLoopsPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    return checkOptionAtLeast(ctx, getArgument(), "max-parameter-bytes",
                              maxParameterBytes, 1);
  }
  void runOnOperation() override {
    // The host code's blocks: a parallel loop's own body is one kernel.
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      if (!isa<scf::ParallelOp>(parent) &&
          !parent->getParentOfType<scf::ParallelOp>())
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      mergeRuns(*block, gemmCallees, distinctArguments, maxParameterBytes);
  }
};

} // namespace
