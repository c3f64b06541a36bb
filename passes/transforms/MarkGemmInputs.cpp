//===- MarkGemmInputs.cpp - gacc-mark-gemm-inputs -------------------------===//
//
// Marks the matrix products of a low-precision step whose operands provably
// hold values of the step's compute precision (bf16 or fp16) in their fp32
// tensors, so that convert-gacc-to-blas lets cuBLASLt multiply them on
// tensor cores without changing a single product (rounding a value that is
// already a bf16 value to bf16 is exact; the sums are the tensor cores'
// fp32 accumulation). The proof follows each operand to the rounding that
// made it (an extf from the compute type) through ops that only move
// values: reshapes, slices, concatenation, padding and
// linalg ops whose result yields one of their inputs (copies, transposes,
// broadcasts, fills) and writes all of it, and constants exact in the
// compute type. A product with an operand the proof does not reach stays
// fp32, and so does one the input marked (only proved marks stay). The
// functions' mark (gacc.compute_precision) is consumed.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "gacc-mark-gemm-inputs"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMARKGEMMINPUTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Proves that every element of a value (an f32 tensor or scalar) is a
/// value of one low-precision float type, remembering what it proved.
class LowPrecisionValues {
public:
  explicit LowPrecisionValues(FloatType type) : type(type) {}

  bool holds(Value v) {
    auto [it, inserted] = known.try_emplace(v, false);
    if (!inserted)
      return it->second; // proved, refuted, or on the path (a cycle: no)
    bool result = prove(v);
    known[v] = result;
    return result;
  }

private:
  bool prove(Value v) {
    // A value stored in the type itself (gacc-narrow-stored-values).
    if (getElementTypeOrSelf(v.getType()) == type)
      return true;
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      return false; // block arguments: loop-carried or unknown values
    Operation *def = result.getOwner();
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def))
      return proveLinalgResult(linalgOp, result.getResultNumber());
    return TypeSwitch<Operation *, bool>(def)
        .Case([&](arith::ExtFOp op) { return op.getIn().getType() == type; })
        .Case([&](arith::ConstantOp op) { return isExact(op.getValue()); })
        // Their source is operand 0.
        .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
              tensor::ExtractSliceOp, tensor::CastOp>(
            [&](Operation *op) { return holds(op->getOperand(0)); })
        .Case([&](tensor::InsertSliceOp op) {
          return holds(op.getSource()) && holds(op.getDest());
        })
        .Case([&](tensor::PadOp op) {
          Value pad = op.getConstantPaddingValue();
          return pad && holds(pad) && holds(op.getSource());
        })
        // The kept inputs of a recomputed block pass through unchanged.
        .Case([&](RecomputeInputsOp op) {
          return holds(op->getOperand(result.getResultNumber()));
        })
        .Case([&](tensor::ConcatOp op) {
          return llvm::all_of(op.getInputs(),
                              [&](Value in) { return holds(in); });
        })
        .Default([](Operation *) { return false; });
  }

  /// A linalg op's result holds such values where the body yields one (an
  /// extf from the type) or yields an input unchanged (a copy, transpose,
  /// broadcast or fill) that holds them, and every element of the result is
  /// so written: its init's map is a permutation of all-parallel loops.
  /// Otherwise (a map that skips elements, a reduction that may run zero
  /// times) elements of the init may remain, which must hold them too.
  bool proveLinalgResult(linalg::LinalgOp op, unsigned index) {
    if (op.hasPureBufferSemantics() || !op.getBlock())
      return false;
    OpOperand *init = op.getDpsInitOperand(index);
    bool writesAll = op.getNumReductionLoops() == 0 &&
                     op.getMatchingIndexingMap(init).isPermutation();
    if (!writesAll && !holds(init->get()))
      return false;
    Value yielded = op.getBlock()->getTerminator()->getOperand(index);
    if (auto ext = yielded.getDefiningOp<arith::ExtFOp>())
      return ext.getIn().getType() == type;
    auto arg = dyn_cast<BlockArgument>(yielded);
    if (!arg || arg.getOwner() != op.getBlock())
      return false;
    OpOperand *operand = op.getMatchingOpOperand(arg);
    return op.isDpsInput(operand) && holds(operand->get());
  }

  bool isExact(Attribute attr) {
    if (auto f = dyn_cast<FloatAttr>(attr))
      return isExactIn(f.getValue(), type);
    auto dense = dyn_cast<DenseFPElementsAttr>(attr);
    if (!dense)
      return false;
    if (dense.isSplat())
      return isExactIn(dense.getSplatValue<APFloat>(), type);
    return llvm::all_of(dense.getValues<APFloat>(), [&](const APFloat &x) {
      return isExactIn(x, type);
    });
  }

  FloatType type;
  llvm::DenseMap<Value, bool> known;
};

/// The A and B operands of a matrix product.
std::optional<std::pair<Value, Value>> productOperands(Operation *op) {
  if (auto mm = dyn_cast<MatmulAccumulateOp>(op))
    return std::pair{mm.getA(), mm.getB()};
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op)) {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    return std::pair{linalgOp.getDpsInputs()[0], linalgOp.getDpsInputs()[1]};
  }
  return std::nullopt;
}

struct MarkGemmInputsPass
    : public mlir::gacc::impl::GAccMarkGemmInputsPassBase<MarkGemmInputsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](FunctionOpInterface func) {
      // The function's mark is consumed: nothing else reads it, and the
      // LLVM IR the function becomes has no use for it.
      auto precision =
          func->getAttrOfType<PrecisionAttr>(kComputePrecisionAttrName);
      func->removeAttr(kComputePrecisionAttrName);
      FloatType type =
          precision ? getLowPrecisionType(&getContext(), precision.getValue())
                    : FloatType();
      LowPrecisionValues values(type);
      func.walk([&](Operation *op) {
        std::optional<std::pair<Value, Value>> ab = productOperands(op);
        if (!ab)
          return;
        // Only what this pass proves is marked: a mark the input carries
        // (or a clone of a marked op) is dropped.
        op->removeAttr(kGemmInputsAttrName);
        if (type && values.holds(ab->first) && values.holds(ab->second))
          op->setAttr(kGemmInputsAttrName, precision);
      });
    });
  }
};

} // namespace
