//===- GAccOps.cpp - gacc op verifiers, type inference, helpers -----------===//
//
// Verifiers (one clear message per rule), result-type inference of the layer
// ops, the memory effects of gacc.matmul_accumulate and the helpers of
// gacc.train_step. Adjoints live in GAccAdjoints.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <charconv>

using namespace mlir;
using namespace mlir::gacc;

static bool isStaticF32Tensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getElementType().isF32();
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

/// The largest tensor a training step may hold, in bytes (1 TiB: more than
/// any device or host this runs on, far below where element counts overflow).
static constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 40;

/// Checks that `type` (a statically shaped tensor) holds at least one element
/// and at most kMaxTensorBytes; `what` names the value in the error.
static LogicalResult verifyTensorExtent(Operation *op, RankedTensorType type,
                                        const Twine &what) {
  uint64_t bytes = std::max<uint64_t>(
      1, type.getElementType().isIntOrFloat()
             ? type.getElementType().getIntOrFloatBitWidth() / 8
             : 8);
  bool overflow = false;
  for (int64_t dim : type.getShape()) {
    if (dim == 0)
      return op->emitOpError() << what << " has no elements (" << type
                               << "): every tensor of a training step needs "
                                  "at least one";
    bytes = llvm::SaturatingMultiply<uint64_t>(bytes, dim, &overflow);
  }
  if (overflow || bytes > kMaxTensorBytes)
    return op->emitOpError()
           << what << " (" << type << ") is larger than "
           << (kMaxTensorBytes >> 30) << " GiB";
  return success();
}

/// What gacc.param and gacc.statistic check: a static f32 tensor within
/// the size limit and a gacc initializer.
static LogicalResult verifyPersistentTensor(Operation *op, StringRef what,
                                            Type type, Attribute init) {
  if (!isStaticF32Tensor(type))
    return op->emitOpError()
           << what << " type must be a statically shaped f32 tensor, got "
           << type;
  if (failed(verifyTensorExtent(op, cast<RankedTensorType>(type), what)))
    return failure();
  if (!isa<InitializerAttrInterface>(init))
    return op->emitOpError("initializer must be #gacc.zeros, #gacc.constant, "
                           "#gacc.uniform, #gacc.normal or "
                           "#gacc.kaiming_uniform, got ")
           << init;
  return success();
}

LogicalResult mlir::gacc::verifyNoUnknownAttributes(Operation *op) {
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    if (attr.getName().getValue().contains('.'))
      continue;
    InFlightDiagnostic diag = op->emitOpError("has no attribute '")
                              << attr.getName().getValue() << "'";
    SmallVector<StringAttr> known;
    if (std::optional<RegisteredOperationName> info = op->getRegisteredInfo())
      for (StringAttr name : info->getAttributeNames())
        if (name.getValue() != "operandSegmentSizes" &&
            name.getValue() != "resultSegmentSizes")
          known.push_back(name);
    if (known.empty()) {
      diag << " (it takes none)";
      return diag;
    }
    diag << " (it takes ";
    llvm::interleave(
        known, diag, [&](StringAttr name) { diag << name.getValue(); }, ", ");
    return diag << ")";
  }
  return success();
}

LogicalResult mlir::gacc::verifyFiniteF32(
    function_ref<InFlightDiagnostic()> emitError, StringRef attr,
    ArrayRef<std::pair<StringRef, llvm::APFloat>> values) {
  for (const auto &[name, value] : values) {
    double v = value.convertToDouble();
    if (!isFiniteF32(v))
      return emitError() << attr << " needs a finite " << name
                         << " (in f32), got " << v;
    APFloat single = value;
    bool losesInfo = false;
    single.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                   &losesInfo);
    if (!value.isZero() && single.isZero()) {
      InFlightDiagnostic diag = emitError()
                                << attr << " needs " << name
                                << " to be a value that f32 holds, got " << v
                                << ", which rounds to 0 in f32";
      // An f32 bit pattern written in hexadecimal reads as a tiny f64.
      if (value.isDenormal())
        diag << " (a hexadecimal literal holds the bits of an f64)";
      return diag;
    }
  }
  return success();
}

LogicalResult mlir::gacc::verifyRangeInF32(
    function_ref<InFlightDiagnostic()> emitError, StringRef attr,
    StringRef name, const APFloat &value, double lo, double hi, Interval ends) {
  bool closedLo = ends == Interval::Closed || ends == Interval::ClosedOpen;
  bool closedHi = ends == Interval::Closed || ends == Interval::OpenClosed;
  auto inside = [&](double v) {
    return (closedLo ? v >= lo : v > lo) && (closedHi ? v <= hi : v < hi);
  };
  // The shortest text that reads back as the value (1, 0.99999999999).
  auto text = [](auto v) {
    char buffer[32];
    return std::string(buffer, std::to_chars(buffer, buffer + 32, v).ptr);
  };
  double v = value.convertToDouble();
  float single = float(v);
  if (inside(v) && inside(single))
    return success();
  InFlightDiagnostic diag =
      emitError() << attr << (attr.empty() ? "" : " ") << "needs " << name
                  << " in " << (closedLo ? "[" : "(") << text(lo) << ", "
                  << text(hi) << (closedHi ? "]" : ")") << ", got " << text(v);
  if (inside(v))
    diag << ", which is " << text(single) << " in f32, where the step computes";
  return diag;
}

