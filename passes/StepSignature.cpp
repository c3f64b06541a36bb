//===- StepSignature.cpp - the ABI of a compiled training step ------------===//
//
// Reads the calling convention of the compiled step and the facts the
// runtime needs from a gacc.train_step, through the ops' interfaces
// (LossOpInterface, TableLookupOpInterface, OptimizerAttrInterface).
//
//===----------------------------------------------------------------------===//

#include "passes/StepSignature.h"
#include "passes/analysis/MemoryPlan.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gacc;

MemRefType StepSignature::windowInputType(unsigned j) const {
  SmallVector<int64_t> shape = {accumSteps};
  llvm::append_range(shape, inputTypes[j].getShape());
  return MemRefType::get(shape, inputTypes[j].getElementType());
}

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
  if (!target || target.getOwner() != &op.getBodyBlock() ||
      target.getArgNumber() < sig.numParams)
    return op.emitOpError("the loss targets must be an input of the body");
  sig.targetInput = target.getArgNumber() - sig.numParams;
  for (BlockArgument arg : op.getInputArguments()) {
    int64_t bound = 0;
    for (Operation *user : arg.getUsers())
      if (auto lookup = dyn_cast<TableLookupOpInterface>(user))
        if (lookup.getTableIndices() == arg)
          bound = bound ? std::min(bound, lookup.getNumTableRows())
                        : lookup.getNumTableRows();
    if (arg == target && sig.predictsClassLogits)
      bound = sig.predictionType.getShape().back();
    sig.indexBound.push_back(bound);
  }
  return sig;
}
