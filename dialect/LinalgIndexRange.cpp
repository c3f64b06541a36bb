//===- LinalgIndexRange.cpp - linalg.index's integer range ----------------===//
//
// An external model of upstream's InferIntRangeInterface on linalg.index:
// the index of loop d of a structured op lies in [0, size - 1], where size
// is the loop's static range (a dynamic one gives [0, the largest index]).
// Integer range analysis (dataflow::IntegerRangeAnalysis) then knows the
// range of every index a payload computes from its loops, which is how the
// step signature proves a gather in a payload inside its table.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"

using namespace mlir;

namespace {
struct LinalgIndexRange
    : public InferIntRangeInterface::ExternalModel<LinalgIndexRange,
                                                   linalg::IndexOp> {
  void inferResultRanges(Operation *op, ArrayRef<ConstantIntRanges>,
                         SetIntRangeFn setResultRange) const {
    auto index = cast<linalg::IndexOp>(op);
    unsigned width = IndexType::kInternalStorageBitWidth;
    APInt largest = APInt::getSignedMaxValue(width);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op->getParentOp())) {
      SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
      if (index.getDim() < ranges.size() &&
          ShapedType::isStatic(ranges[index.getDim()]))
        largest =
            APInt(width, std::max<int64_t>(ranges[index.getDim()], 1) - 1);
    }
    setResultRange(index.getResult(), ConstantIntRanges::fromSigned(
                                          APInt::getZero(width), largest));
  }

  // Overridden so that the default (which casts to the interface) is not
  // instantiated: the same range, as a lattice value.
  void inferResultRangesFromOptional(Operation *op, ArrayRef<IntegerValueRange>,
                                     SetIntLatticeFn setResultRange) const {
    inferResultRanges(op, {}, [&](Value v, const ConstantIntRanges &range) {
      setResultRange(v, IntegerValueRange(range));
    });
  }
};
} // namespace

void mlir::gacc::registerLinalgIndexRangeModel(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::IndexOp::attachInterface<LinalgIndexRange>(*ctx);
  });
}