LogicalResult mlir::gacc::verifyIgnoreIndex(Operation *op, int64_t ignoreIndex,
                                            ShapedType labels) {
  unsigned width = labels.getElementTypeBitWidth();
  if (width < 64 && !llvm::isIntN(width, ignoreIndex))
    return op->emitOpError("ignore_index ")
           << ignoreIndex << " is not a value of the labels' element type "
           << labels.getElementType();
  return success();
}

LogicalResult ParamOp::verify() {
  return verifyPersistentTensor(*this, "parameter", getType(),
                                getInitializer());
}

LogicalResult StatisticOp::verify() {
  return verifyPersistentTensor(*this, "statistic", getType(),
                                getInitializer());
}

LogicalResult LossScaleOp::verify() {
  if (!(*this)->getParentOfType<TrainStepOp>().hasLossScaling())
    return emitOpError("reads the dynamic loss scale of a step with "
                       "loss_scaling; this step has none");
  return success();
}

//===----------------------------------------------------------------------===//
// TrainStepOp
//===----------------------------------------------------------------------===//

/// The yielded loss of `step` is a loss op's result, whose targets are an
/// input of the body: an error at the gacc.yield naming what produces the
/// loss otherwise, or at the loss op.
static LogicalResult verifyLossOp(TrainStepOp step) {
  if (LossOpInterface lossOp = step.getLossOp()) {
    // The runtime fills the targets from the data and pads them with the
    // ignore_index: they are one of the step's inputs.
    auto target = dyn_cast<BlockArgument>(lossOp.getTargets());
    if (target && target.getOwner() == &step.getBodyBlock() &&
        target.getArgNumber() >= step.getParams().size())
      return success();
    return lossOp->emitOpError(
        "takes its targets from a value computed in the body; they must be "
        "an input of the body (a block argument after the parameters), "
        "which gacc-run fills with the data's targets and pads with the "
        "ignore_index (give the targets as their own input, e.g. the "
        "next tokens beside the tokens)");
  }
  Value loss = step.getLoss();
  InFlightDiagnostic diag = step.getBodyBlock().getTerminator()->emitOpError(
      "the yielded loss must be produced by a loss op (an op "
      "implementing LossOpInterface, such as gacc.cross_entropy), which "
      "defines the step's prediction, targets and padding; it is ");
  Operation *def = loss.getDefiningOp();
  if (!def)
    return diag << "a block argument";
  diag << "the result of '" << def->getName() << "'";
  // What a user means by computing on the loss.
  if (def->getNumOperands() > 0)
    diag << " (nothing is computed on the loss op's result: a term added "
            "is not supported, weight decay is the optimizer's; the loss's "
            "normalization is the step's `normalization`, its scale the "
            "learning rate's)";
  return diag;
}

