//===- StepSignature.cpp - the ABI of a compiled training step ------------===//
//
// Reads the calling convention of the compiled step and the facts the
// runtime needs from a gacc.train_step, through the ops' interfaces
// (LossOpInterface, TableLookupOpInterface, OptimizerAttrInterface), and
// the bounds that table reads (lookups, gathers in linalg payloads) put on
// the integer inputs.
//
//===----------------------------------------------------------------------===//

#include "passes/StepSignature.h"
#include "passes/analysis/MemoryPlan.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gacc;

double StepSignature::largestWindowCount(int64_t ranks) const {
  switch (normalization) {
  case Normalization::sum:
    return 1;
  case Normalization::mean:
    return double(accumSteps) * double(microBatch) * double(ranks);
  case Normalization::token_mean:
    return double(accumSteps) *
           double(inputTypes[targetInput].getNumElements()) * double(ranks);
  }
  llvm_unreachable("unknown normalization");
}

MemRefType StepSignature::windowInputType(unsigned j) const {
  SmallVector<int64_t> shape = {accumSteps};
  llvm::append_range(shape, inputTypes[j].getShape());
  return MemRefType::get(shape, inputTypes[j].getElementType());
}

/// Where the elements `v` holds come from, followed through the ops that
/// move them without computing (slices, reshapes, casts, transposes and
/// broadcasts: how a model cuts its token indices out of a sequence
/// input; gacc.recompute_inputs) and the integer widenings that keep every
/// index of a table (arith.extsi, extui, index_cast: an input's indices are
/// checked to lie in [0, rows), where these are exact): a block argument,
/// or the result of the first op that is not such a move (a constant, or a
/// computation).
static Value indexSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def))
      v = slice.getSource();
    else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
                 arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp,
                 arith::IndexCastUIOp>(def))
      v = def->getOperand(0);
    else if (auto transpose = dyn_cast<linalg::TransposeOp>(def))
      v = transpose.getInput();
    else if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def))
      v = broadcast.getInput();
    else if (isa<RecomputeInputsOp>(def))
      // A recomputed lookup's kept indices: its results are its operands.
      v = def->getOperand(cast<OpResult>(v).getResultNumber());
    else
      return v;
  }
  return v;
}

/// Indices that are not an input's: a constant's are checked against the
/// table's `rows` here; computed ones (or a nested region's block argument)
/// cannot be bounded before they are read (an index outside the table
/// reads other memory), and are an error at `reader` (which says that
/// integer range analysis found no bound where `rangeAnalyzed`).
static LogicalResult checkUnboundedIndices(Operation *reader, Value source,
                                           int64_t rows,
                                           bool rangeAnalyzed = false) {
  DenseIntElementsAttr constant;
  if (matchPattern(source, m_Constant(&constant))) {
    for (const APInt &index : constant.getValues<APInt>())
      if (index.getSExtValue() < 0 || index.getSExtValue() >= rows)
        return reader->emitOpError("reads the constant index ")
               << index.getSExtValue() << ", outside its table's " << rows
               << " rows";
    return success();
  }
  Operation *def = source.getDefiningOp();
  InFlightDiagnostic diag = reader->emitOpError("reads indices ");
  if (def)
    diag << "the body computes ('" << def->getName() << "')";
  else
    diag << "from a block argument of a nested region";
  diag << ": indices are bounded only where they are an input (the data's "
          "are checked against the table's "
       << rows << " rows before training), and computed ones cannot be"
       << (rangeAnalyzed ? " unless integer range analysis proves them "
                           "inside it (a clamp)"
                         : "")
       << " (an index outside the table would read other memory); give the "
          "indices as "
          "an input, moved (sliced, reshaped, widened) but not computed, or "
          "as a constant";
  diag.attachNote(source.getLoc()) << (def ? "computed here" : "defined here");
  return diag;
}

namespace {
/// The bounds a training step's table reads put on its integer inputs.
struct IndexBounds {
  TrainStepOp step;
  BlockArgument target;
  StepSignature &sig;
  /// Integer range analysis of the step, run on the first computed index.
  std::unique_ptr<DataFlowSolver> solver;
  bool solved = true;

