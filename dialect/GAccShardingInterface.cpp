//===- GAccShardingInterface.cpp - the layer ops' iteration spaces -------===//
//
// Each layer op's loops and indexing maps, as upstream's
// shard::ShardingInterface states them for a structured op: the iterator
// type of every loop (parallel, or reduction where the op combines values
// along it), then one affine map per operand and per result from the loops
// to its indices, in operand-then-result order (a scalar operand's map has
// no results; a data-dependent index, such as the row an embedding reads,
// is a symbol). A normalization's result is indexed by the loops it reduces
// over as well: they are reductions, since each result element depends on
// all of them. The maps follow the decompositions and torch's formulas the
// ops' descriptions cite (GAccOps.td); where the samples of a micro-batch
// go is what the training step's verifier reads (SampleIndependence.cpp).
//
// Also the same interface as an external model of linalg.softmax (its
// normalized dimension a reduction), so the verifier reads it like the
// rest.
//
// Only the loops and maps are stated; the reduction kinds are left to the
// interface's default (none). Upstream's sharding propagation takes an
// operand index of sums of c·d only, so it would refuse to shard along a
// convolution's or pool's padded windows or the embedding's rows (linalg's
// convolutions, on pre-padded inputs, have no such terms).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

using namespace mlir;
using namespace mlir::gacc;
using utils::IteratorType;

/// The loop indices d0 … d(n − 1) of an n-deep loop nest.
static SmallVector<AffineExpr> loopIndices(unsigned n, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < n; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return exprs;
}

/// `parallel` parallel loops followed by `reduction` reduction loops.
static SmallVector<IteratorType> iteratorTypes(unsigned parallel,
                                               unsigned reduction = 0) {
  SmallVector<IteratorType> types(parallel, IteratorType::parallel);
  types.append(reduction, IteratorType::reduction);
  return types;
}

/// The map from `numLoops` loops to `indices`.
static AffineMap indexMap(unsigned numLoops, ArrayRef<AffineExpr> indices,
                          MLIRContext *ctx) {
  return AffineMap::get(numLoops, 0, indices, ctx);
}

/// The rank of a tensor value.
static unsigned rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

namespace {

/// An op that maps its input to a result of the same shape element by
/// element, reducing over its trailing `reduced` dimensions (softmax and
/// layer_norm: 1; relu: 0), with `perFeature` operands indexed by the last
/// dimension (layer_norm's weight and bias) and `scalars` scalar operands
/// (dropout's key).
struct PerElement {
  unsigned rank, reduced = 0, perFeature = 0, scalars = 0;