LogicalResult TrainStepOp::verify() {
  // The name becomes those of the compiled functions and kernels
  // (@s_predict, s_kernel), which PTX and the JIT look up as identifiers.
  StringRef name = getSymName();
  if (name.empty() || llvm::isDigit(name.front()) ||
      !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    // Printed as a symbol reference: MLIR escapes what is not printable.
    return emitOpError("name ")
           << FlatSymbolRefAttr::get(getSymNameAttr())
           << " must be an identifier (letters, digits and '_', not "
              "starting with a digit): it names the compiled functions and "
              "GPU kernels";
  // I64Attr getters return uint64_t: read them as the signed values.
  int64_t n = getAccumStepsAttr().getInt(), m = getMicroBatchAttr().getInt();
  // As --seed, which overrides it: -7 would read as 2^64 - 7.
  if (getSeedAttr().getInt() < 0)
    return emitOpError("seed must be >= 0, got ") << getSeedAttr().getInt();
  if (n <= 0)
    return emitOpError("accum_steps must be positive, got ") << n;
  if (m <= 0)
    return emitOpError("micro_batch must be positive, got ") << m;
  // The window's samples N·m within int64 (its inputs are bounded below).
  if (!llvm::checkedMul(n, m))
    return emitOpError("accum_steps × micro_batch (")
           << n << " × " << m << ") overflows int64";
  // The last micro-batch of a window may be ragged: (N - 1)·m < E ≤ N·m.
  if (auto effAttr = getEffectiveBatchAttr())
    if (effAttr.getInt() > n * m || effAttr.getInt() <= (n - 1) * m)
      return emitOpError("effective_batch (")
             << effAttr.getInt() << ") must be in ((accum_steps - 1) × "
             << "micro_batch, accum_steps × micro_batch] = (" << (n - 1) * m
             << ", " << n * m << "]: " << n * m << " = " << n << " × " << m
             << ", or fewer with a ragged last micro-batch";
  if (!isa<OptimizerAttrInterface>(getOptimizer()))
    return emitOpError("optimizer must be #gacc.sgd, #gacc.adam, #gacc.adamw "
                       "or #gacc.lion, got ")
           << getOptimizer();
  if (auto schedule = getLrScheduleAttr()) {
    double lr =
        cast<OptimizerAttrInterface>(getOptimizer()).getDefaultLearningRate();
    if (schedule.getMinLr().convertToDouble() > lr)
      return emitOpError("lr_schedule's min_lr (")
             << schedule.getMinLr().convertToDouble()
             << ") exceeds the optimizer's lr (" << lr
             << "): a decay would raise the rate";
  }
  // 1e-50 is 0 in f32: a clipping coefficient of 0, and no update.
  if (auto norm = getMaxGradNorm())
    if (failed(verifyRangeInF32(
            [&] { return emitOpError(); }, "", "max_grad_norm", *norm, 0,
            std::numeric_limits<double>::infinity(), Interval::Open)))
      return failure();
  if (auto decay = getEmaDecay())
    if (failed(verifyRangeInF32([&] { return emitOpError(); }, "", "ema_decay",
                                *decay, 0, 1, Interval::ClosedOpen)))
      return failure();
  return success();
}

LogicalResult TrainStepOp::verifyRegions() {
  Block &body = getBodyBlock();
  unsigned numParams = getNumParams();
  if (body.getNumArguments() < numParams + 1)
    return emitOpError("body needs one argument per parameter (")
           << numParams << ") followed by at least one input, got "
           << body.getNumArguments() << " arguments";
  for (BlockArgument arg : body.getArguments()) {
    if (!arg.use_empty())
      continue;
    if (arg.getArgNumber() < numParams)
      return emitOpError("parameter ")
             << getParams()[arg.getArgNumber()]
             << " is never used by the body";
    return emitOpError("input #")
           << arg.getArgNumber() - numParams << " is never used by the body";
  }
  for (BlockArgument arg : getInputArguments()) {
    auto rt = dyn_cast<RankedTensorType>(arg.getType());
    if (!rt || rt.getRank() < 1 || !rt.hasStaticShape())
      return emitOpError("input #")
             << arg.getArgNumber() - numParams
             << " must be a statically shaped tensor with a leading "
                "micro-batch dimension, got "
             << arg.getType();
    if (!rt.isDynamicDim(0) &&
        rt.getDimSize(0) != getMicroBatchAttr().getInt())
      return emitOpError("input #")
             << arg.getArgNumber() - numParams << " (body argument #"
             << arg.getArgNumber() << "; `params` names " << numParams
             << ") has leading dimension " << rt.getDimSize(0)
             << " but micro_batch is " << getMicroBatch();
    Type elem = rt.getElementType();
    if (!elem.isF32() && !elem.isInteger(32) && !elem.isInteger(64))
      return emitOpError("input #")
             << arg.getArgNumber() - numParams
             << " has element type " << elem
             << ": data sets feed f32 features or i32/i64 labels and token "
                "ids; convert inside the body (arith.truncf, arith.extf)";
    if (failed(verifyTensorExtent(
            *this, rt,
            "input #" + Twine(arg.getArgNumber() - numParams))))
      return failure();
    // Its window, [accum_steps] + the micro-batch's shape, is one buffer.
    SmallVector<int64_t> window = {getAccumStepsAttr().getInt()};
    llvm::append_range(window, rt.getShape());
    if (failed(verifyTensorExtent(
            *this, RankedTensorType::get(window, rt.getElementType()),
            "the window of input #" + Twine(arg.getArgNumber() - numParams))))
      return failure();
  }
  // Every tensor the body computes is ranked and, where its shape is static,
  // of a size the step can allocate. A dynamic shape is a tensor.cast's,
  // cast back before any other op reads it (a round trip, sized by the
  // static values it comes from): the adjoints and the buffers are built
  // for static shapes.
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults()) {
      if (isa<UnrankedTensorType>(result.getType()))
        return op.emitOpError("result #")
               << cast<OpResult>(result).getResultNumber()
               << " is an unranked tensor; a training step needs static "
                  "shapes";
      auto rt = dyn_cast<RankedTensorType>(result.getType());
      if (!rt)
        continue;
      if (!rt.hasStaticShape()) {
        if (!isa<tensor::CastOp>(op))
          return op.emitOpError("result #")
                 << cast<OpResult>(result).getResultNumber() << " has the "
                 << "dynamic shape " << rt
                 << "; a training step computes on static shapes (only a "
                    "tensor.cast may make one, to be cast back)";
        // The static type the chain of casts started from (4x3 in 4x3 ->
        // ?x3 -> ?x? -> 4x3): only casts make dynamic shapes here.
        Value origin = op.getOperand(0);
        while (auto rtOrigin = dyn_cast<RankedTensorType>(origin.getType())) {
          auto previous = origin.getDefiningOp<tensor::CastOp>();
          if (rtOrigin.hasStaticShape() || !previous)
            break;
          origin = previous.getSource();
        }
        Type source = origin.getType();
        for (Operation *user : result.getUsers()) {
          if (!isa<tensor::CastOp>(user))
            return user->emitOpError("reads the dynamic shape ")
                   << rt
                   << " of a tensor.cast; a training step computes on "
                      "static shapes: cast it back first";
          // Back to the shape it came from: another one (4x3 through ?x3
          // to 5x3) would read elements that are not there. A cast to
          // another dynamic shape is checked where it is defined.
          auto castType =
              dyn_cast<RankedTensorType>(user->getResult(0).getType());
          if (castType && castType.hasStaticShape() && castType != source)
            return user->emitOpError("casts ")
                   << source << " through " << rt << " to "
                   << user->getResult(0).getType()
                   << "; a training step casts a dynamic shape back to the "
                      "type it came from";
        }
        continue;
      }
      if (failed(verifyTensorExtent(
              &op, rt,
              "result #" + Twine(cast<OpResult>(result).getResultNumber()))))
        return failure();
    }
  // tensor.expand_shape's own verifier does not hold its static
  // output_shape to its result type; bufferization's memref.expand_shape
  // does, far from the model and once per function that clones the op.
  for (Operation &op : body.without_terminator())
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(&op))
      for (auto [i, size, extent] :
           llvm::enumerate(expand.getStaticOutputShape(),
                           expand.getResultType().getShape()))
        if (ShapedType::isStatic(size) && ShapedType::isStatic(extent) &&
            size != extent)
          return op.emitOpError("output_shape[")
                 << i << "] is " << size << " but the result type "
                 << expand.getResultType() << " has " << extent;
  // Ops that depend on the whole batch must say how they accumulate.
  for (Operation &op : body.without_terminator())
    if (auto stats = dyn_cast<BatchStatisticsOpInterface>(&op))
      if (!stats.getDeclaredBatchStatistics())
        return op.emitOpError(
                   "depends on statistics of the whole batch but declares no "
                   "accumulation across micro-batches; add batch_statistics = "
                   "#gacc.batch_statistics<per_micro_batch> (PyTorch's "
                   "behaviour, accepted knowingly) or <per_window> (running "
                   "statistics of the whole window)");
  // Nothing else mixes the samples of the micro-batch before the loss.
  if (failed(verifySampleIndependence(*this)) ||
      failed(verifyNoUndefinedReads(*this)))
    return failure();
  // The random ops of the forward draw distinct streams (an adjoint or a
  // recomputed clone in the backward draws its op's stream again).
  llvm::SmallDenseMap<int64_t, Operation *> streams;
  for (Operation &op : getForwardOps()) {
    auto random = dyn_cast<RandomOpInterface>(&op);
    if (!random)
      continue;
    if (random.hasRandomKey())
      return op.emitOpError("has a random key in a training step's body; "
                            "gacc-expand-accumulation binds it from the "
                            "seed, the optimizer step and the samples");
    auto [it, inserted] = streams.try_emplace(random.getRandomStream(), &op);
    if (!inserted)
      return op.emitOpError("draws random stream ")
             << random.getRandomStream()
             << ", as does the op at " << it->second->getLoc()
             << ": its masks would repeat; give each random op of the "
                "model its own `stream`";
  }
  // The gradients (one per trainable parameter) are checked with the
  // parameters they belong to, in verifySymbolUses.
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getNumOperands() == 0)
    return yield.emitOpError("must yield the micro-batch loss "
                             "(tensor<f32>), got no values");
  // A micro-batch's forward and the update are marked by
  // gacc-expand-accumulation around the body, never in it.
  auto markers = body.getOps<PhaseBeginOp>();
  for (PhaseBeginOp marker : markers)
    if (marker.getPhase() != StepPhase::backward)
      return marker.emitOpError("marks the ")
             << stringifyStepPhase(marker.getPhase())
             << " in a training step's body; gacc-expand-accumulation "
                "places the forward and update markers around the body, "
                "which marks only its backward (gacc-autodiff's marker)";
  // A model's body (it yields only the loss) has no backward yet.
  if (yield.getNumOperands() == 1)
    for (Operation &op : body.without_terminator())
      if (op.hasTrait<BuiltByAutodiff>())
        return op.emitOpError("is built by gacc-autodiff into the backward; "
                              "a model does not write it");
  // A differentiated body has one backward, after the loss it
  // differentiates: the checks of the forward (getForwardOps) see the
  // whole model.
  if (!markers.empty()) {
    PhaseBeginOp backward = *markers.begin();
    if (auto second = std::next(markers.begin()); second != markers.end())
      return (*second).emitOpError("begins a second backward; gacc-autodiff "
                                   "places one, after the forward");
    Operation *lossOp = yield.getOperand(0).getDefiningOp();
    if (lossOp && lossOp->getBlock() == &body &&
        !lossOp->isBeforeInBlock(backward))
      return backward.emitOpError("begins the backward before the loss it "
                                  "differentiates (at ")
             << lossOp->getLoc() << ") is computed";
  }
  auto lossType = dyn_cast<RankedTensorType>(yield.getOperand(0).getType());
  if (!lossType || lossType.getRank() != 0 ||
      !lossType.getElementType().isF32())
    return yield.emitOpError("loss must be a scalar tensor<f32>, got ")
           << yield.getOperand(0).getType();
  return verifyLossOp(*this);
}

