//===- LinalgAdjoints.cpp - adjoints of the linalg ops ---------------------===//
//
// DifferentiableOpInterface external models on upstream linalg: every
// structured op (linalg.generic, the named elementwise ops, transpose,
// broadcast, reduce, map, fill, copy, contractions, ...) through the general
// structured rule of StructuredAdjoints.h; linalg.matmul and
// linalg.batch_matmul keep matrix products in their adjoints (so BLAS and
// the accumulate fusion see GEMMs); linalg.softmax has the closed form.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"
#include "dialect/StructuredAdjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// C = op(A)·op(B) (+ init), per batch index for linalg.batch_matmul:
/// dop(A) = dC·op(B)ᵀ, dop(B) = op(A)ᵀ·dC, each a product of the same kind
/// whose transposes are indexing maps; the init's adjoint is dC. Fails
/// (the general rule then applies) for other maps or mixed element types.
LogicalResult buildMatmulAdjoints(OpBuilder &b, linalg::LinalgOp mm,
                                  Value dC, ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  FailureOr<std::pair<bool, bool>> transposes = getMatmulTransposes(mm);
  Value a = mm.getDpsInputs()[0], bMat = mm.getDpsInputs()[1];
  Type elem = getElementTypeOrSelf(mm->getResult(0).getType());
  if (failed(transposes) || getElementTypeOrSelf(a.getType()) != elem ||
      getElementTypeOrSelf(bMat.getType()) != elem)
    return failure();
  auto [ta, tb] = *transposes;
  Location loc = mm.getLoc();
  bool batched = isa<linalg::BatchMatmulOp>(mm);
  auto product = [&](Value x, Value y, bool tx, bool ty) {
    return batched ? buildBatchMatmul(b, loc, x, y, tx, ty)
                   : buildMatmul(b, loc, x, y, tx, ty);
  };
  out.assign(3, Value());
  if (!dC)
    return success();
  // A stored transposed takes (dC·op(B)ᵀ)ᵀ = op(B)·dCᵀ; likewise for B.
  if (needed[0])
    out[0] = ta ? product(bMat, dC, tb, true) : product(dC, bMat, false, !tb);
  if (needed[1])
    out[1] = tb ? product(dC, a, true, ta) : product(a, dC, !ta, false);
  if (needed[2])
    out[2] = dC;
  return success();
}

/// Every structured linalg op.
template <typename OpTy>
struct StructuredAdjointModel
    : public DifferentiableOpInterface::ExternalModel<
          StructuredAdjointModel<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *op, OpBuilder &b,
                             ValueRange resultAdjoints, ArrayRef<bool> needed,
                             SmallVectorImpl<Value> &operandAdjoints) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    if (!linalgOp.hasPureTensorSemantics())
      return op->emitOpError("is differentiated on tensors only");
    if constexpr (std::is_same_v<OpTy, linalg::MatmulOp> ||
                  std::is_same_v<OpTy, linalg::BatchMatmulOp>) {
      if (succeeded(buildMatmulAdjoints(b, linalgOp, resultAdjoints[0],
                                        needed, operandAdjoints)))
        return success();
    }
    return buildStructuredAdjoints(b, linalgOp, resultAdjoints, needed,
                                   operandAdjoints);
  }
};

/// linalg.softmax over dimension d, y = softmax(x): torch's
/// _softmax_backward_data, dx = y ⊙ (dy − Σ_d dy ⊙ y).
struct SoftmaxAdjointModel
    : public DifferentiableOpInterface::ExternalModel<SoftmaxAdjointModel,
                                                      linalg::SoftmaxOp> {
  LogicalResult buildAdjoint(Operation *op, OpBuilder &b,
                             ValueRange resultAdjoints, ArrayRef<bool> needed,
                             SmallVectorImpl<Value> &operandAdjoints) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!needed[0] || !dy)
      return success();
    Value y = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(y.getType());
    if (!type)
      return op->emitOpError("is differentiated on tensors only");
    operandAdjoints[0] = buildSoftmaxGrad(b, op->getLoc(), y, dy,
                                          softmax.getDimension());
    return success();
  }
};

template <typename... OpTys>
void attachStructured(MLIRContext *ctx) {
  (OpTys::template attachInterface<StructuredAdjointModel<OpTys>>(*ctx), ...);
}

} // namespace

void mlir::gacc::registerLinalgAdjointModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachStructured<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxAdjointModel>(*ctx);
  });
}
