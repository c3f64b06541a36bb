//===- ReductionsInnermost.cpp - gacc-reductions-innermost ----------------===//
//
// Interchanges linalg.generic iteration dimensions so that the parallel ones
// are outermost and the reductions innermost, for the GPU mapping.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCREDUCTIONSINNERMOSTPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The permutation (new position → old dimension) that puts the parallel
/// dimensions first and the reductions last, each group in its old order;
/// empty when the generic is already in that order.
SmallVector<unsigned> parallelFirst(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [d, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    (kind == utils::IteratorType::parallel ? parallel : reduction)
        .push_back(unsigned(d));
  SmallVector<unsigned> order(parallel);
  llvm::append_range(order, reduction);
  for (unsigned d = 0; d < order.size(); ++d)
    if (order[d] != d)
      return order;
  return {};
}

struct ReductionsInnermostPass
    : public mlir::gacc::impl::GAccReductionsInnermostPassBase<
          ReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<unsigned> order = parallelFirst(op);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("could not interchange its loops to put the parallel "
                       "dimensions first");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
