//===- SampleIndependence.cpp - ops that mix a micro-batch's samples ------===//
//
// TrainStepOp's check that its forward computes each sample from that
// sample alone, up to the loss: the property that makes N micro-batches of
// m samples the large batch of N · m, and a ragged micro-batch's padding
// count for nothing. The samples' dimension is followed from the inputs
// (their leading dimension) through the ops whose layout is known: a loop
// nest by its indexing maps (a linalg structured op, or an op that states
// its loops as shard::ShardingInterface does: the layer ops,
// linalg.softmax), elementwise ops and the tensor ops whose layout is
// known (slices, pads, reshapes, inserts, concatenation). An op that
// reduces over the samples, reads them through anything but one loop
// index, combines two different samples, or (a tensor op) keeps some of
// them, moves them from their positions or spreads one index over several
// samples, is an error naming the operand. The loss (a LossOpInterface op) sums
// over the samples by definition, but must still pair each sample's prediction
// with its own target. An op that declares batch statistics
// (BatchStatisticsOpInterface) mixes them as it declares, keeping them in
// its result's leading dimension. A random op (RandomOpInterface) draws by
// sample index along its input's dimension 0, which must hold the samples
// one per row. An op whose layout is not known ends the trail: the
// analysis never rejects what it cannot see.
//
// Conservative where an op's maps are: a per-sample weight of a
// normalization (its normalized loop is a reduction for every operand),
// or samples in a convolution's or pool's channel or spatial dimensions
// (an index that is not one loop), is refused though it may be exact.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

#include <optional>

using namespace mlir;
using namespace mlir::gacc;

/// Whether the slice takes or writes dimension `dim` whole (GAccDialect.h).
bool mlir::gacc::coversWhole(OffsetSizeAndStrideOpInterface op, int64_t dim,
                             int64_t extent) {
  return !op.isDynamicOffset(dim) && op.getStaticOffset(dim) == 0 &&
         !op.isDynamicSize(dim) && op.getStaticSize(dim) == extent &&
         !op.isDynamicStride(dim) && op.getStaticStride(dim) == 1;
}

