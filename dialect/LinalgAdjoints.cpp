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

/// C = op(A)·op(B) (+ init): dop(A) = dC·op(B)ᵀ, dop(B) = op(A)ᵀ·dC, each
/// a linalg.matmul whose transposes are indexing maps; the init's adjoint
/// is dC. Fails (the general rule then applies) for other maps or mixed
/// element types.
LogicalResult buildMatmulAdjoints(OpBuilder &b, linalg::MatmulOp mm,
                                  Value dC, ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  FailureOr<std::pair<bool, bool>> transposes = getMatmulTransposes(mm);
  Value a = mm.getInputs()[0], bMat = mm.getInputs()[1];
  Type elem = getElementTypeOrSelf(mm->getResult(0).getType());
  if (failed(transposes) || getElementTypeOrSelf(a.getType()) != elem ||
      getElementTypeOrSelf(bMat.getType()) != elem)
    return failure();
  auto [ta, tb] = *transposes;
  Location loc = mm.getLoc();
  out.assign(3, Value());
  if (!dC)
    return success();
  // A stored transposed takes (dC·op(B)ᵀ)ᵀ = op(B)·dCᵀ; likewise for B.
  if (needed[0])
    out[0] = ta ? buildMatmul(b, loc, bMat, dC, tb, true)
                : buildMatmul(b, loc, dC, bMat, false, !tb);
  if (needed[1])
    out[1] = tb ? buildMatmul(b, loc, dC, a, true, ta)
                : buildMatmul(b, loc, a, dC, !ta, false);
  if (needed[2])
    out[2] = dC;
  return success();
}

/// A zero-initialized linalg.batch_matmul C[b, i, j] = Σ_k A·B with the
/// operands indexed by `mapA`, `mapB` over (b, i, j, k).
Value buildBatchMatmul(OpBuilder &b, Location loc, Value a, Value bMat,
                       AffineMap mapA, AffineMap mapB, RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2;
  bindDims(ctx, d0, d1, d2);
  AffineMap mapC = AffineMap::get(4, 0, {d0, d1, d2}, ctx);
  Value init = buildFilled(b, loc, type, 0.0);
  SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
      "indexing_maps", b.getAffineMapArrayAttr({mapA, mapB, mapC}))};
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{type},
                                       ValueRange{a, bMat}, ValueRange{init},
                                       attrs)
      .getResult(0);
}

/// C[b, i, j] = Σ_k A[b, i, k]·B[b, k, j] with the default maps:
/// dA[b, i, k] = Σ_j dC[b, i, j]·B[b, k, j] and dB[b, k, j] =
/// Σ_i A[b, i, k]·dC[b, i, j], batch matmuls with transposed operands.
LogicalResult buildBatchMatmulAdjoints(OpBuilder &b, linalg::BatchMatmulOp bmm,
                                       Value dC, ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &out) {
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  auto map = [&](ArrayRef<AffineExpr> e) {
    return AffineMap::get(4, 0, e, ctx);
  };
  SmallVector<AffineMap> defaults = {map({d0, d1, d3}), map({d0, d3, d2}),
                                     map({d0, d1, d2})};
  Value a = bmm.getInputs()[0], bMat = bmm.getInputs()[1];
  Type elem = getElementTypeOrSelf(bmm->getResult(0).getType());
  if (bmm.getIndexingMapsArray() != defaults ||
      getElementTypeOrSelf(a.getType()) != elem ||
      getElementTypeOrSelf(bMat.getType()) != elem)
    return failure();
  Location loc = bmm.getLoc();
  out.assign(3, Value());
  if (!dC)
    return success();
  // Over (b, m, n, k) of each new product: dA has m = i, n = k, k = j;
  // dB has m = k, n = j, k = i.
  if (needed[0])
    out[0] = buildBatchMatmul(b, loc, dC, bMat, map({d0, d1, d3}),
                              map({d0, d2, d3}),
                              cast<RankedTensorType>(a.getType()));
  if (needed[1])
    out[1] = buildBatchMatmul(b, loc, a, dC, map({d0, d3, d1}),
                              map({d0, d3, d2}),
                              cast<RankedTensorType>(bMat.getType()));
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
    if constexpr (std::is_same_v<OpTy, linalg::MatmulOp>) {
      if (succeeded(buildMatmulAdjoints(b, cast<OpTy>(op), resultAdjoints[0],
                                        needed, operandAdjoints)))
        return success();
    }
    if constexpr (std::is_same_v<OpTy, linalg::BatchMatmulOp>) {
      if (succeeded(buildBatchMatmulAdjoints(b, cast<OpTy>(op),
                                             resultAdjoints[0], needed,
                                             operandAdjoints)))
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
    Location loc = op->getLoc();
    int64_t dim = softmax.getDimension();
    unsigned rank = type.getRank();
    AffineMap full = b.getMultiDimIdentityMap(rank);
    AffineMap reduced = full.dropResult(dim);
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + dim);
    auto rowType = RankedTensorType::get(shape, type.getElementType());
    SmallVector<utils::IteratorType> its(rank, utils::IteratorType::parallel);
    its[dim] = utils::IteratorType::reduction;
    Value dot =
        linalg::GenericOp::create(
            b, loc, TypeRange{rowType}, ValueRange{dy, y},
            ValueRange{buildFilled(b, loc, rowType, 0.0)},
            SmallVector<AffineMap>{full, full, reduced}, its,
            [](OpBuilder &nb, Location nl, ValueRange a) {
              Value p = arith::MulFOp::create(nb, nl, a[0], a[1]);
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, a[2], p)));
            })
            .getResult(0);
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    operandAdjoints[0] =
        linalg::GenericOp::create(
            b, loc, TypeRange{type}, ValueRange{dy, y, dot}, ValueRange{init},
            SmallVector<AffineMap>{full, full, reduced, full},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [](OpBuilder &nb, Location nl, ValueRange a) {
              Value d = arith::SubFOp::create(nb, nl, a[0], a[2]);
              linalg::YieldOp::create(
                  nb, nl, Value(arith::MulFOp::create(nb, nl, a[1], d)));
            })
            .getResult(0);
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