LogicalResult
TrainStepOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // Each running statistic belongs to one op of the forward (a clone
  // recomputed in the backward reads the same ones).
  llvm::SmallDenseMap<Attribute, Operation *> owner;
  for (Operation &op : getForwardOps()) {
    if (auto stats = dyn_cast<BatchStatisticsOpInterface>(&op))
      for (FlatSymbolRefAttr ref : stats.getRunningStatistics()) {
        auto [it, first] = owner.try_emplace(ref, &op);
        if (first)
          continue;
        // A statistic that does not fit one of the two ops (a channel
        // count) is the more specific error, at that op.
        for (Operation *user : {it->second, &op})
          if (auto symbolUser = dyn_cast<SymbolUserOpInterface>(user))
            if (failed(symbolUser.verifySymbolUses(symbolTable)))
              return failure();
        InFlightDiagnostic diag =
            op.emitOpError("running statistic ")
            << ref << " is already kept by another op of the step; "
            << "each gacc.statistic belongs to one op";
        diag.attachNote(it->second->getLoc()) << "kept by this op first";
        return diag;
      }
  }
  llvm::SmallPtrSet<Attribute, 8> seen;
  SmallVector<BlockArgument> trainable;
  for (auto [i, attr] : llvm::enumerate(getParams())) {
    auto ref = cast<FlatSymbolRefAttr>(attr);
    if (!seen.insert(ref).second)
      return emitOpError("parameter ") << ref << " is listed twice";
    auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, ref);
    if (!param)
      return emitOpError("'") << ref.getValue()
                              << "' does not name a gacc.param";
    Type argType = getBodyBlock().getArgument(i).getType();
    if (param.getType() != argType)
      return emitOpError("body argument #")
             << i << " has type " << argType << " but parameter " << ref
             << " is declared as " << param.getType();
    if (!param.getFrozen())
      trainable.push_back(getBodyBlock().getArgument(i));
  }
  // After gacc-autodiff: one gradient per trainable parameter.
  auto yield = cast<YieldOp>(getBodyBlock().getTerminator());
  if (yield.getNumOperands() != 1 &&
      yield.getNumOperands() != 1 + trainable.size())
    return yield.emitOpError("must yield the micro-batch loss, optionally "
                             "followed by one gradient per trainable "
                             "parameter (")
           << trainable.size() << "), got " << yield.getNumOperands()
           << " values";
  for (unsigned i = 1; i < yield.getNumOperands(); ++i) {
    BlockArgument p = trainable[i - 1];
    if (yield.getOperand(i).getType() != p.getType())
      return yield.emitOpError("gradient #")
             << i - 1 << " has type " << yield.getOperand(i).getType()
             << " but parameter " << getParams()[p.getArgNumber()]
             << " has type " << p.getType();
  }
  return success();
}

