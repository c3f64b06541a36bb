//===- ExpandAccumulation.cpp - gacc-expand-accumulation ------------------===//
//
// Turns a differentiated gacc.train_step into the function that runs one
// optimizer step (micro-batch loop, persistent accumulators, one deferred
// update normalized by a run-time count), an inference function and, on
// request, the step split at micro-batch boundaries (for checkpoints in
// the middle of a window). One function per part: the step function's
// signature, the micro-batch clone (with mixed-precision rounding), the
// loop, the collective, the norm and clipping coefficient, the update (or
// the skip of a non-finite window), the write-back, and the functions.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/RunningStatistics.h"
#include "passes/StepSignature.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

#define DEBUG_TYPE "gacc-expand-accumulation"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCEXPANDACCUMULATIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

MemRefType toMemRef(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

DictionaryAttr argAttr(OpBuilder &b, StringRef name, Attribute value) {
  return b.getDictionaryAttr(b.getNamedAttr(name, value));
}

Value toTensor(OpBuilder &b, Location loc, Value memref, bool writable) {
  auto mt = cast<MemRefType>(memref.getType());
  auto tt = RankedTensorType::get(mt.getShape(), mt.getElementType());
  return bufferization::ToTensorOp::create(b, loc, tt, memref,
                                           /*restrict=*/true, writable);
}

//===----------------------------------------------------------------------===//
// The step function and its arguments
//===----------------------------------------------------------------------===//

/// `func.func @S(params…, accumulators…, optimizer state…, running
/// statistics…, inputs…, lr: f32, step: i64, first_sample: i64[,
/// loss_scale: f32]) -> (f32 × numResults)` (abi/StepABI.h), with argument
/// attributes naming what each memref holds.
func::FuncOp createStepFunction(OpBuilder &b, Location loc,
                                const StepSignature &sig) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  auto param = [&](unsigned i) {
    return FlatSymbolRefAttr::get(ctx, sig.paramNames[i]);
  };
  for (unsigned i = 0; i < sig.numParams; ++i) {
    types.push_back(toMemRef(sig.paramTypes[i]));
    attrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("gacc.param", param(i)),
         b.getNamedAttr("gacc.initializer", sig.paramInits[i])}));
  }
  // Trainable parameters only: a frozen one has neither.
  for (unsigned i : sig.trainable) {
    types.push_back(toMemRef(sig.paramTypes[i]));
    attrs.push_back(argAttr(b, "gacc.accumulator", param(i)));
  }
  for (unsigned i : sig.trainable)
    for (unsigned s = 0; s < sig.statePerParam; ++s) {
      types.push_back(toMemRef(sig.paramTypes[i]));
      attrs.push_back(argAttr(b, "gacc.optimizer_state", param(i)));
    }
  for (unsigned q = 0; q < sig.numStatistics; ++q) {
    types.push_back(toMemRef(sig.statisticTypes[q]));
    attrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("gacc.statistic",
                        FlatSymbolRefAttr::get(ctx, sig.statisticNames[q])),
         b.getNamedAttr("gacc.initializer", sig.statisticInits[q])}));
  }
  for (unsigned j = 0; j < sig.inputTypes.size(); ++j) {
    types.push_back(sig.windowInputType(j));
    attrs.push_back(argAttr(b, "gacc.window_input", b.getI64IntegerAttr(j)));
  }
  // lr: f32, step: i64, first_sample: i64 (no attributes: scalar arguments
  // keep theirs down to LLVM IR, which has no use for them); the loss scale
  // with scaling.
  types.append({b.getF32Type(), b.getI64Type(), b.getI64Type()});
  if (sig.lossScaling)
    types.push_back(b.getF32Type());
  attrs.resize(types.size(), b.getDictionaryAttr({}));
  auto func = func::FuncOp::create(
      b, loc, sig.name,
      b.getFunctionType(types,
                        SmallVector<Type>(sig.numResults(), b.getF32Type())));
  func.setAllArgAttrs(attrs);
  return func;
}

/// The step function's arguments as tensors.
struct StepValues {
  /// params: every parameter; accs and states: the trainable ones'.
  SmallVector<Value> params, accs, states, statistics, inputs;
  Value lr, step, firstSample, lossScale;
};

StepValues bindArguments(OpBuilder &b, Location loc, Block *entry,
                         const StepSignature &sig) {
  StepValues v;
  // A frozen parameter is only read.
  for (unsigned i = 0; i < sig.numParams; ++i)
    v.params.push_back(toTensor(b, loc, entry->getArgument(i),
                                llvm::is_contained(sig.trainable, i)));
  for (unsigned k = 0; k < sig.numTrainable; ++k)
    v.accs.push_back(toTensor(b, loc, entry->getArgument(sig.accArg(k)), true));
  for (unsigned k = 0; k < sig.numTrainable; ++k)
    for (unsigned s = 0; s < sig.statePerParam; ++s)
      v.states.push_back(
          toTensor(b, loc, entry->getArgument(sig.stateArg(k, s)), true));
  for (unsigned q = 0; q < sig.numStatistics; ++q)
    v.statistics.push_back(
        toTensor(b, loc, entry->getArgument(sig.statisticArg(q)), true));
  for (unsigned j = 0; j < sig.inputTypes.size(); ++j)
    v.inputs.push_back(
        toTensor(b, loc, entry->getArgument(sig.inputArg(j)), false));
  v.lr = entry->getArgument(sig.lrArg());
  v.step = entry->getArgument(sig.stepArg());
  v.firstSample = entry->getArgument(sig.firstSampleArg());
  if (sig.lossScaling)
    v.lossScale = entry->getArgument(sig.lossScaleArg());
  return v;
}

