//===- ReassociateReductions.cpp - gacc-reassociate-reductions ------------===//
//
// Marks the floating-point combiners of linalg reductions `reassoc`, so that
// LLVM's loop vectorizer may sum into several partial sums (the CPU path).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#define DEBUG_TYPE "gacc-reassociate-reductions"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCREASSOCIATEREDUCTIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Adds `reassoc` to the fast-math flags of `op` when it has them.
void allowReassociation(Operation *op) {
  auto fastMath = dyn_cast<arith::ArithFastMathInterface>(op);
  if (!fastMath)
    return;
  arith::FastMathFlags flags = fastMath.getFastMathFlagsAttr().getValue();
  op->setAttr(fastMath.getFastMathAttrName(),
              arith::FastMathFlagsAttr::get(
                  op->getContext(), flags | arith::FastMathFlags::reassoc));
}

/// Marks the combiners of every output of `op` that it reduces into.
void reassociateReductions(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op->getNumRegions() != 1 ||
      op->getRegion(0).empty())
    return;
  // matchReduction takes the output block arguments, whose positions
  // are those of the values the yield returns.
  SmallVector<BlockArgument> outputs(op.getRegionOutputArgs());
  for (unsigned pos = 0; pos < outputs.size(); ++pos) {
    SmallVector<Operation *> combiners;
    if (!matchReduction(outputs, pos, combiners))
      continue;
    for (Operation *combiner : combiners)
      allowReassociation(combiner);
  }
}

struct ReassociateReductionsPass
    : public mlir::gacc::impl::GAccReassociateReductionsPassBase<
          ReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation().walk(
        [](linalg::LinalgOp op) { reassociateReductions(op); });
  }
};

} // namespace
