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
/// in the order of `position` (the ops' pre-order walk).
SmallVector<OpOperand *>
initUses(Value v, const llvm::DenseMap<Operation *, unsigned> &position) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : v.getUses())
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
      if (dps.isDpsInit(&use))
        uses.push_back(&use);
  llvm::sort(uses, [&](OpOperand *a, OpOperand *b) {
    return position.lookup(a->getOwner()) < position.lookup(b->getOwner());
  });
  return uses;
}

struct PrivatizeInitsPass
    : public mlir::gacc::impl::GAccPrivatizeInitsPassBase<PrivatizeInitsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> shareable;
    llvm::DenseMap<Operation *, unsigned> position;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      position[op] = position.size();
      if (isa<tensor::EmptyOp, linalg::FillOp>(op) && op->getNumResults() == 1)
        shareable.push_back(op);
    });
    // Users first: the clones of a fill share its empty tensor, which is
    // privatized after them.
    for (Operation *op : llvm::reverse(shareable)) {
      SmallVector<OpOperand *> uses = initUses(op->getResult(0), position);
      if (uses.size() < 2)
        continue;
      // Every use but the first gets a clone placed right before it.
      for (OpOperand *use : llvm::drop_begin(uses)) {
        OpBuilder b(use->getOwner());
        Operation *clone = b.clone(*op);
        position[clone] = position.lookup(use->getOwner());
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