//===----------------------------------------------------------------------===//
// One micro-batch
//===----------------------------------------------------------------------===//

/// Whether a low-precision body rounds the f32 results of `op`. The tensor
/// dialect's ops (reshapes, slices, concatenation, padding, empty tensors)
/// only rearrange values that are rounded already, and a fill of a
/// constant is exact at zero, its common use: rounding them again would
/// cost a pass over the data for nothing.
bool roundsResults(Operation *op) {
  return !isa_and_present<tensor::TensorDialect>(op->getDialect()) &&
         !isa<linalg::FillOp, LossScaleOp>(op);
}

/// Whether `v` is a running sum of products: every use is the init of a
/// contraction that adds into it (C += A·B, the blocks of the weight
/// gradients of gacc.linear_cross_entropy and gacc.embedding). It stays
/// f32 until its last product, as the sum inside one GEMM would, instead
/// of being rounded after every block.
bool isRunningSum(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUses(), [](OpOperand &use) {
    auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return op && op.isDpsInit(&use) && linalg::isaContractionOpInterface(op);
  });
}

/// Whether `op` only moves or sums the values of its tensor operands:
/// tensor reshapes, slices, concatenations and casts, linalg.transpose, a
/// linalg.fill (the zeros slices are placed in), and gacc-autodiff's sum of
/// two adjoint contributions (isElementwiseSum).
bool movesOrSums(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp,
             tensor::CastOp, tensor::EmptyOp, linalg::TransposeOp,
             linalg::FillOp>(op) ||
         isElementwiseSum(op);
}

/// The values of `body` that stay fp32 in a low-precision step: the loss,
/// the gradients, and every value that reaches nothing but the
/// accumulators through ops that only move or sum values. A weight
/// gradient built as products that are reshaped, transposed, placed in
/// slices or summed (conv2d's [O, C·kh·kw] product expanded to OIHW, a
/// grouped convolution's groups, a tied weight's two contributions) thus
/// enters its accumulator as the fp32 results of its products, never
/// rounded to the low precision first (the contract of #gacc.precision).
/// A value something else reads keeps its rounding, so the body's other
/// ops see what they would: in particular a gradient that is also an
/// adjoint other backward ops read (a parameter used inside the body)
/// passes nothing on.
llvm::DenseSet<Value> valuesKeptF32(TrainStepOp step) {
  Block &body = step.getBodyBlock();
  llvm::DenseSet<Value> keep;
  for (Value g : step.getGradients())
    keep.insert(g);
  keep.insert(step.getLoss());
  // The values that reach the accumulators and nothing else: the gradients
  // only the yield reads, then, walking back, what feeds only those.
  llvm::DenseSet<Value> toAccumulators;
  for (Value g : step.getGradients())
    if (llvm::all_of(g.getUsers(),
                     [](Operation *user) { return isa<YieldOp>(user); }))
      toAccumulators.insert(g);
  auto feedsOnlyAccumulators = [&](Value v) {
    return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *user) {
      return user->getBlock() == &body && user->getNumResults() > 0 &&
             movesOrSums(user) &&
             llvm::all_of(user->getResults(),
                          [&](Value r) { return toAccumulators.contains(r); });
    });
  };
  // In reverse order every user of a result is seen before its producer.
  for (Operation &op : llvm::reverse(body.without_terminator()))
    for (Value r : op.getResults())
      if (feedsOnlyAccumulators(r)) {
        toAccumulators.insert(r);
        keep.insert(r);
      }
  return keep;
}

/// The context of one micro-batch's clone: the compute type (null for
/// fp32) with the values that stay fp32 (valuesKeptF32), the run-time
/// loss scale, the running statistics the loop carries, and the key of
/// random ops (the step's seed, the optimizer step, the window's first
/// sample, all i64) with the micro-batch size m.
struct CloneContext {
  FloatType computeType;
  llvm::DenseSet<Value> keepF32;
  Value lossScale;
  const RunningStatistics *running = nullptr;
  Value seed, step, firstSample;
  int64_t microBatch = 0;
};

/// The global index of row 0 of micro-batch `i` (index): first_sample +
/// i·m, as i64.
Value firstSampleOf(OpBuilder &b, Location loc, Value i,
                    const CloneContext &ctx) {
  Value index = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
  Value m =
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(ctx.microBatch));
  Value row = arith::MulIOp::create(b, loc, index, m);
  return arith::AddIOp::create(b, loc, ctx.firstSample, row);
}

