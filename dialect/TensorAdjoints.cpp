//===- TensorAdjoints.cpp - adjoints of the tensor reshapes and slices ----===//
//
// DifferentiableOpInterface external models on upstream tensor ops that
// move data: a reshape's adjoint is the inverse reshape; a slice's adjoint is
// the slice's adjoint written into zeros at the slice's place (and the
// destination's adjoint is the result's with that place zeroed);
// concatenation and constant padding take the slices back.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"
#include "dialect/StructuredAdjoints.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Shared shape of the models: one adjoint per operand, from one result.
template <typename Concrete, typename OpTy>
struct TensorAdjointModel
    : public DifferentiableOpInterface::ExternalModel<Concrete, OpTy> {
  LogicalResult buildAdjoint(Operation *op, OpBuilder &b,
                             ValueRange resultAdjoints, ArrayRef<bool> needed,
                             SmallVectorImpl<Value> &operandAdjoints) const {
    operandAdjoints.assign(op->getNumOperands(), Value());
    Value dy = resultAdjoints[0];
    if (!dy)
      return success();
    if (!isa<RankedTensorType>(dy.getType()))
      return op->emitOpError("is differentiated on ranked tensors only");
    return Concrete::adjoint(cast<OpTy>(op), b, dy, needed, operandAdjoints);
  }
};

struct CollapseShapeAdjoint
    : TensorAdjointModel<CollapseShapeAdjoint, tensor::CollapseShapeOp> {
  static LogicalResult adjoint(tensor::CollapseShapeOp op, OpBuilder &b,
                               Value dy, ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    if (needed[0])
      out[0] = tensor::ExpandShapeOp::create(b, op.getLoc(), op.getSrcType(),
                                             dy, op.getReassociationIndices());
    return success();
  }
};

struct ExpandShapeAdjoint
    : TensorAdjointModel<ExpandShapeAdjoint, tensor::ExpandShapeOp> {
  static LogicalResult adjoint(tensor::ExpandShapeOp op, OpBuilder &b,
                               Value dy, ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    if (needed[0])
      out[0] = tensor::CollapseShapeOp::create(b, op.getLoc(), op.getSrcType(),
                                               dy,
                                               op.getReassociationIndices());
    return success();
  }
};

struct CastAdjoint : TensorAdjointModel<CastAdjoint, tensor::CastOp> {
  static LogicalResult adjoint(tensor::CastOp op, OpBuilder &b, Value dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    if (needed[0])
      out[0] = tensor::CastOp::create(b, op.getLoc(), op.getSource().getType(),
                                      dy);
    return success();
  }
};

/// Zeros shaped like `like` (a ranked tensor value).
Value zerosLike(OpBuilder &b, Location loc, Value like) {
  return buildFilled(b, loc, cast<RankedTensorType>(like.getType()), 0.0);
}

/// d source = dy written into zeros at the slice (strides included).
struct ExtractSliceAdjoint
    : TensorAdjointModel<ExtractSliceAdjoint, tensor::ExtractSliceOp> {
  static LogicalResult adjoint(tensor::ExtractSliceOp op, OpBuilder &b,
                               Value dy, ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    if (!needed[0])
      return success();
    Location loc = op.getLoc();
    out[0] = tensor::InsertSliceOp::create(
        b, loc, dy, zerosLike(b, loc, op.getSource()), op.getMixedOffsets(),
        op.getMixedSizes(), op.getMixedStrides());
    return success();
  }
};

/// d source = the slice of dy; d dest = dy with the slice zeroed.
struct InsertSliceAdjoint
    : TensorAdjointModel<InsertSliceAdjoint, tensor::InsertSliceOp> {
  static LogicalResult adjoint(tensor::InsertSliceOp op, OpBuilder &b,
                               Value dy, ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    Location loc = op.getLoc();
    if (needed[0])
      out[0] = tensor::ExtractSliceOp::create(
          b, loc, op.getSourceType(), dy, op.getMixedOffsets(),
          op.getMixedSizes(), op.getMixedStrides());
    if (needed[1])
      out[1] = tensor::InsertSliceOp::create(
          b, loc, zerosLike(b, loc, op.getSource()), dy, op.getMixedOffsets(),
          op.getMixedSizes(), op.getMixedStrides());
    return success();
  }
};

/// Each operand takes its slice of dy along the concatenated dimension.
struct ConcatAdjoint : TensorAdjointModel<ConcatAdjoint, tensor::ConcatOp> {
  static LogicalResult adjoint(tensor::ConcatOp op, OpBuilder &b, Value dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    Location loc = op.getLoc();
    int64_t dim = op.getDim(), offset = 0;
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      auto type = cast<RankedTensorType>(input.getType());
      if (!type.hasStaticShape())
        return op.emitOpError("is differentiated with static shapes only");
      if (needed[i]) {
        SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
            sizes, strides(type.getRank(), b.getIndexAttr(1));
        for (int64_t d : type.getShape())
          sizes.push_back(b.getIndexAttr(d));
        offsets[dim] = b.getIndexAttr(offset);
        out[i] = tensor::ExtractSliceOp::create(b, loc, type, dy, offsets,
                                                sizes, strides);
      }
      offset += type.getDimSize(dim);
    }
    return success();
  }
};

/// A constant pad: the source takes the slice of dy at the low padding.
struct PadAdjoint : TensorAdjointModel<PadAdjoint, tensor::PadOp> {
  static LogicalResult adjoint(tensor::PadOp op, OpBuilder &b, Value dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
    if (!needed[0])
      return success();
    if (!op.getConstantPaddingValue())
      return op.emitOpError("is differentiated only with a constant padding "
                            "value");
    Location loc = op.getLoc();
    RankedTensorType type = op.getSourceType();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(b, loc, op.getSource());
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    out[0] = tensor::ExtractSliceOp::create(b, loc, type, dy,
                                            op.getMixedLowPad(), sizes,
                                            strides);
    return success();
  }
};

} // namespace

void mlir::gacc::registerTensorAdjointModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::CollapseShapeOp::attachInterface<CollapseShapeAdjoint>(*ctx);
    tensor::ExpandShapeOp::attachInterface<ExpandShapeAdjoint>(*ctx);
    tensor::CastOp::attachInterface<CastAdjoint>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceAdjoint>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceAdjoint>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatAdjoint>(*ctx);
    tensor::PadOp::attachInterface<PadAdjoint>(*ctx);
  });
}
