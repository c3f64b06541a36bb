//===- ExpandAccumulation.cpp - gacc-expand-accumulation ------------------===//
//
// Turns a differentiated gacc.train_step into the function that runs one
// optimizer step (micro-batch loop, persistent accumulators, one deferred
// update normalized by a run-time count) and an inference function.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/StepSignature.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

#define DEBUG_TYPE "gacc-expand-accumulation"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCEXPANDACCUMULATIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

static MemRefType toMemRef(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// Clones the body for micro-batch `i` of the window (slicing each window
/// input at `i`) and returns the mapping of the body's values.
/// x rounded to `computeType` (bf16 or f16) and back to f32, elementwise:
/// the value a low-precision tensor would hold.
static Value roundToCompute(OpBuilder &b, Location loc, Value x,
                            FloatType computeType) {
  auto type = cast<RankedTensorType>(x.getType());
  return buildElementwise(
      b, loc, ValueRange{x}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value low = arith::TruncFOp::create(nb, nl, computeType, a[0]);
        return arith::ExtFOp::create(nb, nl, nb.getF32Type(), low);
      });
}

/// Whether a cloned op's f32 results are computed values that a
/// low-precision body rounds (not fills, reshapes or scalars).
static bool producesActivations(Operation *op) {
  return !isa<linalg::FillOp, tensor::EmptyOp, tensor::CollapseShapeOp,
              tensor::ExpandShapeOp, tensor::ExtractSliceOp, LossScaleOp>(op);
}

/// The context of one micro-batch's clone: the compute type (null for
/// fp32) with the values that stay fp32 (gradients, loss), and the
/// run-time loss scale.
struct CloneContext {
  FloatType computeType;
  llvm::DenseSet<Value> keepF32;
  Value lossScale;
};

static void cloneMicroBatch(OpBuilder &b, Location loc, TrainStepOp step,
                            ValueRange params, ValueRange windowInputs,
                            Value i, IRMapping &mapping,
                            const CloneContext &ctx) {
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
      slice = roundToCompute(b, loc, slice, ctx.computeType);
    mapping.map(arg, slice);
  }
  for (Operation &op : step.getBodyBlock().without_terminator()) {
    if (auto scale = dyn_cast<LossScaleOp>(op)) {
      mapping.map(scale.getResult(),
                  tensor::FromElementsOp::create(b, loc, scale.getType(),
                                                 ValueRange{ctx.lossScale}));
      continue;
    }
    b.clone(op, mapping);
    if (!ctx.computeType || !producesActivations(&op))
      continue;
    // Casts on use: every intermediate is rounded where it is produced.
    for (Value r : op.getResults()) {
      auto rt = dyn_cast<RankedTensorType>(r.getType());
      if (!rt || rt.getRank() == 0 || !rt.getElementType().isF32() ||
          ctx.keepF32.contains(r))
        continue;
      mapping.map(r, roundToCompute(b, loc, mapping.lookup(r),
                                    ctx.computeType));
    }
  }
}