/// Clones the body for micro-batch `i` of the window (slicing each window
/// input at `i`) into `mapping`.
void cloneMicroBatch(OpBuilder &b, Location loc, TrainStepOp step,
                     ValueRange params, ValueRange windowInputs, Value i,
                     IRMapping &mapping, const CloneContext &ctx) {
  for (auto [arg, p] : llvm::zip(step.getParamArguments(), params))
    mapping.map(arg, p);
  for (auto [arg, win] : llvm::zip(step.getInputArguments(), windowInputs)) {
    auto mbType = cast<RankedTensorType>(arg.getType());
    SmallVector<OpFoldResult> offsets = {i}, sizes = {b.getIndexAttr(1)},
                              strides(mbType.getRank() + 1,
                                      b.getIndexAttr(1));
    for (int64_t d : mbType.getShape()) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(d));
    }
    Value slice = tensor::ExtractSliceOp::create(b, loc, mbType, win, offsets,
                                                 sizes, strides);
    if (ctx.computeType && mbType.getElementType().isF32())
      slice = buildRoundToCompute(b, loc, slice, ctx.computeType);
    mapping.map(arg, slice);
  }
  Value rowZero;
  for (Operation &op : step.getBodyBlock().without_terminator()) {
    if (auto scale = dyn_cast<LossScaleOp>(op)) {
      mapping.map(scale.getResult(),
                  tensor::FromElementsOp::create(b, loc, scale.getType(),
                                                 ValueRange{ctx.lossScale}));
      continue;
    }
    Operation *clone = b.clone(op, mapping);
    // Random ops draw from (seed, optimizer step, each sample's index).
    if (auto random = dyn_cast<RandomOpInterface>(clone)) {
      if (!rowZero) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(clone);
        rowZero = firstSampleOf(b, loc, i, ctx);
      }
      random.setRandomKey(ctx.seed, ctx.step, rowZero);
    }
    if (!ctx.computeType || !roundsResults(&op))
      continue;
    // Casts on use: every intermediate is rounded where it is produced.
    for (Value r : op.getResults()) {
      auto rt = dyn_cast<RankedTensorType>(r.getType());
      if (!rt || rt.getRank() == 0 || !rt.getElementType().isF32() ||
          ctx.keepF32.contains(r) || isRunningSum(r))
        continue;
      mapping.map(
          r, buildRoundToCompute(b, loc, mapping.lookup(r), ctx.computeType));
    }
  }
}

/// One micro-batch: the body, then one gacc.accumulate per gradient.
/// Returns the new accumulators, the new loss sum, (unless the
/// normalization is `sum`) the new count, and the running statistics'
/// carried values after it.
SmallVector<Value> emitMicroBatch(OpBuilder &b, Location loc, TrainStepOp step,
                                  ValueRange params, ValueRange windowInputs,
                                  Value i, Value first, ValueRange accs,
                                  Value lossSum, Value count,
                                  ValueRange running,
                                  const CloneContext &ctx) {
  PhaseBeginOp::create(b, loc, StepPhase::forward);
  IRMapping mapping;
  cloneMicroBatch(b, loc, step, params, windowInputs, i, mapping, ctx);
  SmallVector<Value> results;
  SmallVector<Attribute> names;
  for (BlockArgument p : step.getTrainableParamArguments())
    names.push_back(step.getParams()[p.getArgNumber()]);
  for (auto [g, acc, name] : llvm::zip(step.getGradients(), accs, names)) {
    // Named locations name the kernels this op becomes (accumulate_<param>).
    Location accLoc = NameLoc::get(
        b.getStringAttr("accumulate_" +
                        cast<FlatSymbolRefAttr>(name).getValue()),
        loc);
    results.push_back(AccumulateOp::create(b, accLoc, acc.getType(),
                                           mapping.lookup(g), acc, first));
  }
  Value loss = tensor::ExtractOp::create(b, loc, mapping.lookup(step.getLoss()),
                                         ValueRange{});
  results.push_back(arith::AddFOp::create(b, loc, lossSum, loss));
  if (count) {
    // The count this micro-batch really holds, read from its targets as
    // they are consumed (no look-ahead at the window).
    auto lossOp = cast<LossOpInterface>(
        mapping.lookup(step.getLoss()).getDefiningOp());
    Value n = lossOp.buildNormalizationCount(
        b, step.getNormalization() == Normalization::token_mean);
    results.push_back(arith::AddFOp::create(b, loc, count, n));
  }
  llvm::append_range(results, ctx.running->update(b, loc, mapping, running));
  return results;
}

/// The compute type and the values that stay fp32, the run-time scalars
/// the micro-batches read (the seed as a constant at the insertion point).
CloneContext makeCloneContext(TrainStepOp step, const StepSignature &sig,
                              const StepValues &v,
                              const RunningStatistics &running, OpBuilder &b) {
  CloneContext ctx;
  ctx.running = &running;
  ctx.seed = arith::ConstantOp::create(
      b, step.getLoc(), b.getI64IntegerAttr(int64_t(step.getSeed())));
  ctx.step = v.step;
  ctx.firstSample = v.firstSample;
  ctx.microBatch = sig.microBatch;
  ctx.computeType = getLowPrecisionType(b.getContext(), sig.precision);
  ctx.keepF32 = valuesKeptF32(step);
  ctx.lossScale = v.lossScale;
  return ctx;
}

/// Marks `func`, whose micro-batches run the body, with the body's compute
/// precision when it is low (gacc-mark-gemm-inputs reads it).
void markComputePrecision(Operation *func, const StepSignature &sig) {
  if (sig.precision != Precision::fp32)
    func->setAttr(kComputePrecisionAttrName,
                  PrecisionAttr::get(func->getContext(), sig.precision));
}

/// The micro-batch loop's carried values: the accumulators (`numAccs`),
/// the loss sum, the count (when `counted`), then the running statistics'
/// (RunningStatistics), which start at this index.
unsigned firstRunningValue(unsigned numAccs, bool counted) {
  return numAccs + (counted ? 2 : 1);
}