LossScalingAttr TrainStepOp::getLossScalingOrDefault() {
  if (auto attr = getLossScalingAttr())
    return attr;
  return LossScalingAttr::get(
      getContext(), APFloat(::gacc::abi::kLossScaleInit),
      APFloat(::gacc::abi::kLossScaleGrowthFactor),
      APFloat(::gacc::abi::kLossScaleBackoffFactor),
      ::gacc::abi::kLossScaleGrowthInterval);
}

bool TrainStepOp::isDifferentiated() {
  return getBodyBlock().getTerminator()->getNumOperands() > 1;
}

Value TrainStepOp::getLoss() {
  return getBodyBlock().getTerminator()->getOperand(0);
}

LossOpInterface TrainStepOp::getLossOp() {
  return getLoss().getDefiningOp<LossOpInterface>();
}

ValueRange TrainStepOp::getGradients() {
  return getBodyBlock().getTerminator()->getOperands().drop_front(1);
}

SmallVector<ParamOp> TrainStepOp::getParamOps() {
  SmallVector<ParamOp> ops;
  for (Attribute attr : getParams())
    ops.push_back(SymbolTable::lookupNearestSymbolFrom<ParamOp>(
        *this, cast<FlatSymbolRefAttr>(attr)));
  return ops;
}

llvm::iterator_range<Block::iterator> TrainStepOp::getForwardOps() {
  Block &body = getBodyBlock();
  auto end = llvm::find_if(body.without_terminator(), [](Operation &op) {
    return isPhaseBegin(&op, StepPhase::backward);
  });
  return {body.begin(), end};
}

