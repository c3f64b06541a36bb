//===- HoistDeallocations.cpp - gacc-hoist-deallocations ------------------===//
//
// Moves each memref.dealloc up to just after the last use of its buffer
// (or of any view of it), so that a buffer's memory is free for the next
// allocation as soon as it is dead, not at the end of its block.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"

#define DEBUG_TYPE "gacc-hoist-deallocations"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCHOISTDEALLOCATIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The op of `block` after which nothing uses `aliases` but `dealloc`, or
/// null when a use lies outside `block` (the buffer escapes it).
Operation *lastUseInBlock(Block *block, Operation *start,
                          const BufferViewFlowAnalysis::ValueSetT &aliases,
                          Operation *dealloc) {
  Operation *last = start;
  for (Value alias : aliases)
    for (Operation *user : alias.getUsers()) {
      if (user == dealloc)
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  return last;
}

struct HoistDeallocationsPass
    : public mlir::gacc::impl::GAccHoistDeallocationsPassBase<
          HoistDeallocationsPass> {
  void runOnOperation() override {
    BufferViewFlowAnalysis aliasing(getOperation());
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      Operation *alloc = buffer.getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      Operation *last =
          lastUseInBlock(block, alloc, aliasing.resolve(buffer), dealloc);
      if (last && last->isBeforeInBlock(dealloc))
        dealloc->moveAfter(last);
    }
  }
};

} // namespace