  SmallVector<IteratorType> iterators() const {
    return iteratorTypes(rank - reduced, reduced);
  }
  SmallVector<AffineMap> maps(MLIRContext *ctx) const {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<AffineMap> maps{identity};
    maps.append(perFeature,
                indexMap(rank, getAffineDimExpr(rank - 1, ctx), ctx));
    maps.append(scalars, indexMap(rank, {}, ctx));
    maps.push_back(identity);
    return maps;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Element-wise and row-wise ops
//===----------------------------------------------------------------------===//

SmallVector<IteratorType> ReluOp::getLoopIteratorTypes() {
  return PerElement{rankOf(getInput())}.iterators();
}
SmallVector<AffineMap> ReluOp::getIndexingMaps() {
  return PerElement{rankOf(getInput())}.maps(getContext());
}

SmallVector<IteratorType> GeluOp::getLoopIteratorTypes() {
  return PerElement{rankOf(getInput())}.iterators();
}
SmallVector<AffineMap> GeluOp::getIndexingMaps() {
  return PerElement{rankOf(getInput())}.maps(getContext());
}

/// The mask is a function of each element's position and its sample's
/// index in the epoch (the key), not of other elements.
SmallVector<IteratorType> DropoutOp::getLoopIteratorTypes() {
  return PerElement{rankOf(getInput())}.iterators();
}
SmallVector<AffineMap> DropoutOp::getIndexingMaps() {
  PerElement shape{rankOf(getInput())};
  shape.scalars = getKey().size();
  return shape.maps(getContext());
}

SmallVector<IteratorType> SoftmaxOp::getLoopIteratorTypes() {
  return PerElement{rankOf(getInput()), 1}.iterators();
}
SmallVector<AffineMap> SoftmaxOp::getIndexingMaps() {
  return PerElement{rankOf(getInput()), 1}.maps(getContext());
}

SmallVector<IteratorType> LayerNormOp::getLoopIteratorTypes() {
  return PerElement{rankOf(getInput()), 1}.iterators();
}
SmallVector<AffineMap> LayerNormOp::getIndexingMaps() {
  return PerElement{rankOf(getInput()), 1, 2}.maps(getContext());
}

//===----------------------------------------------------------------------===//
// Products, lookups and attention
//===----------------------------------------------------------------------===//

/// input [..., in] · weight [out, in]ᵀ + bias [out] → [..., out]: the
/// leading loops, then out, then in (a reduction).
SmallVector<IteratorType> LinearOp::getLoopIteratorTypes() {
  return iteratorTypes(rankOf(getInput()), 1);
}
SmallVector<AffineMap> LinearOp::getIndexingMaps() {
  unsigned rank = rankOf(getInput()), numLoops = rank + 1;
  SmallVector<AffineExpr> d = loopIndices(numLoops, getContext());
  AffineExpr out = d[rank - 1], in = d[rank];
  SmallVector<AffineExpr> input(d.begin(), d.begin() + rank - 1);
  SmallVector<AffineExpr> result = input;
  input.push_back(in);
  result.push_back(out);
  SmallVector<AffineMap> maps{indexMap(numLoops, input, getContext()),
                              indexMap(numLoops, {out, in}, getContext())};
  if (getBias())
    maps.push_back(indexMap(numLoops, out, getContext()));
  maps.push_back(indexMap(numLoops, result, getContext()));
  return maps;
}

/// indices [...] and weight [V, D] → [..., D]: the row read is the index's
/// value (a symbol), the feature loop the last.
SmallVector<IteratorType> EmbeddingOp::getLoopIteratorTypes() {
  return iteratorTypes(rankOf(getResult()));
}
SmallVector<AffineMap> EmbeddingOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  unsigned numLoops = rankOf(getResult());
  SmallVector<AffineExpr> d = loopIndices(numLoops, ctx);
  AffineExpr row = getAffineSymbolExpr(0, ctx);
  return {indexMap(numLoops, ArrayRef(d).drop_back(), ctx),
          AffineMap::get(numLoops, 1, {row, d.back()}, ctx),
          AffineMap::getMultiDimIdentityMap(numLoops, ctx)};
}

namespace {
/// Attention's tensors over its loops (b, h, t, e, s, c): sample, head,
/// query position, value feature, key position, score feature. q [b, h,
/// t, c], k [b, h, s, c], v [b, h, s, e], the output (and its adjoint)
/// [b, h, t, e].
struct AttentionMaps {
  AffineMap query, key, value, output;
  explicit AttentionMaps(MLIRContext *ctx) {
    SmallVector<AffineExpr> d = loopIndices(6, ctx);
    AffineExpr b = d[0], h = d[1], t = d[2], e = d[3], s = d[4], c = d[5];
    query = indexMap(6, {b, h, t, c}, ctx);
    key = indexMap(6, {b, h, s, c}, ctx);
    value = indexMap(6, {b, h, s, e}, ctx);
    output = indexMap(6, {b, h, t, e}, ctx);
  }
};
} // namespace

/// q, k, v → the output: the query position t and value feature e
/// parallel, the key position s and score feature c reduced.
SmallVector<IteratorType> AttentionOp::getLoopIteratorTypes() {
  return iteratorTypes(4, 2);
}
SmallVector<AffineMap> AttentionOp::getIndexingMaps() {
  AttentionMaps m(getContext());
  return {m.query, m.key, m.value, m.output};
}

/// q, k, v, o, do → dq, dk, dv: each gradient sums over the positions of
/// the other side, so all but the sample and head loops are reductions.
SmallVector<IteratorType> AttentionBackwardOp::getLoopIteratorTypes() {
  return iteratorTypes(2, 4);
}
SmallVector<AffineMap> AttentionBackwardOp::getIndexingMaps() {
  AttentionMaps m(getContext());
  return {m.query, m.key, m.value, m.output, m.output, m.query, m.key, m.value};
}

//===----------------------------------------------------------------------===//
// Losses: every loop a reduction into the scalar sum
//===----------------------------------------------------------------------===//

/// logits [..., C] and labels [...] → the loss [].
SmallVector<IteratorType> CrossEntropyOp::getLoopIteratorTypes() {
  return iteratorTypes(0, rankOf(getLogits()));
}
SmallVector<AffineMap> CrossEntropyOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  unsigned numLoops = rankOf(getLogits());
  SmallVector<AffineExpr> d = loopIndices(numLoops, ctx);
  return {indexMap(numLoops, d, ctx),
          indexMap(numLoops, ArrayRef(d).drop_back(), ctx),
          indexMap(numLoops, {}, ctx)};
}

/// input [..., D], weight [V, D], bias [V], labels [...] → the loss []:
/// loops (positions..., v, d).
SmallVector<IteratorType> LinearCrossEntropyOp::getLoopIteratorTypes() {
  return iteratorTypes(0, rankOf(getInput()) + 1);
}
SmallVector<AffineMap> LinearCrossEntropyOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  unsigned rank = rankOf(getInput()), numLoops = rank + 1;
  SmallVector<AffineExpr> d = loopIndices(numLoops, ctx);
  ArrayRef<AffineExpr> positions = ArrayRef(d).take_front(rank - 1);
  AffineExpr v = d[rank - 1], f = d[rank];
  SmallVector<AffineExpr> input(positions);
  input.push_back(f);
  SmallVector<AffineMap> maps{indexMap(numLoops, input, ctx),
                              indexMap(numLoops, {v, f}, ctx)};
  if (getBias())
    maps.push_back(indexMap(numLoops, v, ctx));
  maps.push_back(indexMap(numLoops, positions, ctx));
  maps.push_back(indexMap(numLoops, {}, ctx));
  return maps;
}