/// The micro-batch loop: an scf.for over micro-batches [begin, end) of the
/// window (all N in the step function) carrying the accumulators, the loss
/// sum, (unless `sum`) the count, from `lossSum` and `count`, and the
/// running statistics (RunningStatistics) from the step's.
scf::ForOp emitMicroBatchLoop(OpBuilder &b, Location loc, TrainStepOp step,
                              ValueRange bodyParams, const StepValues &v,
                              const CloneContext &ctx, Value begin, Value end,
                              Value lossSum, Value count) {
  unsigned P = v.accs.size();
  SmallVector<Value> carried(v.accs);
  carried.push_back(lossSum);
  if (count)
    carried.push_back(count);
  unsigned firstRunning = firstRunningValue(P, bool(count));
  llvm::append_range(carried, ctx.running->initial(b, loc, v.statistics));
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  return scf::ForOp::create(
      b, loc, begin, end, c1, carried,
      [&](OpBuilder &lb, Location ll, Value i, ValueRange iter) {
        Value first =
            arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::eq, i, c0);
        scf::YieldOp::create(
            lb, ll,
            emitMicroBatch(lb, ll, step, bodyParams, v.inputs, i, first,
                           iter.take_front(P), iter[P],
                           count ? iter[P + 1] : Value(),
                           iter.drop_front(firstRunning), ctx));
      });
}

//===----------------------------------------------------------------------===//
// After the loop: collective, norm, update
//===----------------------------------------------------------------------===//

/// The one collective of a data-parallel step: packs the accumulators, the
/// loss sum and the count into one flat buffer [Σ|acc| + 2], sums it over
/// the ranks with gacc.all_reduce and unpacks the sums into `accs`,
/// `lossSum` and `count`.
void reduceOverRanks(OpBuilder &b, Location loc, SmallVectorImpl<Value> &accs,
                     Value &lossSum, Value &count) {
  Type f32 = b.getF32Type();
  int64_t total = 0;
  for (Value acc : accs)
    total += cast<RankedTensorType>(acc.getType()).getNumElements();
  auto packedType = RankedTensorType::get({total + 2}, f32);
  auto slice = [&](int64_t offset, int64_t size) {
    return std::make_tuple(SmallVector<OpFoldResult>{b.getIndexAttr(offset)},
                           SmallVector<OpFoldResult>{b.getIndexAttr(size)},
                           SmallVector<OpFoldResult>{b.getIndexAttr(1)});
  };
  Value packed = tensor::EmptyOp::create(b, loc, packedType.getShape(), f32);
  int64_t offset = 0;
  for (Value acc : accs) {
    auto type = cast<RankedTensorType>(acc.getType());
    auto [offs, sizes, strides] = slice(offset, type.getNumElements());
    packed = tensor::InsertSliceOp::create(b, loc, buildFlatten(b, loc, acc),
                                           packed, offs, sizes, strides);
    offset += type.getNumElements();
  }
  auto at = [&](int64_t i) -> SmallVector<Value> {
    return {arith::ConstantIndexOp::create(b, loc, i)};
  };
  packed = tensor::InsertOp::create(b, loc, lossSum, packed, at(total));
  packed = tensor::InsertOp::create(b, loc, count, packed, at(total + 1));
  Value reduced = AllReduceOp::create(
                      b,
                      NameLoc::get(b.getStringAttr("all_reduce_accumulators"),
                                   loc),
                      packedType, packed)
                      .getResult();
  offset = 0;
  for (Value &acc : accs) {
    auto type = cast<RankedTensorType>(acc.getType());
    auto flatType = RankedTensorType::get({type.getNumElements()}, f32);
    auto [offs, sizes, strides] = slice(offset, type.getNumElements());
    Value flat = tensor::ExtractSliceOp::create(b, loc, flatType, reduced,
                                                offs, sizes, strides);
    acc = type.getRank() == 1
              ? flat
              : tensor::ExpandShapeOp::create(
                    b, loc, type, flat,
                    SmallVector<ReassociationIndices>{llvm::to_vector(
                        llvm::seq<int64_t>(0, type.getRank()))})
                    .getResult();
    offset += type.getNumElements();
  }
  lossSum = tensor::ExtractOp::create(b, loc, reduced, at(total));
  count = tensor::ExtractOp::create(b, loc, reduced, at(total + 1));
}

/// The global L2 norm of the normalized gradient before clipping, Σ over
/// every accumulator of (acc / divisor)² in f64 (with loss scaling, +inf
/// where the divisor itself is not finite: count × loss scale past f32,
/// where 1 / divisor is 0 and the norm would read 0), and the clipping
/// coefficient when the step clips.
std::pair<Value, Value> buildNormAndClip(OpBuilder &b, Location loc,
                                         TrainStepOp step, ValueRange accs,
                                         Value divisor) {
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  Value invDivisor = arith::DivFOp::create(b, loc, one, divisor);
  Value sumSq = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  for (Value acc : accs)
    sumSq = arith::AddFOp::create(
        b, loc, sumSq, buildScaledSumOfSquares(b, loc, acc, invDivisor));
  Value norm = arith::TruncFOp::create(b, loc, b.getF32Type(),
                                       math::SqrtOp::create(b, loc, sumSq));
  if (step.hasLossScaling()) {
    Value inf = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(std::numeric_limits<float>::infinity()));
    Value divisorFinite =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, divisor, inf);
    norm = arith::SelectOp::create(b, loc, divisorFinite, norm, inf);
  }
  Value clip;
  if (auto maxNorm = step.getMaxGradNorm())
    clip = buildClipCoefficient(b, loc, norm, maxNorm->convertToDouble());
  return {norm, clip};
}

