//===- CollapseDimensions.cpp - gacc-collapse-dimensions ------------------===//
//
// Runs consecutive iteration dimensions of a linalg.generic on buffers as
// one loop where every operand lays them out contiguously (upstream
// linalg::collapseOpIterationDims), so that the CPU's loops are few and
// long: an elementwise op over [32, 32, 28, 28] becomes one loop of 802816
// elements, a per-channel op over it a loop of 784 per channel.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

#define DEBUG_TYPE "gacc-collapse-dimensions"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCCOLLAPSEDIMENSIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Whether iteration dimension `d` can join `d - 1` in memory: in every
/// operand that indexes both, dimension d − 1 of the operand strides over
/// exactly the elements of dimension d (static strides and sizes).
bool contiguousWithPrevious(linalg::GenericOp op, unsigned d) {
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> outer =
        map.getResultPosition(getAffineDimExpr(d - 1, op.getContext()));
    if (!outer)
      continue;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return false;
    unsigned inner = *outer + 1;
    if (ShapedType::isDynamic(strides[*outer]) ||
        ShapedType::isDynamic(strides[inner]) ||
        type.isDynamicDim(inner) ||
        strides[*outer] != strides[inner] * type.getDimSize(inner))
      return false;
  }
  return true;
}

} // namespace

bool mlir::gacc::hasUnitInnerStrides(Operation *op) {
  return llvm::all_of(op->getOperands(), [](Value v) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getRank() == 0)
      return true;
    SmallVector<int64_t> strides;
    int64_t offset;
    return succeeded(type.getStridesAndOffset(strides, offset)) &&
           strides.back() == 1;
  });
}

namespace {

/// The groups of consecutive iteration dimensions one loop can run: of
/// one iterator type, in the same order in every indexing map
/// (linalg::areDimSequencesPreserved) and contiguous in memory.
SmallVector<ReassociationIndices> collapsibleGroups(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups = {{0}};
  for (unsigned d = 1, e = op.getNumLoops(); d < e; ++d) {
    ReassociationIndices joined = groups.back();
    joined.push_back(d);
    if (iterators[d] == iterators[d - 1] &&
        linalg::areDimSequencesPreserved(maps, {joined}) &&
        contiguousWithPrevious(op, d))
      groups.back() = joined;
    else
      groups.push_back({int64_t(d)});
  }
  return groups;
}

struct CollapseDimensionsPass
    : public mlir::gacc::impl::GAccCollapseDimensionsPassBase<
          CollapseDimensionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      // linalg.index would have to be rebuilt from the collapsed index; a
      // strided innermost access (a pooling window's tap) vectorizes as
      // gathers once its outer loops are one long loop, which measured 3
      // times slower than the scalar loops on the machines of
      // docs/benchmarks.md.
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 1 &&
          !op.hasIndexSemantics() && hasUnitInnerStrides(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<ReassociationIndices> groups = collapsibleGroups(op);
      if (groups.size() == op.getNumLoops())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, groups, rewriter);
      if (failed(collapsed))
        continue;
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
