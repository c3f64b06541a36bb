//===- FusedAttention.cpp - gacc.fused_attention and its backward ---------===//
//
// Verifiers and memory effects of the fused attention kernels that
// gacc-fuse-attention builds on the cuda target (their lowering to cuDNN
// is convert-gacc-to-cudnn's, their bufferization GAccBufferization.cpp's).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include <limits>

using namespace mlir;
using namespace mlir::gacc;

/// The checks both fused ops share: q rank 4 [m, H, T, d] with no empty
/// dimension; every other bf16/fp16 operand (`others`, named by `names`)
/// of q's shape, element type and kind (a memref's layout may differ);
/// `stats` [m, H, T, 1] f32 of q's kind (tensor or memref); on tensors one
/// result per init of its type, on memrefs none; a scale positive, finite
/// and normal in f32.
static LogicalResult verifyFusedAttention(DestinationStyleOpInterface op,
                                          ShapedType q, ValueRange others,
                                          ArrayRef<StringRef> names,
                                          ShapedType stats, double scale) {
  if (q.getRank() != 4)
    return op->emitOpError("query must be rank 4 [m, heads, positions, "
                           "head size], got ")
           << q;
  if (llvm::is_contained(q.getShape(), 0))
    return op->emitOpError("query must not have an empty dimension, got ") << q;
  for (auto [other, name] : llvm::zip(others, names)) {
    auto type = cast<ShapedType>(other.getType());
    if (type.getShape() != q.getShape() ||
        type.getElementType() != q.getElementType() ||
        isa<TensorType>(type) != isa<TensorType>(q))
      return op->emitOpError()
             << name << " must have the query's shape and element type " << q
             << ", got " << type;
  }
  if (isa<TensorType>(q) != isa<TensorType>(stats))
    return op->emitOpError("operands must be all tensors or all memrefs");
  SmallVector<int64_t> rows(q.getShape());
  rows.back() = 1;
  if (stats.getShape() != ArrayRef<int64_t>(rows))
    return op->emitOpError("stats must be [m, heads, positions, 1] for a ")
           << q << " query, got " << stats;
  if (op.hasPureBufferSemantics() && op->getNumResults() != 0)
    return op->emitOpError("has results on memrefs");
  if (op.hasPureTensorSemantics() &&
      op->getResultTypes() != op.getDpsInits().getTypes())
    return op->emitOpError("results must be of the inits' types");
  if (!(scale >= double(std::numeric_limits<float>::min()) &&
        scale <= double(std::numeric_limits<float>::max())))
    return op->emitOpError("scale must be positive and finite in f32, got ")
           << scale;
  return success();
}

/// On memrefs the inputs are read and the inits written (never read); the
/// tensor form is pure.
static void getFusedAttentionEffects(
    DestinationStyleOpInterface op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (!op.hasPureBufferSemantics())
    return;
  for (OpOperand *input : op.getDpsInputOperands())
    effects.emplace_back(MemoryEffects::Read::get(), input,
                         SideEffects::DefaultResource::get());
  for (OpOperand &init : op.getDpsInitsMutable())
    effects.emplace_back(MemoryEffects::Write::get(), &init,
                         SideEffects::DefaultResource::get());
}

LogicalResult FusedAttentionOp::verify() {
  return verifyFusedAttention(
      *this, cast<ShapedType>(getQuery().getType()),
      {getKey(), getValue(), getOutput()}, {"key", "value", "output"},
      cast<ShapedType>(getStats().getType()), getScale().convertToDouble());
}

void FusedAttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getFusedAttentionEffects(*this, effects);
}

LogicalResult FusedAttentionBackwardOp::verify() {
  return verifyFusedAttention(
      *this, cast<ShapedType>(getQuery().getType()),
      {getKey(), getValue(), getOutput(), getOutputGrad(), getQueryGrad(),
       getKeyGrad(), getValueGrad()},
      {"key", "value", "output", "output_grad", "query_grad", "key_grad",
       "value_grad"},
      cast<ShapedType>(getStats().getType()), getScale().convertToDouble());
}

void FusedAttentionBackwardOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getFusedAttentionEffects(*this, effects);
}