SmallVector<BatchStatisticsOpInterface> TrainStepOp::getBatchStatisticsOps() {
  SmallVector<BatchStatisticsOpInterface> ops;
  getBody().walk([&](BatchStatisticsOpInterface op) { ops.push_back(op); });
  return ops;
}

bool TrainStepOp::isTrainable(unsigned i) {
  // A name that does not resolve is reported by verifySymbolUses.
  auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(
      *this, cast<FlatSymbolRefAttr>(getParams()[i]));
  return !param || !param.getFrozen();
}

SmallVector<BlockArgument> TrainStepOp::getTrainableParamArguments() {
  SmallVector<BlockArgument> args;
  for (BlockArgument arg : getParamArguments())
    if (isTrainable(arg.getArgNumber()))
      args.push_back(arg);
  return args;
}


//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

/// [..., in] · [out, in]ᵀ -> [..., out].
static RankedTensorType linearResultType(RankedTensorType x,
                                         RankedTensorType w) {
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getDimSize(0);
  return RankedTensorType::get(shape, x.getElementType());
}

LogicalResult LinearOp::verify() {
  auto x = getInput().getType();
  auto w = getWeight().getType();
  if (x.getRank() < 2)
    return emitOpError("input must have rank >= 2 [batch, ..., in_features], "
                       "got ")
           << x;
  if (w.getRank() != 2)
    return emitOpError("weight must be rank 2 [out_features, in_features], "
                       "got ")
           << w;
  if (x.getShape().back() != w.getDimSize(1))
    return emitOpError("input has ")
           << x.getShape().back() << " features but weight expects "
           << w.getDimSize(1) << " (weight layout is [out, in])";
  if (getBias()) {
    auto b = getBias().getType();
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return emitOpError("bias must be [") << w.getDimSize(0) << "], got "
                                           << b;
  }
  RankedTensorType expected = linearResultType(x, w);
  if (getType() != expected)
    return emitOpError("result must be ") << expected << ", got " << getType();
  return success();
}

LogicalResult LinearOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  auto x = dyn_cast<RankedTensorType>(operands[0].getType());
  auto w = dyn_cast<RankedTensorType>(operands[1].getType());
  if (!x || !w || x.getRank() < 2 || w.getRank() != 2)
    return failure();
  inferred.push_back(linearResultType(x, w));
  return success();
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::verify() {
  auto z = getLogits().getType();
  auto y = getLabels().getType();
  if (z.getRank() != 2 && z.getRank() != 3)
    return emitOpError("logits must be rank 2 [batch, classes] or 3 [batch, "
                       "sequence, classes], got ")
           << z;
  if (y.getShape() != z.getShape().drop_back())
    return emitOpError("labels must have the logits' shape without the class "
                       "dimension, got ")
           << y << " for logits " << z;
  if (failed(verifyIgnoreIndex(*this, getIgnoreIndex(), y)))
    return failure();
  double smoothing = getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    return emitOpError("label_smoothing must be in [0, 1], got ")
           << smoothing;
  return success();
}

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location>, ValueRange, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferred) {
  inferred.push_back(RankedTensorType::get({}, Float32Type::get(ctx)));
  return success();
}

RankedTensorType CrossEntropyOp::getPredictionType() {
  return getLogits().getType();
}

Value CrossEntropyOp::buildPrediction(OpBuilder &, ValueRange operands) {
  return Adaptor(operands, *this).getLogits();
}

Value CrossEntropyOp::getTargets() { return getLabels(); }

Value CrossEntropyOp::buildNormalizationCount(OpBuilder &b, bool perToken) {
  return buildNonIgnoredCount(b, getLoc(), getLabels(), getIgnoreIndex(),
                              perToken);
}

int64_t CrossEntropyOp::getPaddingTarget() { return getIgnoreIndex(); }