/// What the update needs besides the state.
struct UpdateInputs {
  SmallVector<Value> finalAccs, localAccs;
  Value divisor, clip, lr;
};

/// ema · d + param · (1 − d), elementwise: the weights' moving average after
/// an applied update.
Value buildMovingAverage(OpBuilder &b, Location loc, Value ema, Value param,
                         double decay) {
  return buildElementwise(
      b, loc, ValueRange{ema, param}, cast<RankedTensorType>(ema.getType()),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value d = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(decay));
        Value rest =
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0 - decay));
        Value kept = arith::MulFOp::create(nb, nl, a[0], d);
        Value added = arith::MulFOp::create(nb, nl, a[1], rest);
        return arith::AddFOp::create(nb, nl, kept, added);
      });
}

/// The deferred update: once per optimizer step, after the N-th
/// micro-batch; the only place that normalizes. Returns the new
/// parameters, states and accumulators (with `arenaUpdate`, the old
/// parameters and states: the runtime's arena kernels update).
SmallVector<Value> emitUpdates(OpBuilder &b, Location loc, TrainStepOp step,
                               const StepSignature &sig, const StepValues &v,
                               const UpdateInputs &in, bool arenaUpdate) {
  SmallVector<Value> updated(v.params);
  if (arenaUpdate) {
    llvm::append_range(updated, v.states);
    llvm::append_range(updated, in.finalAccs);
    return updated;
  }
  unsigned S = sig.statePerParam, optS = sig.optimizerStates();
  SmallVector<Value> newStates;
  for (auto [k, i] : llvm::enumerate(sig.trainable)) {
    ValueRange st = ValueRange(v.states).slice(k * S, S);
    SmallVector<Type> resultTypes(1 + optS, v.params[i].getType());
    Location updLoc =
        NameLoc::get(b.getStringAttr("update_" + sig.paramNames[i]), loc);
    auto upd = ApplyOptimizerOp::create(
        b, updLoc, resultTypes, step.getOptimizer(), v.params[i],
        in.finalAccs[k], st.take_front(optS), in.divisor, in.clip, in.lr,
        v.step, sig.paramNoWeightDecay[i]);
    updated[i] = upd.getNewParam();
    llvm::append_range(newStates, upd.getNewState());
    if (sig.ema)
      newStates.push_back(buildMovingAverage(b, updLoc, st.back(),
                                             upd.getNewParam(),
                                             sig.emaDecay));
  }
  llvm::append_range(updated, newStates);
  llvm::append_range(updated, in.localAccs);
  return updated;
}

/// With loss scaling: a non-finite value anywhere in the window's
/// accumulators (so in any micro-batch) makes the global norm non-finite,
/// or the unscaling divisor (count × scale) is not finite in f32, and the
/// window skips its update and zeroes its accumulators. Returns the
/// new state (as emitUpdates) and sets `skipped` (1.0 when skipped).
SmallVector<Value> emitUpdateOrSkip(OpBuilder &b, Location loc,
                                    TrainStepOp step,
                                    const StepSignature &sig,
                                    const StepValues &v,
                                    const UpdateInputs &in, Value norm,
                                    bool arenaUpdate, Value &skipped) {
  Value inf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(std::numeric_limits<float>::infinity()));
  // The norm is +inf also where the divisor count × scale left f32 before
  // the scaled sums did (buildNormAndClip): that window is skipped as an
  // overflow, and the scale backs off until the product is finite again.
  Value finite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, norm, inf);
  SmallVector<Type> types;
  for (ValueRange group : {ValueRange(v.params), ValueRange(v.states),
                           ValueRange(in.localAccs)})
    for (Value x : group)
      types.push_back(x.getType());
  auto ifOp = scf::IfOp::create(
      b, loc, finite,
      [&](OpBuilder &tb, Location tl) {
        scf::YieldOp::create(
            tb, tl, emitUpdates(tb, tl, step, sig, v, in, arenaUpdate));
      },
      [&](OpBuilder &eb, Location el) {
        SmallVector<Value> kept(v.params);
        llvm::append_range(kept, v.states);
        for (Value acc : in.localAccs) {
          Value zero =
              arith::ConstantOp::create(eb, el, eb.getF32FloatAttr(0.0));
          kept.push_back(
              linalg::FillOp::create(eb, el, zero, acc).getResult(0));
        }
        scf::YieldOp::create(eb, el, kept);
      });
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  skipped = arith::SelectOp::create(b, loc, finite, zero, one);
  return SmallVector<Value>(ifOp.getResults());
}

/// Writes the new state into the step's memrefs (parameters and states
/// unless the arena kernels update them; always the accumulators).
void writeBack(OpBuilder &b, Location loc, Block *entry,
               const StepSignature &sig, ArrayRef<Value> state,
               bool arenaUpdate) {
  auto materialize = [&](Value v, Value dest) {
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), v, dest, b.getUnitAttr(), b.getUnitAttr());
  };
  unsigned P = sig.numParams, T = sig.numTrainable, S = sig.statePerParam;
  for (auto [k, i] : llvm::enumerate(sig.trainable)) {
    if (!arenaUpdate) {
      materialize(state[i], entry->getArgument(sig.paramArg(i)));
      for (unsigned s = 0; s < S; ++s)
        materialize(state[P + k * S + s],
                    entry->getArgument(sig.stateArg(k, s)));
    }
    materialize(state[P + T * S + k], entry->getArgument(sig.accArg(k)));
  }
}