//===----------------------------------------------------------------------===//
// Vision
//===----------------------------------------------------------------------===//

/// input [N, C, H, W], weight [O, C/g, KH, KW], bias [O] → [N, O, OH, OW]:
/// loops (n, o, y, x | c, i, j); input row y·sh + i·dh − ph (torch's
/// formula), and with g groups input channel (o div O/g)·C/g + c.
SmallVector<IteratorType> Conv2DOp::getLoopIteratorTypes() {
  return iteratorTypes(4, 3);
}
SmallVector<AffineMap> Conv2DOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  SmallVector<AffineExpr> d = loopIndices(7, ctx);
  AffineExpr n = d[0], o = d[1], y = d[2], x = d[3], c = d[4], i = d[5],
             j = d[6];
  ArrayRef<int64_t> stride = getStride(), padding = getPadding(),
                    dilation = getDilation();
  int64_t groups = getGroups();
  int64_t groupInputs =
      cast<RankedTensorType>(getWeight().getType()).getDimSize(1);
  int64_t groupOutputs =
      cast<RankedTensorType>(getWeight().getType()).getDimSize(0) / groups;
  AffineExpr channel =
      groups == 1 ? c : o.floorDiv(groupOutputs) * groupInputs + c;
  SmallVector<AffineMap> maps{
      indexMap(7,
               {n, channel, y * stride[0] + i * dilation[0] - padding[0],
                x * stride[1] + j * dilation[1] - padding[1]},
               ctx),
      indexMap(7, {o, c, i, j}, ctx)};
  if (getBias())
    maps.push_back(indexMap(7, o, ctx));
  maps.push_back(indexMap(7, {n, o, y, x}, ctx));
  return maps;
}