bool CrossEntropyOp::predictsClassLogits() { return true; }

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

/// indices [...] and a [V, D] table -> [..., D].
static RankedTensorType embeddingResultType(RankedTensorType indices,
                                            RankedTensorType w) {
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(w.getDimSize(1));
  return RankedTensorType::get(shape, w.getElementType());
}

LogicalResult EmbeddingOp::verify() {
  auto w = getWeight().getType();
  if (w.getRank() != 2)
    return emitOpError("weight must be rank 2 [vocabulary, dim], got ") << w;
  RankedTensorType expected = embeddingResultType(getIndices().getType(), w);
  if (getType() != expected)
    return emitOpError("result must be ") << expected << ", got " << getType();
  return success();
}

Value EmbeddingOp::getTableIndices() { return getIndices(); }

int64_t EmbeddingOp::getNumTableRows() {
  return getWeight().getType().getDimSize(0);
}

LogicalResult EmbeddingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  auto idx = dyn_cast<RankedTensorType>(operands[0].getType());
  auto w = dyn_cast<RankedTensorType>(operands[1].getType());
  if (!idx || !w || w.getRank() != 2)
    return failure();
  inferred.push_back(embeddingResultType(idx, w));
  return success();
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  int64_t d = x.getShape().back();
  for (Value v : {getWeight(), getBias()}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != d)
      return emitOpError("weight and bias must be [") << d << "], got " << t;
  }
  if (!isNormEps(getEps()))
    return emitOpError("eps must be positive, finite and normal in f32, got ")
           << getEps().convertToDouble();
  if (getType() != x)
    return emitOpError("result type must be the input type ") << x;
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(operands[0].getType());
  return success();
}

//===----------------------------------------------------------------------===//
// BatchNormOp
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() < 2)
    return emitOpError("input must have rank >= 2 [m, C, ...], got ") << x;
  if (llvm::is_contained(x.getShape(), 0))
    return emitOpError("input must not have an empty dimension, got ") << x;
  int64_t channels = x.getDimSize(1);
  for (auto [name, v] : {std::pair<StringRef, Value>{"weight", getWeight()},
                         {"bias", getBias()}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != channels)
      return emitOpError() << name << " must be [" << channels << "], got "
                           << t;
  }
  // torch: "Expected more than 1 value per channel when training".
  if (x.getNumElements() / channels < 2)
    return emitOpError("needs more than one value per channel (dimension 0 "
                       "times the spatial ones), got ")
           << x;
  if (Value mask = getSampleMask()) {
    auto t = cast<RankedTensorType>(mask.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != x.getDimSize(0))
      return emitOpError("sample_mask must be [")
             << x.getDimSize(0) << "], got " << t;
  }
  if (!isNormEps(getEps()))
    return emitOpError("eps must be positive, finite and normal in f32, got ")
           << getEps().convertToDouble();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError("momentum must be in [0, 1], got ") << momentum;
  if (getRunningMean() == getRunningVar())
    return emitOpError("running_mean and running_var must be two "
                       "gacc.statistic tensors, got ")
           << getRunningMeanAttr() << " twice";
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(operands[0].getType());
  return success();
}

LogicalResult
BatchNormOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // Inside a training step; once gacc-expand-accumulation has made the
  // statistics function arguments, the names are only labels.
  if (!(*this)->getParentOfType<TrainStepOp>())
    return success();
  auto channels = getInput().getType().getDimSize(1);
  auto expected =
      RankedTensorType::get({channels}, Float32Type::get(getContext()));
  for (FlatSymbolRefAttr ref : {getRunningMeanAttr(), getRunningVarAttr()}) {
    auto stat = symbolTable.lookupNearestSymbolFrom<StatisticOp>(*this, ref);
    if (!stat)
      return emitOpError("'") << ref.getValue()
                              << "' does not name a gacc.statistic";
    if (stat.getType() != expected)
      return emitOpError("running statistic ")
             << ref << " must be " << expected << ", got " << stat.getType();
    // A variance starts at a value it can hold: never below 0.
    ::gacc::abi::InitDistribution init =
        cast<InitializerAttrInterface>(stat.getInitializer()).getDistribution();
    if (llvm::is_contained(getNonNegativeRunningStatistics(), ref) &&
        (init.kind == ::gacc::abi::InitDistribution::Normal || init.a < 0.0))
      return emitOpError("running statistic ")
             << ref << " is a variance: its initializer "
             << stat.getInitializer() << " can be negative";
  }
  return success();
}


//===----------------------------------------------------------------------===//
// GeluOp
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\" (as "
                       "torch.nn.functional.gelu), got \"")
           << getApproximate() << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// ApplyOptimizerOp
//===----------------------------------------------------------------------===//