  /// `reader` reads a table of `rows` rows at the indices `indices` holds:
  /// the input they come from (indexSource) is bounded by `rows`. Errors at
  /// `reader`: indices the body computes, or a nested region's block
  /// argument; a constant outside the table; the loss targets, whose
  /// ignore_index pads a ragged micro-batch.
  LogicalResult bound(Operation *reader, Value indices, int64_t rows) {
    Value source = indexSource(indices);
    auto arg = dyn_cast<BlockArgument>(source);
    if (!arg || arg.getOwner() != &step.getBodyBlock())
      return checkUnboundedIndices(reader, source, rows);
    if (arg.getArgNumber() < sig.numParams)
      return success();
    if (arg == target)
      return reader->emitOpError(
          "reads its indices from the loss targets, whose ignore_index "
          "(which pads a ragged micro-batch) would read outside its table; "
          "give the indices as their own input");
    int64_t &b = sig.indexBound[arg.getArgNumber() - sig.numParams];
    b = b ? std::min(b, rows) : rows;
    return success();
  }

  /// A gather: `extract` reads a table, in the payload of `linalgOp` (also
  /// inside a region of it) or elsewhere in the body (null: a
  /// tensor.generate's, an scf loop's, the body's own). Each index, followed
  /// through the conversions (index_cast, extsi, extui), must be one of
  ///  - the payload's element of an input (or of an init where every loop
  ///    is parallel), or a nested tensor.extract of a tensor defined above
  ///    (a sample's own row): it bounds that tensor's source as a lookup's
  ///    indices do;
  ///  - anything else (the loops' linalg.index, constants, scf.for
  ///    induction variables, clamps of the data) proven inside the table
  ///    by integer range analysis, which knows each linalg.index's loop
  ///    range (registerLinalgIndexRangeModel).
  /// Errors at `extract`: an index nothing bounds, one from a loop larger
  /// than the table, a table dimension without a static size.
  LogicalResult boundGather(tensor::ExtractOp extract,
                            linalg::LinalgOp linalgOp) {
    auto table = cast<RankedTensorType>(extract.getTensor().getType());
    for (auto [k, index] : llvm::enumerate(extract.getIndices())) {
      // A scalar index moves through the integer widenings alone.
      Value v = indexSource(index);
      // The verifier allows a dynamic size only between tensor.casts.
      if (ShapedType::isDynamic(table.getDimSize(k)))
        return extract.emitOpError("reads a table whose dimension ")
               << k << " has no static size; its indices cannot be bounded";
      int64_t rows = table.getDimSize(k);
      // An init's element is the data only where no loop reduces (one
      // that does carries what the payload yielded before).
      if (auto arg = dyn_cast<BlockArgument>(v);
          linalgOp && arg && arg.getOwner() == linalgOp.getBlock() &&
          (linalgOp.isDpsInput(linalgOp.getMatchingOpOperand(arg)) ||
           linalgOp.getNumLoops() == linalgOp.getNumParallelLoops())) {
        if (failed(bound(extract, linalgOp.getMatchingOpOperand(arg)->get(),
                         rows)))
          return failure();
        continue;
      }
      if (auto nested = v.getDefiningOp<tensor::ExtractOp>();
          linalgOp && nested &&
          !linalgOp->getRegion(0).isAncestor(
              nested.getTensor().getParentRegion())) {
        if (failed(bound(extract, nested.getTensor(), rows)))
          return failure();
        continue;
      }
      if (provenWithin(index, rows))
        continue;
      if (auto loop = v.getDefiningOp<linalg::IndexOp>(); loop && linalgOp)
        return extract.emitOpError("reads dimension ")
               << k << " of its table (" << rows << " rows) at loop "
               << loop.getDim() << " of '" << linalgOp->getName()
               << "', which runs over "
               << linalgOp.getStaticLoopRanges()[loop.getDim()]
               << " (an index outside the table would read other memory)";
      return checkUnboundedIndices(extract, v, rows, /*rangeAnalyzed=*/true);
    }
    return success();
  }

  /// Whether upstream integer range analysis (dataflow::
  /// IntegerRangeAnalysis over the whole step, run once) bounds `index`
  /// within [0, rows).
  bool provenWithin(Value index, int64_t rows) {
    if (!solver) {
      solver = std::make_unique<DataFlowSolver>();
      solver->load<dataflow::DeadCodeAnalysis>();
      solver->load<dataflow::SparseConstantPropagation>();
      solver->load<dataflow::IntegerRangeAnalysis>();
      if (failed(solver->initializeAndRun(step)))
        solved = false;
    }
    if (!solved)
      return false;
    auto *lattice =
        solver->lookupState<dataflow::IntegerValueRangeLattice>(index);
    if (!lattice || lattice->getValue().isUninitialized())
      return false;
    const ConstantIntRanges &range = lattice->getValue().getValue();
    return range.smin().getSExtValue() >= 0 &&
           range.smax().getSExtValue() < rows;
  }
};
} // namespace