bool mlir::gacc::readsLoopIndex(linalg::LinalgOp op, unsigned loop) {
  return op
      ->walk([&](linalg::IndexOp index) {
        return index.getDim() == loop && index->getParentOp() == op
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

namespace {

/// A loop nest as the analysis reads it: each loop's iterator type, each
/// operand's indexing map (null where the nest does not read the operand's
/// values: an init that only gives the result's shape) and each result's.
struct LoopNest {
  SmallVector<utils::IteratorType> iterators;
  SmallVector<AffineMap> operandMaps;
  SmallVector<AffineMap> resultMaps;

  static LoopNest of(linalg::LinalgOp op) {
    LoopNest nest{op.getIteratorTypesArray(), {}, {}};
    for (OpOperand &operand : op->getOpOperands())
      nest.operandMaps.push_back(op.payloadUsesValueFromOperand(&operand)
                                     ? op.getMatchingIndexingMap(&operand)
                                     : AffineMap());
    for (OpResult result : op->getResults())
      nest.resultMaps.push_back(op.getIndexingMapMatchingResult(result));
    return nest;
  }
  /// The loops an op states as shard::ShardingInterface does (its
  /// destination-style inits written, not read); none when the op states
  /// no maps, or maps that do not match its operands, results and loops
  /// (an upstream model that leaves them to the default).
  static std::optional<LoopNest> of(shard::ShardingInterface op) {
    LoopNest nest{op.getLoopIteratorTypes(), op.getIndexingMaps(), {}};
    unsigned numOperands = op->getNumOperands();
    if (nest.operandMaps.size() != numOperands + op->getNumResults() ||
        llvm::any_of(nest.operandMaps, [&](AffineMap map) {
          return map.getNumDims() != nest.iterators.size();
        }))
      return std::nullopt;
    nest.resultMaps.assign(nest.operandMaps.begin() + numOperands,
                           nest.operandMaps.end());
    nest.operandMaps.resize(numOperands);
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op.getOperation()))
      for (OpOperand &init : dps.getDpsInitsMutable())
        nest.operandMaps[init.getOperandNumber()] = AffineMap();
    return nest;
  }
};

/// Where the samples of the micro-batch lie in the values of a forward:
/// for each tensor the analysis follows, the dimension that indexes them.
class SampleDimensions {
public:
  explicit SampleDimensions(TrainStepOp step)
      : microBatch(step.getMicroBatch()) {
    for (BlockArgument input : step.getInputArguments())
      dims[input] = 0;
  }

  /// Follows the samples through `op`; an error at `op` when it mixes them.
  LogicalResult visit(Operation *op);

private:
  std::optional<int64_t> of(Value v) const {
    auto it = dims.find(v);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }
  void set(Value v, int64_t dim) { dims[v] = dim; }

  LogicalResult visitLoopNest(Operation *op, const LoopNest &nest,
                              bool sumsSamples = false);
  LogicalResult visitRandom(Operation *op);
  FailureOr<bool> visitNestedExtracts(Operation *op);
  LogicalResult visitIndexUses(linalg::LinalgOp op);
  LogicalResult visitElementwise(Operation *op);
  void visitBatchStatistics(Operation *op,
                            ArrayRef<std::pair<unsigned, int64_t>> carried);
  LogicalResult visitTensorOp(Operation *op, int64_t dim);
  LogicalResult visitCollapse(tensor::CollapseShapeOp op, int64_t dim);
  LogicalResult visitExpand(tensor::ExpandShapeOp op, int64_t dim);
  LogicalResult visitExtractSlice(tensor::ExtractSliceOp op, int64_t dim);
  LogicalResult visitInsertSlice(tensor::InsertSliceOp op);
  LogicalResult visitConcat(tensor::ConcatOp op,
                            ArrayRef<std::pair<unsigned, int64_t>> carried);

  /// An error at `op`: `what` it does to the samples, then why that breaks
  /// the step.
  static LogicalResult mixes(Operation *op, const Twine &what) {
    return op->emitOpError(what)
           << ": the step would depend on how the effective batch is split "
              "into micro-batches (an accumulated step would not equal the "
              "large batch) and on a ragged micro-batch's padding samples; "
              "only the loss sums over the samples (a gacc loss op), and an "
              "op with batch statistics declares them (gacc.batch_norm's "
              "batch_statistics)";
  }

  /// An error at the tensor op `op` that moves the samples as `what` says;
  /// with a micro-batch of one sample there are no others to move it
  /// among, and the trail ends instead.
  LogicalResult movesSamples(Operation *op, const Twine &what) const {
    return microBatch <= 1 ? success() : mixes(op, what);
  }

  int64_t microBatch;
  llvm::DenseMap<Value, int64_t> dims;
};

LogicalResult SampleDimensions::visit(Operation *op) {
  FailureOr<bool> gathersRows = visitNestedExtracts(op);
  if (failed(gathersRows))
    return failure();
  // The operands that carry samples, with the dimension that indexes them.
  SmallVector<std::pair<unsigned, int64_t>> carried;
  for (OpOperand &operand : op->getOpOperands())
    if (std::optional<int64_t> dim = of(operand.get()))
      carried.push_back({operand.getOperandNumber(), *dim});
  if (carried.empty())
    return success();
  if (isa<linalg::FillOp>(op))
    return success(); // its init gives only a shape
  if (isa<BatchStatisticsOpInterface>(op)) {
    visitBatchStatistics(op, carried);
    return success();
  }
  if (isa<RandomOpInterface>(op) && failed(visitRandom(op)))
    return failure();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (failed(visitLoopNest(op, LoopNest::of(linalgOp))))
      return failure();
    // A gather of each sample's row reads the row loop's index.
    return *gathersRows ? success() : visitIndexUses(linalgOp);
  }
  if (auto loops = dyn_cast<shard::ShardingInterface>(op)) {
    // The loss sums over the samples by definition, but still pairs each
    // sample's prediction with its own target.
    if (std::optional<LoopNest> nest = LoopNest::of(loops))
      return visitLoopNest(op, *nest, isa<LossOpInterface>(op));
    return success();
  }
  if (op->hasTrait<OpTrait::Elementwise>())
    return visitElementwise(op);
  if (isa<tensor::ExtractOp>(op))
    return mixes(op, "reads one element of a tensor that holds the samples "
                     "of the micro-batch (dimension " +
                         Twine(carried.front().second) +
                         "), a value every sample then shares");
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return visitConcat(concat, carried);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return visitInsertSlice(insert);
  if (isa<tensor::InsertOp>(op))
    return movesSamples(op,
                        "writes one element of a tensor that holds the samples "
                        "of the micro-batch, a value only the sample at that "
                        "position gets");
  if (isa<tensor::ReshapeOp>(op))
    return movesSamples(
        op, "reshapes the samples of the micro-batch to a shape "
            "read from a tensor (write tensor.collapse_shape or "
            "tensor.expand_shape, whose grouping keeps them apart)");
  if (carried.size() == 1 && carried.front().first == 0)
    return visitTensorOp(op, carried.front().second);
  return success();
}

/// A region that uses a tensor holding the samples, defined above it (a
/// gather in a linalg.generic's payload), reads the sample its index
/// computes. Each sample's own: every use is a tensor.extract whose index
/// at the samples' dimension is the linalg.index of the row loop of `op`
/// (a linalg op): a parallel loop over the micro-batch's samples that is
/// dimension 0 of every result, whose results then hold the samples there.
/// Any other use takes some sample's values for others, as a
/// tensor.extract in the body does (with a micro-batch of one sample there
/// are no others); an operand that carries the samples must read them
/// through the row loop too. Returns whether `op` gathers its samples'
/// rows this way (its row loop's index then serves the gathers only).
FailureOr<bool> SampleDimensions::visitNestedExtracts(Operation *op) {
  if (op->getNumRegions() == 0 || microBatch <= 1)
    return false;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  // The loop of `op` that is dimension 0 of every result, if parallel and
  // over the micro-batch's samples.
  std::optional<unsigned> rowLoop;
  if (linalgOp && linalgOp->getNumResults()) {
    for (OpResult result : linalgOp->getResults()) {
      AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
      auto d = map.getNumResults() ? dyn_cast<AffineDimExpr>(map.getResult(0))
                                   : nullptr;
      if (!d || (rowLoop && *rowLoop != d.getPosition())) {
        rowLoop = std::nullopt;
        break;
      }
      rowLoop = d.getPosition();
    }
    if (rowLoop && linalgOp.getIteratorTypesArray()[*rowLoop] !=
                       utils::IteratorType::parallel)
      rowLoop = std::nullopt;
  }
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  bool ownSamples = false;
  for (Value tensor : captured) {
    std::optional<int64_t> dim = of(tensor);
    if (!dim)
      continue;
    for (Operation *user : tensor.getUsers()) {
      if (!op->isProperAncestor(user))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(user);
      if (!extract)
        return mixes(user, "takes a tensor that holds the samples of the "
                           "micro-batch (dimension " +
                               Twine(*dim) +
                               ", defined above this region) for anything but "
                               "reading each sample's own elements "
                               "(tensor.extract at the index of the "
                               "samples' loop)");
      auto index = extract.getIndices()[*dim].getDefiningOp<linalg::IndexOp>();
      if (!index || !rowLoop || index->getParentOp() != op ||
          index.getDim() != *rowLoop)
        return mixes(extract, "reads one element of a tensor that holds the "
                              "samples of the micro-batch (dimension " +
                                  Twine(*dim) +
                                  ", defined above this region), a value "
                                  "other samples then share");
      int64_t rows = linalgOp.getStaticLoopRanges()[*rowLoop];
      if (rows != microBatch)
        return mixes(extract,
                     "reads the samples of the micro-batch at the "
                     "index of loop " +
                         Twine(*rowLoop) + ", which runs over " +
                         (ShapedType::isDynamic(rows) ? Twine("a dynamic range")
                                                      : Twine(rows)) +
                         " rows, not its " + Twine(microBatch) + " samples");
      ownSamples = true;
    }
  }
  if (!ownSamples)
    return false;
  // An operand that carries the samples must index them by the row loop
  // (through another loop different samples would meet).
  LoopNest nest = LoopNest::of(linalgOp);
  for (auto [number, map] : llvm::enumerate(nest.operandMaps)) {
    std::optional<int64_t> dim = of(op->getOperand(number));
    if (dim && map &&
        map.getResult(*dim) != getAffineDimExpr(*rowLoop, op->getContext()))
      return mixes(op, "gathers each sample's row inside its region at loop " +
                           Twine(*rowLoop) +
                           " and reads the samples of operand #" +
                           Twine(number) +
                           " through another index, so that different "
                           "samples meet");
  }
  // The row loop's index serves the gathers only (otherwise it is the
  // sample's position).
  WalkResult position = op->walk([&](linalg::IndexOp index) {
    if (index.getDim() != *rowLoop || index->getParentOp() != op)
      return WalkResult::advance();
    for (OpOperand &use : index->getUses()) {
      auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
      std::optional<int64_t> dim =
          extract ? of(extract.getTensor()) : std::nullopt;
      if (!dim || use.getOperandNumber() != unsigned(1 + *dim))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (position.wasInterrupted())
    return mixes(op, "reads the index of its samples' loop (linalg.index " +
                         Twine(*rowLoop) +
                         ") for more than gathering each sample's row: each "
                         "sample's position in the micro-batch");
  for (Value result : op->getResults())
    set(result, 0);
  return true;
}

/// An op with batch statistics takes its samples in operand 0's leading
/// dimension and keeps them in its results', mixing them as it declares;
/// any other layout ends the trail.
void SampleDimensions::visitBatchStatistics(
    Operation *op, ArrayRef<std::pair<unsigned, int64_t>> carried) {
  if (carried.front().first != 0 ||
      llvm::any_of(carried, [](auto c) { return c.second != 0; }))
    return;
  for (Value r : op->getResults())
    if (auto t = dyn_cast<RankedTensorType>(r.getType()); t && t.getRank())
      set(r, 0);
}

/// Tensors that hold the same samples in the same dimension, joined along
/// another one; joined along the samples' own dimension, or with them in
/// different dimensions, they are mixed.
LogicalResult
SampleDimensions::visitConcat(tensor::ConcatOp op,
                              ArrayRef<std::pair<unsigned, int64_t>> carried) {
  int64_t dim = carried.front().second;
  for (auto [number, other] : carried)
    if (other != dim)
      return movesSamples(op, "joins tensors that hold the samples of the "
                              "micro-batch in different dimensions (operand #" +
                                  Twine(carried.front().first) + " in " +
                                  Twine(dim) + ", operand #" + Twine(number) +
                                  " in " + Twine(other) + ")");
  if (int64_t(op.getDim()) == dim)
    return movesSamples(op,
                        "joins along the samples' dimension " + Twine(dim) +
                            ", so that a sample's position in the result is "
                            "not its position in the micro-batch");
  set(op.getResult(), dim);
  return success();
}

/// A slice written into a tensor: where either holds samples, the slice
/// must cover the destination's samples' dimension whole (a value written
/// into some positions only reaches the samples that lie there), and a
/// source with samples must bring them to that dimension.
LogicalResult SampleDimensions::visitInsertSlice(tensor::InsertSliceOp op) {
  std::optional<int64_t> destDim = of(op.getDest());
  std::optional<int64_t> sourceDim = of(op.getSource());
  // The destination dimension each source dimension fills.
  llvm::SmallBitVector dropped = op.getDroppedDims();
  SmallVector<int64_t> filled;
  for (int64_t i = 0, e = op.getType().getRank(); i < e; ++i)
    if (!dropped.test(i))
      filled.push_back(i);
  std::optional<int64_t> dim =
      destDim ? destDim : std::optional<int64_t>(filled[size_t(*sourceDim)]);
  if (!coversWhole(op, *dim, op.getType().getDimSize(*dim)))
    return movesSamples(op,
                        "writes a slice into part of the samples' dimension " +
                            Twine(*dim) +
                            " of the result, so that only the samples at some "
                            "positions of the micro-batch get its values");
  if (sourceDim && filled[size_t(*sourceDim)] != *dim)
    return movesSamples(op,
                        "writes the samples of the micro-batch (dimension " +
                            Twine(*sourceDim) +
                            " of the source) across the destination's samples "
                            "(dimension " +
                            Twine(*dim) + ")");
  set(op.getResult(), *dim);
  return success();
}

/// A random op draws its values by each sample's index in the epoch along
/// operand 0's dimension 0 (RandomOpInterface: the key's first sample plus
/// the row): that dimension must hold the samples, one per row.
LogicalResult SampleDimensions::visitRandom(Operation *op) {
  std::optional<int64_t> dim = of(op->getOperand(0));
  if (!dim)
    return success();
  int64_t rows = cast<ShapedType>(op->getOperand(0).getType()).getDimSize(0);
  if (*dim == 0 && rows == microBatch)
    return success();
  std::string where =
      *dim == 0
          ? "holds " + std::to_string(rows) + " rows, not the micro-batch's " +
                std::to_string(microBatch) + " samples"
          : "does not hold the samples of the micro-batch (dimension " +
                std::to_string(*dim) + " does)";
  return mixes(op, "draws its random values by sample index along dimension "
                   "0 of operand #0, which " +
                       where);
}

/// A payload that reads the index of the samples' loop (linalg.index)
/// computes from each sample's position in the micro-batch.
LogicalResult SampleDimensions::visitIndexUses(linalg::LinalgOp op) {
  std::optional<unsigned> loop;
  for (OpResult result : op->getResults())
    if (std::optional<int64_t> dim = of(result))
      if (auto d = dyn_cast<AffineDimExpr>(
              op.getIndexingMapMatchingResult(result).getResult(*dim)))
        loop = d.getPosition();
  if (!loop)
    return success();
  if (!readsLoopIndex(op, *loop))
    return success();
  return mixes(op, "reads the index of its samples' loop (linalg.index " +
                       Twine(*loop) +
                       "), each sample's position in the micro-batch");
}

/// A loop nest reads each operand through its indexing map: the samples'
/// dimension of every operand that carries them must be the same loop, a
/// parallel one (unless the op `sumsSamples`: the loss), which then
/// indexes the samples of each result where its map has it.
LogicalResult SampleDimensions::visitLoopNest(Operation *op,
                                              const LoopNest &nest,
                                              bool sumsSamples) {
  std::optional<unsigned> loop;
  unsigned previous = 0;
  for (auto [number, map] : llvm::enumerate(nest.operandMaps)) {
    std::optional<int64_t> dim = of(op->getOperand(number));
    if (!dim || !map)
      continue;
    AffineExpr expr = map.getResult(*dim);
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d) {
      std::string text;
      llvm::raw_string_ostream os(text);
      expr.print(os);
      if (isa<AffineSymbolExpr>(expr))
        os << " (an index read from the data)";
      return mixes(op, "reads the samples of the micro-batch (dimension " +
                           Twine(*dim) + " of operand #" + Twine(number) +
                           ") at " + text + ", not at one loop index");
    }
    if (loop && *loop != d.getPosition())
      return mixes(op, "combines different samples of the micro-batch "
                       "(operand #" +
                           Twine(previous) + " and operand #" + Twine(number) +
                           " index them by different loops)");
    loop = d.getPosition();
    previous = number;
  }
  if (!loop || sumsSamples)
    return success();
  auto reduces = [&] {
    return mixes(op, "reduces over the samples of the micro-batch "
                     "(dimension " +
                         Twine(*of(op->getOperand(previous))) +
                         " of operand #" + Twine(previous) + ")");
  };
  if (nest.iterators[*loop] == utils::IteratorType::reduction)
    return reduces();
  // Each result keeps the samples where its map has their loop; a result
  // without it gathers every sample into each element.
  AffineExpr sampleLoop = getAffineDimExpr(*loop, op->getContext());
  for (auto [result, map] :
       llvm::zip_equal(op->getResults(), nest.resultMaps)) {
    ArrayRef<AffineExpr> indices = map.getResults();
    const AffineExpr *at = llvm::find(indices, sampleLoop);
    if (at == indices.end())
      return reduces();
    set(result, at - indices.begin());
  }
  return success();
}

/// An elementwise op combines the same element of each operand: their
/// samples must lie in the same dimension.
LogicalResult SampleDimensions::visitElementwise(Operation *op) {
  std::optional<std::pair<unsigned, int64_t>> seen;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<int64_t> dim = of(operand.get());
    if (!dim)
      continue;
    if (seen && seen->second != *dim)
      return mixes(op, "combines different samples of the micro-batch "
                       "(operand #" +
                           Twine(seen->first) + " holds them in dimension " +
                           Twine(seen->second) + ", operand #" +
                           Twine(operand.getOperandNumber()) + " in " +
                           Twine(*dim) + ")");
    seen = {operand.getOperandNumber(), *dim};
  }
  for (Value r : op->getResults())
    if (isa<RankedTensorType>(r.getType()))
      set(r, seen->second);
  return success();
}

/// The first dimension of a reshape's group `indices` of `type` whose
/// extent is not 1 (the group's first when all are 1): the one that holds
/// the samples when they lead the group ([1, m, D] from [m, D]).
static int64_t leadingDimension(RankedTensorType type,
                                ArrayRef<int64_t> indices) {
  for (int64_t i : indices)
    if (type.getDimSize(i) != 1)
      return i;
  return indices.front();
}

/// A collapse keeps the samples apart when their dimension leads its group
/// (m · S rows of m samples in order stay those samples, each S rows; unit
/// dimensions before it change nothing). After another dimension of the
/// group ([T, m, D] into [T · m, D], time-major), each sample's rows lie
/// apart, between other samples' rows, where a later expand or slice would
/// pair rows of different samples: refused (with m > 1), as a layout the
/// check cannot follow.
LogicalResult SampleDimensions::visitCollapse(tensor::CollapseShapeOp op,
                                              int64_t dim) {
  for (auto [group, indices] : llvm::enumerate(op.getReassociationIndices())) {
    if (!llvm::is_contained(indices, dim))
      continue;
    int64_t lead = leadingDimension(op.getSrcType(), indices);
    if (microBatch > 1 && lead != dim)
      return movesSamples(
          op, "merges the samples' dimension " + Twine(dim) +
                  " into one after dimension " + Twine(lead) +
                  ", so that each sample's rows lie between other samples' "
                  "(keep the samples outermost: transpose them to the front "
                  "first)");
    set(op.getResult(), group);
  }
  return success();
}

/// An expand keeps the samples in one dimension when the first factor of
/// the group that splits their dimension (m samples of b rows each) with
/// an extent other than 1 is a multiple of m: [m · S, D] into [m, S, D],
/// or [m · S, H, hd] from [m · S, H · hd]; each index of it then lies in
/// one sample. A first factor that is not ([8] into [2, 4]: each of the 2
/// indices holds 4 samples) mixes them. With one sample the group's first
/// factor holds it ([T, D] into [1, T, D]), extent 1 or not: skipping unit
/// factors would take T for the samples.
LogicalResult SampleDimensions::visitExpand(tensor::ExpandShapeOp op,
                                            int64_t dim) {
  RankedTensorType result = op.getResultType();
  ArrayRef<int64_t> indices = op.getReassociationIndices()[dim];
  int64_t lead =
      microBatch == 1 ? indices.front() : leadingDimension(result, indices);
  int64_t extent = result.getDimSize(lead);
  if (ShapedType::isDynamic(extent) || extent % microBatch != 0)
    return movesSamples(
        op, "splits the samples' dimension " + Twine(dim) +
                " into factors whose first, " +
                (ShapedType::isDynamic(extent) ? Twine("?") : Twine(extent)) +
                ", is not a multiple of the micro-batch's " +
                Twine(microBatch) +
                " samples: each of its indices holds parts of "
                "several samples");
  set(op.getResult(), lead);
  return success();
}

/// A slice keeps the samples when it keeps their dimension whole; any part
/// of it reads some samples of the micro-batch and not others (or puts
/// them at other positions).
LogicalResult SampleDimensions::visitExtractSlice(tensor::ExtractSliceOp op,
                                                  int64_t dim) {
  if (!coversWhole(op, dim, op.getSourceType().getDimSize(dim)))
    return movesSamples(op,
                        "takes part of the samples' dimension " + Twine(dim) +
                            ", so that the result holds some samples of the "
                            "micro-batch and not others");
  llvm::SmallBitVector dropped = op.getDroppedDims();
  int64_t before = 0;
  for (int64_t i = 0; i < dim; ++i)
    before += dropped.test(i);
  if (!dropped.test(dim))
    set(op.getResult(), dim - before);
  return success();
}

/// The tensor ops whose layout is known, from operand 0: a cast, a slice
/// or pad that keeps the samples' dimension whole and each sample's values
/// its own, a reshape that keeps each sample in one index of one
/// dimension.
LogicalResult SampleDimensions::visitTensorOp(Operation *op, int64_t dim) {
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    set(cast.getResult(), dim);
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return visitCollapse(collapse, dim);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return visitExpand(expand, dim);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return visitExtractSlice(slice, dim);
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (pad.getStaticLow()[dim] != 0 || pad.getStaticHigh()[dim] != 0)
      return movesSamples(op,
                          "pads the samples' dimension " + Twine(dim) +
                              ", so that the result's positions are not the "
                              "micro-batch's samples");
    // A value computed in the region from the indices differs by position.
    if (!pad.getConstantPaddingValue())
      return movesSamples(op,
                          "pads with a value computed from the position, which "
                          "differs by the sample's place in the micro-batch");
    set(pad.getResult(), dim);
    return success();
  }
  return success();
}

} // namespace

LogicalResult mlir::gacc::verifySampleIndependence(TrainStepOp step) {
  SampleDimensions samples(step);
  for (Operation &op : step.getForwardOps()) {
    if (failed(samples.visit(&op)))
      return failure();
  }
  return success();
}