LogicalResult ApplyOptimizerOp::verify() {
  auto opt = dyn_cast<OptimizerAttrInterface>(getOptimizer());
  if (!opt)
    return emitOpError("unknown optimizer ") << getOptimizer();
  if (getState().size() != opt.getNumStateTensors())
    return emitOpError("optimizer needs ")
           << opt.getNumStateTensors() << " state tensors, got "
           << getState().size();
  Type pt = getParam().getType();
  if (getAccumulator().getType() != pt)
    return emitOpError("accumulator type ")
           << getAccumulator().getType() << " differs from parameter type "
           << pt;
  for (Value v : getState())
    if (v.getType() != pt)
      return emitOpError("state type ")
             << v.getType() << " differs from parameter type " << pt;
  if (getNewParam().getType() != pt ||
      getNewState().size() != getState().size())
    return emitOpError("results must be the parameter and its state");
  for (Value v : getNewState())
    if (v.getType() != pt)
      return emitOpError("result state type ")
             << v.getType() << " differs from parameter type " << pt;
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulAccumulateOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulAccumulateOp::verify() {
  auto a = cast<ShapedType>(getA().getType());
  auto b = cast<ShapedType>(getB().getType());
  auto c = cast<ShapedType>(getAccumulator().getType());
  bool tensors = isa<RankedTensorType>(a);
  if (isa<RankedTensorType>(b) != tensors ||
      isa<RankedTensorType>(c) != tensors)
    return emitOpError("operands must be all tensors or all memrefs");
  if (tensors != (getResult() != nullptr))
    return emitOpError(tensors ? "tensor form must return the accumulator"
                               : "memref form has no result");
  if (getResult() && getResult().getType() != c)
    return emitOpError("result type must be the accumulator type ") << c;
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("operands must be rank 2");
  if (a.getElementType() != b.getElementType())
    return emitOpError("A and B must have one element type, got ")
           << a.getElementType() << " and " << b.getElementType();
  int64_t m = a.getDimSize(getTransposeA() ? 1 : 0);
  int64_t k = a.getDimSize(getTransposeA() ? 0 : 1);
  int64_t kb = b.getDimSize(getTransposeB() ? 1 : 0);
  int64_t n = b.getDimSize(getTransposeB() ? 0 : 1);
  auto mismatch = [](int64_t x, int64_t y) {
    return !ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y;
  };
  if (mismatch(k, kb))
    return emitOpError("contraction sizes differ: op(A) has ")
           << k << " columns, op(B) has " << kb << " rows";
  if (mismatch(m, c.getDimSize(0)) || mismatch(n, c.getDimSize(1)))
    return emitOpError("accumulator must be [")
           << m << ", " << n << "], got " << c;
  return success();
}

void MatmulAccumulateOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getResult())
    return; // tensor form: pure
  effects.emplace_back(MemoryEffects::Read::get(), &getAMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), &getBMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), &getAccumulatorMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getAccumulatorMutable(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

namespace {
/// The communication a collective performs: a resource of its own, so that
/// collectives are never merged, reordered among themselves or erased.
struct CollectiveResource
    : public SideEffects::Resource::Base<CollectiveResource> {
  StringRef getName() final { return "gacc::Collective"; }
};
} // namespace

LogicalResult AllReduceOp::verify() {
  bool tensor = isa<RankedTensorType>(getBuffer().getType());
  if (tensor != (getResult() != nullptr))
    return emitOpError(tensor ? "tensor form must return the reduced buffer"
                              : "memref form has no result");
  if (getResult() && getResult().getType() != getBuffer().getType())
    return emitOpError("result type must be the buffer type ")
           << getBuffer().getType();
  // The host runtime reduces it: memory it can address, through a strided
  // descriptor.
  if (auto m = dyn_cast<MemRefType>(getBuffer().getType());
      m && m.getMemorySpace())
    return emitOpError("buffer must be in the default memory space, got ")
           << m.getMemorySpace();
  if (auto m = dyn_cast<MemRefType>(getBuffer().getType()); m && !m.isStrided())
    return emitOpError("buffer must have a strided layout, got ")
           << m.getLayout();
  return success();
}

void AllReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(),
                       CollectiveResource::get());
  if (getResult())
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &getBufferMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getBufferMutable(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// PhaseBeginOp
//===----------------------------------------------------------------------===//

bool mlir::gacc::isPhaseBegin(Operation *op, StepPhase phase) {
  auto marker = dyn_cast_or_null<PhaseBeginOp>(op);
  return marker && marker.getPhase() == phase;
}

//===----------------------------------------------------------------------===//
// RecomputeInputsOp
//===----------------------------------------------------------------------===//

LogicalResult RecomputeInputsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

LogicalResult RecomputeInputsOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  return success();
}

#define GET_OP_CLASSES
#include "dialect/GAccOps.cpp.inc"