FailureOr<StepSignature> mlir::gacc::getStepSignature(TrainStepOp op) {
  StepSignature sig;
  sig.name = op.getSymName().str();
  sig.accumSteps = op.getAccumSteps();
  sig.microBatch = op.getMicroBatch();
  sig.effectiveBatch = op.getEffectiveBatch()
                           ? op.getEffectiveBatchAttr().getInt()
                           : sig.accumSteps * sig.microBatch;
  sig.numParams = op.getNumParams();
  if (auto precision = op.getPrecision())
    sig.precision = *precision;
  sig.lossScaling = op.hasLossScaling();
  sig.normalization = op.getNormalization();
  auto opt = dyn_cast<OptimizerAttrInterface>(op.getOptimizer());
  if (!opt)
    return op.emitOpError("unknown optimizer ") << op.getOptimizer();
  sig.ema = op.getEmaDecay().has_value();
  if (sig.ema)
    sig.emaDecay = op.getEmaDecay()->convertToDouble();
  sig.statePerParam = opt.getNumStateTensors() + (sig.ema ? 1 : 0);
  for (auto [i, p] : llvm::enumerate(op.getParamOps())) {
    if (!p.getFrozen())
      sig.trainable.push_back(i);
    sig.paramNames.push_back(p.getSymName().str());
    sig.paramTypes.push_back(p.getTensorType());
    sig.paramInits.push_back(p.getInitializer());
    sig.paramNoWeightDecay.push_back(p.getNoWeightDecay());
  }
  sig.numTrainable = sig.trainable.size();
  llvm::SmallDenseSet<Attribute> seen;
  WalkResult walk = op.getBody().walk([&](BatchStatisticsOpInterface stats) {
    if (stats.getStatisticValuesPerSample() == 1 &&
        sig.oneValuePerSampleStatistics.empty()) {
      llvm::raw_string_ostream os(sig.oneValuePerSampleStatistics);
      os << "'" << stats->getName() << "' at "
         << describeLocation(stats->getLoc());
    }
    for (FlatSymbolRefAttr ref : stats.getRunningStatistics()) {
      if (!seen.insert(ref).second)
        continue;
      auto stat = SymbolTable::lookupNearestSymbolFrom<StatisticOp>(op, ref);
      if (!stat) {
        stats->emitOpError("'") << ref.getValue()
                                << "' does not name a gacc.statistic";
        return WalkResult::interrupt();
      }
      sig.statisticNames.push_back(ref.getValue().str());
      sig.statisticTypes.push_back(stat.getTensorType());
      sig.statisticInits.push_back(stat.getInitializer());
      sig.statisticNonNegative.push_back(
          llvm::is_contained(stats.getNonNegativeRunningStatistics(), ref));
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  sig.numStatistics = sig.statisticNames.size();
  for (BlockArgument arg : op.getInputArguments())
    sig.inputTypes.push_back(cast<RankedTensorType>(arg.getType()));
  sig.numInputs = sig.inputTypes.size();
  LossOpInterface loss = op.getLossOp();
  if (!loss) // the verifier reports it
    return failure();
  sig.predictionType = loss.getPredictionType();
  sig.predictsClassLogits = loss.predictsClassLogits();
  sig.paddingTarget = loss.getPaddingTarget();
  auto target = dyn_cast<BlockArgument>(loss.getTargets());
  if (!target) // the verifier reports it
    return failure();
  sig.targetInput = target.getArgNumber() - sig.numParams;
  for (BlockArgument arg : op.getInputArguments())
    sig.indexBound.push_back(arg == target && sig.predictsClassLogits
                                 ? sig.predictionType.getShape().back()
                                 : 0);
  // Each table lookup bounds the input its indices are read from, and so
  // does each gather in a linalg payload (tensor.extract).
  IndexBounds bounds{op, target, sig};
  WalkResult lookups = op.getBody().walk([&](Operation *reader) {
    LogicalResult result = success();
    if (auto lookup = dyn_cast<TableLookupOpInterface>(reader))
      result = bounds.bound(lookup, lookup.getTableIndices(),
                            lookup.getNumTableRows());
    else if (auto extract = dyn_cast<tensor::ExtractOp>(reader))
      result = bounds.boundGather(extract,
                                  reader->getParentOfType<linalg::LinalgOp>());
    return failed(result) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (lookups.wasInterrupted())
    return failure();
  return sig;
}