/// One micro-batch: the body, then one gacc.accumulate per gradient.
/// Returns the new accumulators, the new loss sum and (unless the
/// normalization is `sum`) the new count.
static SmallVector<Value> emitMicroBatch(OpBuilder &b, Location loc,
                                        TrainStepOp step, ValueRange params,
                                        ValueRange windowInputs, Value i,
                                        Value first, ValueRange accs,
                                        Value lossSum, Value count,
                                        const CloneContext &ctx) {
  IRMapping mapping;
  cloneMicroBatch(b, loc, step, params, windowInputs, i, mapping, ctx);
  SmallVector<Value> results;
  for (auto [g, acc, name] :
       llvm::zip(step.getGradients(), accs, step.getParams())) {
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
  return results;
}

/// The one collective of a data-parallel step: packs the accumulators, the
/// loss sum and the count into one flat buffer [Σ|acc| + 2], sums it over
/// the ranks with gacc.all_reduce and unpacks the sums into `accs`,
/// `lossSum` and `count`.
static void reduceOverRanks(OpBuilder &b, Location loc,
                            SmallVectorImpl<Value> &accs, Value &lossSum,
                            Value &count) {
  Type f32 = b.getF32Type();
  int64_t total = 0;
  for (Value acc : accs)
    total += cast<RankedTensorType>(acc.getType()).getNumElements();
  auto packedType = RankedTensorType::get({total + 2}, f32);
  auto flatten = [](RankedTensorType t) {
    ReassociationIndices all;
    for (int64_t d = 0; d < t.getRank(); ++d)
      all.push_back(d);
    return SmallVector<ReassociationIndices>{all};
  };
  auto slice = [&](int64_t offset, int64_t size) {
    return std::make_tuple(SmallVector<OpFoldResult>{b.getIndexAttr(offset)},
                           SmallVector<OpFoldResult>{b.getIndexAttr(size)},
                           SmallVector<OpFoldResult>{b.getIndexAttr(1)});
  };
  Value packed = tensor::EmptyOp::create(b, loc, packedType.getShape(), f32);
  int64_t offset = 0;
  for (Value acc : accs) {
    auto type = cast<RankedTensorType>(acc.getType());
    Value flat = type.getRank() == 1
                     ? acc
                     : tensor::CollapseShapeOp::create(b, loc, acc,
                                                       flatten(type))
                           .getResult();
    auto [offs, sizes, strides] = slice(offset, type.getNumElements());
    packed = tensor::InsertSliceOp::create(b, loc, flat, packed, offs, sizes,
                                           strides);
    offset += type.getNumElements();
  }
  auto at = [&](int64_t i) -> SmallVector<Value> {
    return {arith::ConstantIndexOp::create(b, loc, i)};
  };
  packed = tensor::InsertOp::create(b, loc, lossSum, packed, at(total));
  packed = tensor::InsertOp::create(b, loc, count, packed, at(total + 1));
  Value reduced = AllReduceOp::create(
      b, NameLoc::get(b.getStringAttr("all_reduce_accumulators"), loc),
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
              : tensor::ExpandShapeOp::create(b, loc, type, flat,
                                              flatten(type))
                    .getResult();
    offset += type.getNumElements();
  }
  lossSum = tensor::ExtractOp::create(b, loc, reduced, at(total));
  count = tensor::ExtractOp::create(b, loc, reduced, at(total + 1));
}

static DictionaryAttr argAttr(OpBuilder &b, StringRef name, Attribute value) {
  return b.getDictionaryAttr(b.getNamedAttr(name, value));
}

static LogicalResult expandStep(TrainStepOp step, bool unroll,
                                bool arenaUpdate) {
  if (!step.isDifferentiated())
    return step.emitOpError("has no gradients: run gacc-autodiff before "
                            "gacc-expand-accumulation");
  FailureOr<StepSignature> sigOr = getStepSignature(step);
  if (failed(sigOr))
    return failure();
  const StepSignature &sig = *sigOr;
  Attribute optimizer = step.getOptimizer();
  Location loc = step.getLoc();
  OpBuilder b(step);
  MLIRContext *ctx = b.getContext();
  unsigned P = sig.numParams, S = sig.statePerParam;

  // --- The step function's signature.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  for (unsigned i = 0; i < P; ++i) {
    argTypes.push_back(toMemRef(sig.paramTypes[i]));
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("gacc.param",
                        FlatSymbolRefAttr::get(ctx, sig.paramNames[i])),
         b.getNamedAttr("gacc.initializer", sig.paramInits[i])}));
  }
  for (unsigned i = 0; i < P; ++i) {
    argTypes.push_back(toMemRef(sig.paramTypes[i]));
    argAttrs.push_back(argAttr(
        b, "gacc.accumulator", FlatSymbolRefAttr::get(ctx, sig.paramNames[i])));
  }
  for (unsigned i = 0; i < P; ++i)
    for (unsigned s = 0; s < S; ++s) {
      argTypes.push_back(toMemRef(sig.paramTypes[i]));
      argAttrs.push_back(
          argAttr(b, "gacc.optimizer_state",
                  FlatSymbolRefAttr::get(ctx, sig.paramNames[i])));
    }
  for (unsigned j = 0; j < sig.inputTypes.size(); ++j) {
    argTypes.push_back(sig.windowInputType(j));
    argAttrs.push_back(argAttr(b, "gacc.window_input", b.getI64IntegerAttr(j)));
  }
  // lr: f32, step: i64 (no attributes: scalar arguments keep theirs down
  // to LLVM IR, which has no use for them).
  argTypes.append({b.getF32Type(), b.getI64Type()});
  argAttrs.append(2, b.getDictionaryAttr({}));
  if (sig.lossScaling) {
    argTypes.push_back(b.getF32Type());
    argAttrs.push_back(b.getDictionaryAttr({}));
  }

  auto func = func::FuncOp::create(
      b, loc, sig.name,
      b.getFunctionType(argTypes,
                        SmallVector<Type>(sig.numResults(), b.getF32Type())));
  func.setAllArgAttrs(argAttrs);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  auto toTensor = [&](Value memref, bool writable) -> Value {
    auto mt = cast<MemRefType>(memref.getType());
    auto tt = RankedTensorType::get(mt.getShape(), mt.getElementType());
    return bufferization::ToTensorOp::create(b, loc, tt, memref,
                                             /*restrict=*/true, writable);
  };
  SmallVector<Value> params, accs, states, inputs;
  for (unsigned i = 0; i < P; ++i)
    params.push_back(toTensor(entry->getArgument(i), true));
  // A low-precision body reads a copy of the parameters rounded once per
  // optimizer step, before the micro-batch loop.
  CloneContext clone;
  if (sig.precision == Precision::bf16)
    clone.computeType = b.getBF16Type();
  else if (sig.precision == Precision::fp16)
    clone.computeType = b.getF16Type();
  SmallVector<Value> bodyParams(params);
  if (clone.computeType)
    for (Value &p : bodyParams)
      p = roundToCompute(b, loc, p, clone.computeType);
  for (Value g : step.getGradients())
    clone.keepF32.insert(g);
  clone.keepF32.insert(step.getLoss());
  Value lossScale;
  if (sig.lossScaling)
    lossScale = clone.lossScale = entry->getArgument(sig.lossScaleArg());
  for (unsigned i = 0; i < P; ++i)
    accs.push_back(toTensor(entry->getArgument(sig.accArg(i)), true));
  for (unsigned i = 0; i < P; ++i)
    for (unsigned s = 0; s < S; ++s)
      states.push_back(toTensor(entry->getArgument(sig.stateArg(i, s)), true));
  for (unsigned j = 0; j < sig.inputTypes.size(); ++j)
    inputs.push_back(toTensor(entry->getArgument(sig.inputArg(j)), false));
  Value stepIdx = entry->getArgument(sig.stepArg());
  // This optimizer step's learning rate: the schedule moves once per
  // optimizer step, never per micro-batch.
  Value lr = entry->getArgument(sig.lrArg());
  if (auto schedule = step.getLrScheduleAttr())
    lr = buildScheduledLR(b, loc, schedule, lr, stepIdx);

  // --- The micro-batch loop. Carried: accumulators, the loss sum and,
  // unless the normalization is `sum`, the window's count.
  bool counted = step.getNormalization() != Normalization::sum;
  Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<Value> carried(accs);
  carried.push_back(zeroF);
  if (counted)
    carried.push_back(zeroF);
  auto microBatch = [&](OpBuilder &mb, Location ml, Value i, Value first,
                        ValueRange iter) {
    return emitMicroBatch(mb, ml, step, bodyParams, inputs, i, first,
                          iter.take_front(P), iter[P],
                          counted ? iter[P + 1] : Value(), clone);
  };
  if (unroll) {
    for (int64_t k = 0; k < sig.accumSteps; ++k) {
      Value i = arith::ConstantIndexOp::create(b, loc, k);
      Value first = arith::ConstantOp::create(b, loc, b.getBoolAttr(k == 0));
      carried = microBatch(b, loc, i, first, carried);
    }
  } else {
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    Value n = arith::ConstantIndexOp::create(b, loc, sig.accumSteps);
    auto loop = scf::ForOp::create(
        b, loc, c0, n, c1, carried,
        [&](OpBuilder &lb, Location ll, Value i, ValueRange iter) {
          Value first =
              arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::eq, i, c0);
          scf::YieldOp::create(lb, ll, microBatch(lb, ll, i, first, iter));
        });
    carried.assign(loop.getResults().begin(), loop.getResults().end());
  }
  // The accumulators as the loop left them (in their persistent buffers),
  // and the window's gradient sums the update reads: the same values, or
  // on a data-parallel step their sums over the ranks.
  SmallVector<Value> localAccs(ValueRange(carried).take_front(P));
  SmallVector<Value> finalAccs(localAccs);
  Value lossSum = carried[P];
  Value windowCount = counted ? carried[P + 1] : zeroF;
  if (step.getDataParallel())
    reduceOverRanks(b, loc, finalAccs, lossSum, windowCount);
  // The window's normalization count: 1 for `sum`; otherwise what the
  // window really holds, at least 1 (a window of padding only then adds a
  // zero gradient instead of dividing by zero).
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  Value count = counted ? Value(arith::MaximumFOp::create(b, loc,
                                                          windowCount, one))
                        : one;

  // --- The global L2 norm of the normalized gradient (before clipping),
  // and the clipping coefficient min(1, max_norm / (norm + 1e-6)) of
  // torch.nn.utils.clip_grad_norm_.
  // With loss scaling the accumulators hold scaled sums: unscaling is
  // folded into the one division (count · scale).
  Value divisor = lossScale ? Value(arith::MulFOp::create(b, loc, count,
                                                          lossScale))
                            : count;
  Value invCount = arith::DivFOp::create(b, loc, one, divisor);
  Value sumSq = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  for (unsigned i = 0; i < P; ++i)
    sumSq = arith::AddFOp::create(
        b, loc, sumSq, buildScaledSumOfSquares(b, loc, finalAccs[i], invCount));
  Value norm = arith::TruncFOp::create(b, loc, b.getF32Type(),
                                       math::SqrtOp::create(b, loc, sumSq));
  Value clip;
  if (auto maxNorm = step.getMaxGradNorm()) {
    Value maxV = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(maxNorm->convertToDouble()));
    Value eps = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1e-6));
    clip = arith::MinimumFOp::create(
        b, loc, one,
        arith::DivFOp::create(b, loc, maxV,
                              arith::AddFOp::create(b, loc, norm, eps)));
  }

  // --- The deferred update: once per optimizer step, after the N-th
  // micro-batch; the only place that normalizes.
  auto emitUpdates = [&](OpBuilder &ub, Location ul) {
    SmallVector<Value> updated; // params, states, accumulators
    if (arenaUpdate) {
      // The runtime's arena update follows: parameters and state are left
      // as they are, the accumulators hold the window's (reduced) sums.
      llvm::append_range(updated, params);
      llvm::append_range(updated, states);
      llvm::append_range(updated, finalAccs);
      return updated;
    }
    SmallVector<Value> newStates;
    for (unsigned i = 0; i < P; ++i) {
      ValueRange st = ValueRange(states).slice(i * S, S);
      SmallVector<Type> resultTypes(1 + S, params[i].getType());
      Location updLoc =
          NameLoc::get(ub.getStringAttr("update_" + sig.paramNames[i]), ul);
      auto upd = ApplyOptimizerOp::create(
          ub, updLoc, resultTypes, optimizer, params[i], finalAccs[i], st,
          divisor, clip, lr, stepIdx, sig.paramNoWeightDecay[i]);
      updated.push_back(upd.getNewParam());
      llvm::append_range(newStates, upd.getNewState());
    }
    llvm::append_range(updated, newStates);
    llvm::append_range(updated, localAccs);
    return updated;
  };
  SmallVector<Value> finalState;
  Value foundInf;
  if (lossScale) {
    // A non-finite value anywhere in the window's accumulators (so in any
    // micro-batch) makes the global norm non-finite: skip the update and
    // zero the accumulators.
    Value inf = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(std::numeric_limits<float>::infinity()));
    Value finite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                         norm, inf);
    SmallVector<Type> types;
    for (Value v : params)
      types.push_back(v.getType());
    for (Value v : states)
      types.push_back(v.getType());
    for (Value v : localAccs)
      types.push_back(v.getType());
    auto ifOp = scf::IfOp::create(
        b, loc, finite,
        [&](OpBuilder &tb, Location tl) {
          scf::YieldOp::create(tb, tl, emitUpdates(tb, tl));
        },
        [&](OpBuilder &eb, Location el) {
          SmallVector<Value> kept(params);
          llvm::append_range(kept, states);
          for (Value acc : localAccs) {
            Value zero = arith::ConstantOp::create(eb, el,
                                                   eb.getF32FloatAttr(0.0));
            kept.push_back(linalg::FillOp::create(eb, el, zero, acc)
                               .getResult(0));
          }
          scf::YieldOp::create(eb, el, kept);
        });
    finalState.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    Value zeroF32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    foundInf = arith::SelectOp::create(b, loc, finite, zeroF32, one);
  } else {
    finalState = emitUpdates(b, loc);
  }
  auto materialize = [&](Value v, Value dest) {
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), v, dest, b.getUnitAttr(), b.getUnitAttr());
  };
  for (unsigned i = 0; i < P; ++i) {
    if (!arenaUpdate) {
      materialize(finalState[i], entry->getArgument(i));
      for (unsigned s = 0; s < S; ++s)
        materialize(finalState[P + i * S + s],
                    entry->getArgument(sig.stateArg(i, s)));
    }
    materialize(finalState[P + P * S + i], entry->getArgument(sig.accArg(i)));
  }
  Value objective = arith::DivFOp::create(b, loc, lossSum, count);
  SmallVector<Value> results = {objective, count, lr, norm};
  if (foundInf)
    results.push_back(foundInf);
  func::ReturnOp::create(b, loc, results);

  // --- The inference function: the loss op's prediction for one
  // micro-batch, written into the last argument.
  b.setInsertionPoint(step);
  auto lossOp = step.getLoss().getDefiningOp<LossOpInterface>();
  Value prediction = lossOp.getPrediction();
  SmallVector<Type> predTypes;
  for (unsigned i = 0; i < P; ++i)
    predTypes.push_back(toMemRef(sig.paramTypes[i]));
  for (unsigned j = 0; j < sig.inputTypes.size(); ++j)
    if (j != sig.targetInput)
      predTypes.push_back(toMemRef(sig.inputTypes[j]));
  predTypes.push_back(toMemRef(sig.predictionType));
  auto predict = func::FuncOp::create(b, loc, sig.predictName(),
                                      b.getFunctionType(predTypes, {}));
  Block *pEntry = predict.addEntryBlock();
  b.setInsertionPointToStart(pEntry);
  IRMapping mapping;
  unsigned argIdx = 0;
  for (BlockArgument arg : step.getParamArguments())
    mapping.map(arg, toTensor(pEntry->getArgument(argIdx++), false));
  for (auto [j, arg] : llvm::enumerate(step.getInputArguments()))
    if (j != sig.targetInput)
      mapping.map(arg, toTensor(pEntry->getArgument(argIdx++), false));
  // Clone only what the prediction depends on.
  llvm::DenseSet<Operation *> needed;
  if (Operation *def = prediction.getDefiningOp())
    needed.insert(def);
  for (Operation &op : llvm::reverse(step.getBodyBlock().without_terminator()))
    if (needed.contains(&op))
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp())
          needed.insert(def);
  for (Operation &op : step.getBodyBlock().without_terminator())
    if (needed.contains(&op))
      b.clone(op, mapping);
  bufferization::MaterializeInDestinationOp::create(
      b, loc, Type(), mapping.lookup(prediction), pEntry->getArgument(argIdx),
      b.getUnitAttr(), b.getUnitAttr());
  func::ReturnOp::create(b, loc);
  return success();
}

struct ExpandAccumulationPass
    : public mlir::gacc::impl::GAccExpandAccumulationPassBase<ExpandAccumulationPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<TrainStepOp> steps;
    module.walk([&](TrainStepOp s) { steps.push_back(s); });
    for (TrainStepOp step : steps)
      if (failed(expandStep(step, unroll, arenaUpdate)))
        return signalPassFailure();
    for (TrainStepOp step : steps)
      step.erase();
    // The parameters now live in the step function's arguments (with their
    // initializers as argument attributes).
    for (ParamOp p : llvm::make_early_inc_range(module.getOps<ParamOp>()))
      p.erase();
  }
};

} // namespace
