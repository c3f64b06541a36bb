//===- InitializingFill.cpp - the fill an op's output starts from ---------===//
//
// getInitializingFill and writesEveryElement (InitializingFill.h).
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/InitializingFill.h"
#include "passes/analysis/KernelOrder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using mlir::gacc::bufferOf;
using mlir::gacc::mayAlias;
using mlir::gacc::touchesMemoryOf;

linalg::FillOp mlir::gacc::getInitializingFill(Operation *op, Value init,
                                               bool writesAll) {
  Value buffer = bufferOf(init);
  if (!writesAll || !buffer ||
      !isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
          buffer.getDefiningOp()))
    return nullptr;
  unsigned views = 0;
  for (Value v : op->getOperands())
    views += mayAlias(v, buffer);
  if (views != 1)
    return nullptr;
  Type element = cast<MemRefType>(init.getType()).getElementType();
  for (Operation *p = op->getPrevNode(); p; p = p->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(p))
      if (fill.hasPureBufferSemantics() && fill.getOutputs()[0] == init)
        return fill.getInputs()[0].getType() == element ? fill : nullptr;
    // A view made between them, or a constant, touches no memory.
    if (isMemoryEffectFree(p) && p->getNumRegions() == 0)
      continue;
    if (touchesMemoryOf(p, buffer))
      return nullptr;
  }
  return nullptr;
}

bool mlir::gacc::writesEveryElement(linalg::LinalgOp op, OpOperand &init) {
  auto type = dyn_cast<MemRefType>(init.get().getType());
  if (!type || !type.hasStaticShape())
    return false;
  AffineMap map = op.getMatchingIndexingMap(&init);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned parallel = llvm::count(iterators, utils::IteratorType::parallel);
  if (map.getNumResults() != parallel || !map.isProjectedPermutation())
    return false;
  for (auto [r, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || iterators[dim.getPosition()] != utils::IteratorType::parallel ||
        ranges[dim.getPosition()] != type.getDimSize(r))
      return false;
  }
  return true;
}
