//===- PrivatizeInits.cpp - gacc-privatize-inits --------------------------===//
//
// Gives every destination-style op on tensors an init of its own: a
// tensor.empty or linalg.fill that several ops take as their init (which
// CSE creates by merging identical ones) is cloned for each extra use, so
// one-shot bufferization writes each op's result in place instead of
// copying a shared buffer. This is what makes CSE safe before
// bufferization.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#define DEBUG_TYPE "gacc-privatize-inits"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCPRIVATIZEINITSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The init operands of destination-style ops that read `v` as their init,
/// in program order within a block.
SmallVector<OpOperand *> initUses(Value v) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : v.getUses())
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
      if (dps.isDpsInit(&use))
        uses.push_back(&use);
  llvm::stable_sort(uses, [](OpOperand *a, OpOperand *b) {
    Operation *x = a->getOwner(), *y = b->getOwner();
    return x->getBlock() == y->getBlock() && x->isBeforeInBlock(y);
  });
  return uses;
}

struct PrivatizeInitsPass
    : public mlir::gacc::impl::GAccPrivatizeInitsPassBase<PrivatizeInitsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> shareable;
    getOperation()->walk([&](Operation *op) {
      if (isa<tensor::EmptyOp, linalg::FillOp>(op) && op->getNumResults() == 1)
        shareable.push_back(op);
    });
    // Users first: the clones of a fill share its empty tensor, which is
    // privatized after them.
    for (Operation *op : llvm::reverse(shareable)) {
      SmallVector<OpOperand *> uses = initUses(op->getResult(0));
      if (uses.size() < 2)
        continue;
      // Every use but the first gets a clone placed right before it.
      for (OpOperand *use : llvm::drop_begin(uses)) {
        OpBuilder b(use->getOwner());
        use->set(b.clone(*op)->getResult(0));
      }
    }
  }
};

} // namespace