/// Writes the running statistics after the window into their memrefs.
void writeStatistics(OpBuilder &b, Location loc, Block *entry,
                     const StepSignature &sig, ArrayRef<Value> statistics) {
  for (unsigned q = 0; q < sig.numStatistics; ++q)
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), statistics[q],
        entry->getArgument(sig.statisticArg(q)), b.getUnitAttr(),
        b.getUnitAttr());
}

//===----------------------------------------------------------------------===//
// The step function, its resumable halves and the predict function
//===----------------------------------------------------------------------===//

/// The entry of a function with the step's arguments (and `extra` scalar
/// arguments after them): the arguments as tensors.
StepValues beginFunction(OpBuilder &b, Location loc, const StepSignature &sig,
                         StringRef name, ArrayRef<Type> extra,
                         ArrayRef<Type> results, Block *&entry) {
  func::FuncOp func = createStepFunction(b, loc, sig);
  func.setSymName(name);
  SmallVector<Type> inputs(func.getArgumentTypes());
  llvm::append_range(inputs, extra);
  SmallVector<DictionaryAttr> attrs;
  func.getAllArgAttrs(attrs);
  attrs.resize(inputs.size(), b.getDictionaryAttr({}));
  func.setType(b.getFunctionType(inputs, results));
  func.setAllArgAttrs(attrs);
  entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  return bindArguments(b, loc, entry, sig);
}

/// A low-precision body reads a copy of the parameters rounded once per
/// call, before its micro-batches.
SmallVector<Value> roundedParams(OpBuilder &b, Location loc,
                                 const StepValues &v, const CloneContext &ctx) {
  SmallVector<Value> params(v.params);
  if (ctx.computeType)
    for (Value &p : params)
      p = buildRoundToCompute(b, loc, p, ctx.computeType);
  return params;
}

/// After the N-th micro-batch, from the window's accumulators, loss sum and
/// (unless `sum`) count: the collective of a data-parallel step, the
/// divisor, the norm and clipping, the update (or the skip), the
/// write-back. Returns the step's results (abi::StepResult).
SmallVector<Value> emitOptimizerStep(OpBuilder &b, Location loc,
                                     TrainStepOp step, const StepSignature &sig,
                                     Block *entry, const StepValues &v,
                                     ValueRange windowAccs, Value lossSum,
                                     Value windowCount, bool arenaUpdate) {
  // This optimizer step's learning rate: the schedule moves once per
  // optimizer step, never per micro-batch.
  UpdateInputs in;
  in.lr = v.lr;
  if (auto schedule = step.getLrScheduleAttr())
    in.lr = buildScheduledLR(b, loc, schedule, v.lr, v.step);
  bool counted = bool(windowCount);
  if (!counted)
    windowCount = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  // The accumulators as the micro-batches left them (in their persistent
  // buffers), and the window's gradient sums the update reads: the same
  // values, or on a data-parallel step their sums over the ranks.
  in.localAccs.assign(windowAccs.begin(), windowAccs.end());
  in.finalAccs = in.localAccs;
  if (step.getDataParallel())
    reduceOverRanks(b, loc, in.finalAccs, lossSum, windowCount);
  // The window's normalization count: 1 for `sum`, otherwise what the
  // window really holds; with loss scaling the accumulators hold scaled
  // sums, and the unscaling is folded into the one division.
  Value count = counted
                    ? buildUpdateDivisor(b, loc, windowCount, Value())
                    : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0))
                          .getResult();
  in.divisor = v.lossScale
                   ? Value(arith::MulFOp::create(b, loc, count, v.lossScale))
                   : count;
  auto [norm, clip] = buildNormAndClip(b, loc, step, in.finalAccs, in.divisor);
  in.clip = clip;

  Value skipped;
  SmallVector<Value> state =
      v.lossScale ? emitUpdateOrSkip(b, loc, step, sig, v, in, norm,
                                     arenaUpdate, skipped)
                  : emitUpdates(b, loc, step, sig, v, in, arenaUpdate);
  writeBack(b, loc, entry, sig, state, arenaUpdate);
  Value objective = arith::DivFOp::create(b, loc, lossSum, count);
  // The count reported is the window's own (0 for a window without a
  // target), not the divisor it leads to; `sum` reports 1.
  SmallVector<Value> results = {objective, counted ? windowCount : count,
                                in.lr, norm};
  if (skipped)
    results.push_back(skipped);
  return results;
}