/// input [N, C, H, W] → [N, C, OH, OW]: loops (n, c, y, x | i, j), input
/// row y·sh + i − ph.
template <typename PoolOp>
static SmallVector<AffineMap> pool2DIndexingMaps(PoolOp op) {
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> d = loopIndices(6, ctx);
  ArrayRef<int64_t> stride = op.getStrideOrKernel(), padding = op.getPadding();
  return {indexMap(6,
                   {d[0], d[1], d[2] * stride[0] + d[4] - padding[0],
                    d[3] * stride[1] + d[5] - padding[1]},
                   ctx),
          indexMap(6, ArrayRef(d).take_front(4), ctx)};
}

SmallVector<IteratorType> MaxPool2DOp::getLoopIteratorTypes() {
  return iteratorTypes(4, 2);
}
SmallVector<AffineMap> MaxPool2DOp::getIndexingMaps() {
  return pool2DIndexingMaps(*this);
}
SmallVector<IteratorType> AvgPool2DOp::getLoopIteratorTypes() {
  return iteratorTypes(4, 2);
}
SmallVector<AffineMap> AvgPool2DOp::getIndexingMaps() {
  return pool2DIndexingMaps(*this);
}

/// input [N, C, H, W] → [N, C]: loops (n, c | h, w).
SmallVector<IteratorType> GlobalAvgPool2DOp::getLoopIteratorTypes() {
  return iteratorTypes(2, 2);
}
SmallVector<AffineMap> GlobalAvgPool2DOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  SmallVector<AffineExpr> d = loopIndices(4, ctx);
  return {AffineMap::getMultiDimIdentityMap(4, ctx),
          indexMap(4, ArrayRef(d).take_front(2), ctx)};
}

/// input [N, C, ...] → the same shape, weight and bias [C]: one loop per
/// dimension; group norm reduces over channels and positions (within a
/// group of channels, which the maps do not tell apart), batch norm over
/// samples and positions.
static SmallVector<AffineMap>
normalizationIndexingMaps(Operation *op, unsigned rank, unsigned perSample) {
  MLIRContext *ctx = op->getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap channel = indexMap(rank, getAffineDimExpr(1, ctx), ctx);
  SmallVector<AffineMap> maps{identity, channel, channel};
  maps.append(perSample, indexMap(rank, getAffineDimExpr(0, ctx), ctx));
  maps.push_back(identity);
  return maps;
}

SmallVector<IteratorType> GroupNormOp::getLoopIteratorTypes() {
  return iteratorTypes(1, rankOf(getInput()) - 1);
}
SmallVector<AffineMap> GroupNormOp::getIndexingMaps() {
  return normalizationIndexingMaps(*this, rankOf(getInput()), 0);
}

SmallVector<IteratorType> BatchNormOp::getLoopIteratorTypes() {
  SmallVector<IteratorType> types = iteratorTypes(0, rankOf(getInput()));
  types[1] = IteratorType::parallel;
  return types;
}
SmallVector<AffineMap> BatchNormOp::getIndexingMaps() {
  return normalizationIndexingMaps(*this, rankOf(getInput()),
                                   getSampleMask() ? 1 : 0);
}

//===----------------------------------------------------------------------===//
// linalg.softmax
//===----------------------------------------------------------------------===//

namespace {
/// linalg.softmax's input, init and result: one loop per dimension, the
/// normalized one a reduction.
struct SoftmaxLoops
    : public shard::ShardingInterface::ExternalModel<SoftmaxLoops,
                                                     linalg::SoftmaxOp> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    SmallVector<IteratorType> types =
        iteratorTypes(softmax.getInputOperandRank());
    types[softmax.getDimension()] = IteratorType::reduction;
    return types;
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(
        softmax.getInputOperandRank(), op->getContext());
    return SmallVector<AffineMap>(op->getNumOperands() + op->getNumResults(),
                                  identity);
  }
};
} // namespace

void mlir::gacc::registerSoftmaxShardingModel(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::SoftmaxOp::attachInterface<SoftmaxLoops>(*ctx);
  });
}