/// The step function @S: all N micro-batches, then the optimizer step.
LogicalResult buildStepFunction(TrainStepOp step, const StepSignature &sig,
                                bool unroll, bool arenaUpdate) {
  Location loc = step.getLoc();
  OpBuilder b(step);
  Block *entry;
  Type f32 = b.getF32Type();
  StepValues v =
      beginFunction(b, loc, sig, sig.name, {},
                    SmallVector<Type>(sig.numResults(), f32), entry);
  markComputePrecision(entry->getParentOp(), sig);
  RunningStatistics running(step, sig);
  CloneContext ctx = makeCloneContext(step, sig, v, running, b);
  SmallVector<Value> bodyParams = roundedParams(b, loc, v, ctx);
  bool counted = step.getNormalization() != Normalization::sum;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value n = arith::ConstantIndexOp::create(b, loc, sig.accumSteps);
  scf::ForOp loop = emitMicroBatchLoop(b, loc, step, bodyParams, v, ctx, c0,
                                       n, zero, counted ? zero : Value());
  PhaseBeginOp::create(b, loc, StepPhase::update);
  // The loop carries one accumulator per trainable parameter first.
  unsigned P = sig.numTrainable;
  ValueRange carried = loop.getResults();
  writeStatistics(
      b, loc, entry, sig,
      running.finish(b, loc,
                     carried.drop_front(firstRunningValue(P, counted))));
  func::ReturnOp::create(
      b, loc,
      emitOptimizerStep(b, loc, step, sig, entry, v, carried.take_front(P),
                        carried[P], counted ? carried[P + 1] : Value(),
                        arenaUpdate));
  // Fully unrolled on request: the loop's uses take the last iteration's
  // values, and each copy's `first` flag folds to a constant.
  if (!unroll)
    return success();
  if (failed(loopUnrollFull(loop)))
    return step.emitOpError("cannot unroll the micro-batch loop");
  // Folding alone (no patterns), without moving constants or touching
  // regions: the copies' induction variables and flags become constants.
  GreedyRewriteConfig fold;
  fold.enableConstantCSE(false).setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(*entry->getParent(), FrozenRewritePatternSet(),
                              fold);
  return success();
}

/// @S_accumulate(@S's arguments, begin: i64, end: i64, loss_sum: f32,
/// count: f32) -> (loss_sum, count): micro-batches [begin, end) of the
/// window into the accumulators, the same ops as @S's loop.
void buildAccumulateFunction(TrainStepOp step, const StepSignature &sig) {
  Location loc = step.getLoc();
  OpBuilder b(step);
  Block *entry;
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  StepValues v = beginFunction(b, loc, sig, sig.accumulateName(),
                               {i64, i64, f32, f32}, {f32, f32}, entry);
  markComputePrecision(entry->getParentOp(), sig);
  RunningStatistics running(step, sig);
  CloneContext ctx = makeCloneContext(step, sig, v, running, b);
  SmallVector<Value> bodyParams = roundedParams(b, loc, v, ctx);
  bool counted = step.getNormalization() != Normalization::sum;
  auto index = [&](Value x) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
  };
  Value begin = index(entry->getArgument(sig.beginArg()));
  Value end = index(entry->getArgument(sig.endArg()));
  Value countIn = entry->getArgument(sig.accumulateCountArg());
  scf::ForOp loop = emitMicroBatchLoop(
      b, loc, step, bodyParams, v, ctx, begin, end,
      entry->getArgument(sig.accumulateLossSumArg()),
      counted ? countIn : Value());
  unsigned P = sig.numTrainable;
  for (unsigned i = 0; i < P; ++i)
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), loop.getResult(i), entry->getArgument(sig.accArg(i)),
        b.getUnitAttr(), b.getUnitAttr());
  // Running statistics per micro-batch (a per_window step is not
  // resumable: its window's partial statistics live in the loop).
  writeStatistics(
      b, loc, entry, sig,
      running.finish(b, loc,
                     loop.getResults().drop_front(firstRunningValue(P,
                                                                    counted))));
  func::ReturnOp::create(
      b, loc,
      ValueRange{loop.getResult(P), counted ? loop.getResult(P + 1) : countIn});
}

/// @S_update(@S's arguments, loss_sum: f32, count: f32) -> @S's results:
/// the optimizer step after the N-th micro-batch, from the accumulators.
void buildUpdateFunction(TrainStepOp step, const StepSignature &sig,
                         bool arenaUpdate) {
  Location loc = step.getLoc();
  OpBuilder b(step);
  Block *entry;
  Type f32 = b.getF32Type();
  StepValues v = beginFunction(b, loc, sig, sig.updateName(), {f32, f32},
                               SmallVector<Type>(sig.numResults(), f32),
                               entry);
  bool counted = step.getNormalization() != Normalization::sum;
  PhaseBeginOp::create(b, loc, StepPhase::update);
  func::ReturnOp::create(
      b, loc,
      emitOptimizerStep(
          b, loc, step, sig, entry, v, v.accs,
          entry->getArgument(sig.updateLossSumArg()),
          counted ? entry->getArgument(sig.updateCountArg()) : Value(),
          arenaUpdate));
}

/// `func.func @S_predict(params…, running statistics…, inputs… but the
/// targets, %out)`: the loss op's prediction for one micro-batch, written
/// into %out, in evaluation (ops with batch statistics normalize by their
/// running statistics). Only what the
/// prediction depends on is cloned (its backward slice, values used inside
/// regions included).
LogicalResult buildPredictFunction(TrainStepOp step,
                                   const StepSignature &sig) {
  Location loc = step.getLoc();
  OpBuilder b(step);
  auto loss = step.getLoss().getDefiningOp<LossOpInterface>();
  SmallVector<Type> types;
  for (unsigned i = 0; i < sig.numParams; ++i)
    types.push_back(toMemRef(sig.paramTypes[i]));
  for (unsigned q = 0; q < sig.numStatistics; ++q)
    types.push_back(toMemRef(sig.statisticTypes[q]));
  for (unsigned j = 0; j < sig.inputTypes.size(); ++j)
    if (j != sig.targetInput)
      types.push_back(toMemRef(sig.inputTypes[j]));
  types.push_back(toMemRef(sig.predictionType));
  auto predict = func::FuncOp::create(b, loc, sig.predictName(),
                                      b.getFunctionType(types, {}));
  Block *entry = predict.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  unsigned argIdx = 0;
  for (BlockArgument arg : step.getParamArguments())
    mapping.map(arg, toTensor(b, loc, entry->getArgument(argIdx++), false));
  llvm::StringMap<Value> statistics;
  for (unsigned q = 0; q < sig.numStatistics; ++q)
    statistics[sig.statisticNames[q]] =
        toTensor(b, loc, entry->getArgument(argIdx++), false);
  for (auto [j, arg] : llvm::enumerate(step.getInputArguments())) {
    if (j != sig.targetInput) {
      mapping.map(arg, toTensor(b, loc, entry->getArgument(argIdx++), false));
      continue;
    }
    // No targets in evaluation: what reads them (the sample masks of
    // batch statistics) is not used by the evaluation forms and folds away.
    auto type = cast<RankedTensorType>(arg.getType());
    mapping.map(arg, tensor::EmptyOp::create(b, loc, type.getShape(),
                                             type.getElementType()));
  }
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.omitUsesFromAbove = false;
  options.inclusive = true;
  // What the prediction is computed from: the loss's operands (its
  // targets are a body argument, so nothing of the body computes them).
  for (Value operand : loss->getOperands())
    if (Operation *def = operand.getDefiningOp())
      if (failed(getBackwardSlice(def, &slice, options)))
        return step.emitOpError("cannot slice the prediction's computation");
  for (Operation &op : step.getBodyBlock().without_terminator()) {
    if (!slice.contains(&op))
      continue;
    Operation *clone = b.clone(op, mapping);
    // Random ops draw nothing in evaluation (dropout passes its input).
    if (auto random = dyn_cast<RandomOpInterface>(clone)) {
      Value inference = random.buildInference(b);
      mapping.map(op.getResult(0), inference);
      clone->erase();
      continue;
    }
    // Ops with batch statistics normalize by their running statistics.
    auto stats = dyn_cast<BatchStatisticsOpInterface>(clone);
    if (!stats)
      continue;
    SmallVector<Value> running;
    for (FlatSymbolRefAttr ref : stats.getRunningStatistics())
      running.push_back(statistics.lookup(ref.getValue()));
    Value inference = stats.buildInference(b, running);
    clone->getResult(0).replaceAllUsesWith(inference);
    mapping.map(op.getResult(0), inference);
    clone->erase();
  }
  SmallVector<Value> operands;
  for (Value operand : loss->getOperands())
    operands.push_back(mapping.lookup(operand));
  Value prediction = loss.buildPrediction(b, operands);
  bufferization::MaterializeInDestinationOp::create(
      b, loc, Type(), prediction, entry->getArgument(argIdx),
      b.getUnitAttr(), b.getUnitAttr());
  func::ReturnOp::create(b, loc);
  // What only the training forms read (the sample masks) is dead.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

struct ExpandAccumulationPass
    : public mlir::gacc::impl::GAccExpandAccumulationPassBase<
          ExpandAccumulationPass> {
  using Base::Base;

  /// per_window running statistics need the whole window in one loop and
  /// pooling over the ranks: refused where that does not hold (yet).
  LogicalResult checkRunningStatistics(TrainStepOp step,
                                       const StepSignature &sig) {
    if (!RunningStatistics(step, sig).hasPerWindow())
      return success();
    if (resumable)
      return step.emitOpError(
          "has per_window batch statistics, which the resumable step "
          "(checkpoints, --resume, --accum-schedule) does not support yet: "
          "the window's partial statistics live in the micro-batch loop");
    if (step.getDataParallel())
      return step.emitOpError(
          "has per_window batch statistics, which a data-parallel step does "
          "not pool over the ranks yet; use per_micro_batch");
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<TrainStepOp> steps(module.getOps<TrainStepOp>());
    for (TrainStepOp step : steps) {
      if (!step.isDifferentiated()) {
        step.emitOpError("has no gradients: run gacc-autodiff before "
                         "gacc-expand-accumulation");
        return signalPassFailure();
      }
      if (arenaUpdate && step.getEmaDecay()) {
        step.emitOpError("ema_decay with the arena update: the arena "
                         "kernels do not update the moving average yet "
                         "(run without --arena-update)");
        return signalPassFailure();
      }
      FailureOr<StepSignature> sig = getStepSignature(step);
      if (succeeded(sig) && failed(checkRunningStatistics(step, *sig)))
        return signalPassFailure();
      if (failed(sig) ||
          failed(buildStepFunction(step, *sig, unroll, arenaUpdate)) ||
          failed(buildPredictFunction(step, *sig)))
        return signalPassFailure();
      if (resumable) {
        buildAccumulateFunction(step, *sig);
        buildUpdateFunction(step, *sig, arenaUpdate);
      }
    }
    for (TrainStepOp step : steps)
      step.erase();
    // The parameters and statistics now live in the step function's
    // arguments (with their initializers as argument attributes).
    for (ParamOp p : llvm::make_early_inc_range(module.getOps<ParamOp>()))
      p.erase();
    for (StatisticOp s :
         llvm::make_early_inc_range(module.getOps<StatisticOp>()))
      s.erase();
  }
};

} // namespace
