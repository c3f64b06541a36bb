//===- Training.cpp - gacc-run's training driver --------------------------===//
//
// The Trainer's set-up and loop (Trainer.h): one window per optimizer step
// from a data source, on the CPU or the cuda target, and evaluation after
// each epoch. One method per job: set-up, compilation, the ranks'
// agreement, one window, the loss-scale bookkeeping and evaluation; its
// reports are in TrainerReports.cpp, its checkpoints in
// TrainerCheckpoints.cpp.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/MemoryBudget.h"
#include "tools/gacc-run/OutputPaths.h"
#include "tools/gacc-run/Trainer.h"

#include "runtime/Collectives.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"
#include "runtime/DeviceArena.h"
#include "runtime/Safetensors.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;
namespace abi = ::gacc::abi;

namespace {

/// FNV-1a over the parameters' bytes: what --check-replicas compares.
uint64_t hashParameters(const std::vector<HostTensor> &params) {
  uint64_t h = 1469598103934665603ull;
  for (const HostTensor &t : params) {
    auto *bytes = static_cast<const unsigned char *>(
        static_cast<const void *>(t.f32()));
    for (size_t i = 0, e = t.numBytes(); i < e; ++i)
      h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return h;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

/// The step's predict function over host tensors (the parameters, or their
/// moving average, and the running statistics).
class JitPredictor : public Predictor {
public:
  JitPredictor(CpuJit &jit, const StepSignature &sig,
               std::vector<HostTensor> &params,
               std::vector<HostTensor> &statistics)
      : jit(jit), name(sig.predictName()) {
    for (size_t j = 0; j < sig.inputTypes.size(); ++j)
      if (j != sig.targetInput)
        ins.emplace_back(dtypeOf(sig.inputTypes[j].getElementType()),
                         shapeOf(sig.inputTypes[j]));
    out = HostTensor(DType::F32, shapeOf(sig.predictionType));
    for (auto &t : params)
      args.push_back(JitArg::of(t));
    for (auto &t : statistics)
      args.push_back(JitArg::of(t));
    for (auto &t : ins)
      args.push_back(JitArg::of(t));
    args.push_back(JitArg::of(out));
    m = sig.microBatch;
  }
  int64_t rows() const override { return m; }
  std::vector<HostTensor *> inputs() override {
    std::vector<HostTensor *> r;
    for (auto &t : ins)
      r.push_back(&t);
    return r;
  }
  const HostTensor &output() const override { return out; }
  llvm::Error run() override { return jit.call(name, args); }

private:
  CpuJit &jit;
  std::string name;
  std::vector<HostTensor> ins;
  HostTensor out;
  std::vector<JitArg> args;
  int64_t m;
};

} // namespace

int Trainer::prepare() {
  data = sourceForStep(sig, settings);
  if (!data)
    return kExitBadInput;
  if (!settings.orderFile.empty()) {
    auto order = readOrderFile(settings.orderFile, data->numTrain());
    if (!order)
      return reportFailure(order.takeError(), kExitBadInput);
    fixedOrder = std::move(*order);
  }
  if (int status = planEpoch())
    return status;
  // Measured only beside a plan: trimming the heap costs time.
  bool measure = settings.memoryPlan.has_value();
  uint64_t beforeState = measure ? rss::trimmedCurrentBytes() : 0;
  if (llvm::Error e = initialParameters(sig, settings, st.params,
                                        st.statistics, &notLoaded))
    return reportFailure(std::move(e), kExitBadInput);
  if (llvm::Error e = bindStepState(sig, settings, st))
    return reportFailure(std::move(e), kExitBadInput);
  // The weights' moving average starts at the initial weights (a resumed
  // run reads its own from the checkpoint).
  if (sig.ema)
    for (auto [k, i] : llvm::enumerate(sig.trainable)) {
      HostTensor &ema = st.states[k * sig.statePerParam + sig.emaState()];
      std::memcpy(ema.data(), st.params[i].data(), ema.numBytes());
    }
  if (measure)
    measuredStateBytes = rss::trimmedCurrentBytes() - beforeState;
  pos.lossScale = settings.initialLossScale;
  return resume();
}

/// What the run writes, opened once the ranks agree: the checkpoint
/// directory (locked) and the metrics file, with the memory plan's row.
int Trainer::openOutputs() {
  if (int status = openCheckpoints())
    return status;
  // A resumed run continues its metrics file.
  if (lead && !settings.metricsPath.empty())
    if (llvm::Error e = metrics.open(settings.metricsPath,
                                     /*append=*/!settings.resumeDir.empty()))
      return reportFailure(
          llvm::createStringError(llvm::inconvertibleErrorCode(),
                                  "--metrics " + llvm::toString(std::move(e))),
          kExitBadInput);
  if (settings.memoryPlan)
    return writeMetric(
        "memory_plan",
        llvm::json::Object{{"memory_plan", toJSON(*settings.memoryPlan)}});
  return 0;
}

/// The windows of an epoch. Data parallelism: the global effective batch
/// is m × N × ranks; rank r trains on its r-th slice of N · m consecutive
/// samples of it.
int Trainer::planEpoch() {
  perRank = sig.effectiveBatch;
  eff = perRank * settings.ranks;
  perEpoch = fixedOrder.empty() ? data->numTrain() : int64_t(fixedOrder.size());
  if (sig.microBatch > perEpoch) {
    reportError(llvm::formatv(
        "micro-batch {0} is larger than the {1} sample{2} of an epoch{3}: {4}",
        sig.microBatch, perEpoch, perEpoch == 1 ? "" : "s",
        fixedOrder.empty() ? "" : " (--order-file)",
        settings.memoryBudgetBytes
            ? llvm::formatv("--memory-budget chose it for the effective "
                            "batch of {0}; give a smaller budget, or run "
                            "without --memory-budget",
                            sig.effectiveBatch)
                  .str()
            : std::string("lower --micro-batch")));
    return kExitBadInput;
  }
  if (schedule.maxAccumSteps() > sig.accumSteps) {
    reportError(llvm::formatv(
        "--accum-schedule: N = {0} exceeds the step's {1} accumulation "
        "steps, which size its window ({2})",
        schedule.maxAccumSteps(), sig.accumSteps,
        settings.memoryBudgetBytes
            ? llvm::formatv("--memory-budget chose micro-batch {0} × {1}; "
                            "give a schedule within {1}, or a smaller budget "
                            "(a smaller micro-batch, more accumulation "
                            "steps)",
                            sig.microBatch, sig.accumSteps)
                  .str()
            : std::string("raise them with --accum-steps")));
    return kExitBadInput;
  }
  // The last window of an epoch may be short: it trains on what it holds,
  // unless --drop-last skips it; under a growing schedule a later epoch may
  // hold no window at all, which is found here, before any training.
  int64_t step = 0;
  for (int64_t e = 0; e < settings.epochs; ++e) {
    if (settings.maxSteps >= 0 && step >= settings.maxSteps)
      break;
    int64_t n = planEpochWindows(schedule, step, perEpoch, sig.microBatch,
                                 perRank, settings.ranks, settings.dropLast)
                    .size();
    if (n == 0)
      return reportEmptyEpoch(e, step);
    step += n;
  }
  return planWindows();
}

int Trainer::planWindows() {
  int64_t firstStep = pos.globalStep - pos.window;
  windows = planEpochWindows(schedule, firstStep, perEpoch, sig.microBatch,
                             perRank, settings.ranks, settings.dropLast);
  if (windows.size() == 0 && pos.epoch < settings.epochs)
    return reportEmptyEpoch(pos.epoch, firstStep);
  return checkSingleSampleMicroBatches(firstStep);
}

/// A micro-batch of one real sample has no variance where the step keeps
/// statistics of one value per sample (batch_norm over [m, C]): torch
/// raises "Expected more than 1 value per channel when training"; so does
/// gacc-run, before the epoch, instead of normalizing by a variance of 0.
int Trainer::checkSingleSampleMicroBatches(int64_t firstStep) {
  if (sig.oneValuePerSampleStatistics.empty())
    return 0;
  for (size_t w = 0; w + 1 < windows.starts.size(); ++w) {
    // Windows past --max-steps never run.
    if (settings.maxSteps >= 0 && firstStep + int64_t(w) >= settings.maxSteps)
      break;
    int64_t samples = windows.starts[w + 1] - windows.starts[w];
    int64_t rankSize = rankWindowSamples(
        schedule.accumStepsAt(firstStep + int64_t(w)), sig.microBatch, perRank);
    for (int64_t r = 0; r < settings.ranks; ++r) {
      int64_t slice = std::clamp<int64_t>(samples - r * rankSize, 0, rankSize);
      if (!sig.endsWithSingleSample(slice))
        continue;
      reportError(llvm::formatv(
          "window {0} of epoch {1} ends{2} with a micro-batch of 1 sample, "
          "and {3} keeps statistics of one value per sample, which one "
          "sample has no variance for (torch raises \"Expected more than 1 "
          "value per channel when training\"); give --drop-last or a "
          "micro-batch size that leaves no single sample{4}",
          w + 1, pos.epoch + 1,
          settings.ranks > 1 ? " on rank " + std::to_string(r) : "",
          sig.oneValuePerSampleStatistics,
          // The budget's search knows the window, not the epoch's end.
          settings.memoryBudgetBytes
              ? " (--memory-budget chose micro-batch " +
                    std::to_string(sig.microBatch) +
                    " for the effective batch; the epoch's last window is "
                    "shorter)"
              : ""));
      return kExitBadInput;
    }
  }
  return 0;
}

int Trainer::reportEmptyEpoch(int64_t epoch, int64_t firstStep) {
  int64_t first =
      settings.ranks * rankWindowSamples(schedule.accumStepsAt(firstStep),
                                         sig.microBatch, perRank);
  if (ramp)
    reportError(llvm::formatv(
        "epoch {0} holds {1} samples, fewer than its first window of {2} "
        "(N = {3} at optimizer step {4} of --accum-schedule), and "
        "--drop-last skips it",
        epoch + 1, perEpoch, first, schedule.accumStepsAt(firstStep),
        firstStep + 1));
  else
    reportError("the epoch holds " + llvm::Twine(perEpoch) +
                " samples, fewer than one effective batch of " +
                llvm::Twine(first) + ", and --drop-last skips it");
  return kExitBadInput;
}

/// Device memory: one managed reservation of the device's free memory
/// less a margin (cuda::stepMemoryBytes; pages are backed on first touch),
/// carved for every buffer; cuBLAS or cuBLASLt (cuDNN loads with the
/// compiled step that calls it: compileStep).
int Trainer::prepareDevice() {
  // The window's inputs get managed ranges of their own
  // (cuda::mallocHostWritten): the arena leaves room for them.
  uint64_t inputs = 0;
  for (unsigned j = 0; j < sig.numInputs; ++j) {
    MemRefType window = sig.windowInputType(j);
    inputs += (uint64_t(window.getNumElements()) *
                   (window.getElementTypeBitWidth() / 8) +
               DeviceArena::kAlignment - 1) /
              DeviceArena::kAlignment * DeviceArena::kAlignment;
  }
  uint64_t reserve = cuda::stepMemoryBytes();
  reserve -= std::min(reserve, inputs);
  std::string problem = cuda::reserveManagedArena(reserve);
  if (problem.empty() && settings.blas)
    problem = settings.cublasLt ? cuda::loadCublasLt() : cuda::loadCublas();
  if (!problem.empty()) {
    reportError("--target cuda: " + problem);
    return 1;
  }
  return 0;
}

/// --arena-update: parameters, accumulators and state in flat arenas (host
/// memory, or managed memory on the cuda target, where the buffers the
/// host writes before every update are host-shared blocks).
int Trainer::bindArenas() {
  auto alloc = [&](size_t bytes, bool hostTouched) -> void * {
    size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void *p = !onDevice     ? std::aligned_alloc(64, rounded)
              : hostTouched ? cuda::mallocHostShared(rounded)
                            : gacc_cuda_malloc(rounded);
    if (p && !onDevice)
      hostBlocks.emplace_back(p, &std::free);
    if (p)
      std::memset(p, 0, rounded);
    return p;
  };
  if (llvm::Error e = arenas.bind(sig, st, alloc))
    return reportFailure(std::move(e));
  return 0;
}

/// xxh3 of `text`.
static uint64_t hashText(llvm::StringRef text) {
  return llvm::xxh3_64bits(text);
}

/// A flag's value, formatted: the fact that the ranks gave it alike.
template <typename T>
static RankFact flagFact(const char *flag, const T &value) {
  return {std::string("a different ") + flag,
          hashText(llvm::formatv("{0}", value).str())};
}

/// A floating-point flag's value by its bits (formatv's default keeps two
/// decimals, where --lr 1e-3 and 3e-4 would look alike).
static RankFact flagFact(const char *flag, double value) {
  return flagFact(flag, llvm::bit_cast<uint64_t>(value));
}

/// The facts every rank of a data-parallel job must share, in the order
/// the first difference is reported.
std::vector<RankFact> Trainer::rankFacts() {
  std::vector<RankFact> facts;
  std::string text;
  llvm::raw_string_ostream os(text);
  model->print(os);
  facts.push_back({"a different model (after the command line's schedule)",
                   hashText(text)});
  // The run's length and schedule: a rank that runs more optimizer steps
  // waits forever in a collective the others never join.
  facts.push_back({"a different number of training samples",
                   hashText(std::to_string(data->numTrain()))});
  facts.push_back(flagFact("--epochs", settings.epochs));
  facts.push_back(flagFact("--max-steps", settings.maxSteps));
  facts.push_back(flagFact("--drop-last", settings.dropLast));
  facts.push_back(flagFact("--accum-schedule", schedule.str()));
  facts.push_back(flagFact("number of optimizer steps per epoch", perEpoch));
  // Where checkpoints go and come from: one manifest names every rank's
  // state file, so they must be one directory (however it is written);
  // a step with checkpoints is compiled in its resumable form.
  auto dir = [](const std::string &path) {
    return path.empty() ? path : canonicalPath(path);
  };
  facts.push_back(flagFact("--checkpoint-dir", dir(settings.checkpointDir)));
  facts.push_back(flagFact("--checkpoint-every", settings.checkpointEvery));
  facts.push_back(flagFact("--resume", dir(settings.resumeDir)));
  // What each rank computes: replicas compiled differently round
  // differently, and drift apart.
  facts.push_back(flagFact("--seed", settings.seed));
  facts.push_back(flagFact("--lr", settings.lr));
  for (const ArithmeticSetting &setting : arithmeticSettings(settings))
    facts.push_back(flagFact(setting.flag, setting.words));
  facts.push_back(flagFact("--unroll", settings.unroll));
  facts.push_back(flagFact("--arena-update", settings.arenaUpdate));
  facts.push_back(flagFact("--no-step-arena", !settings.stepArena));
  facts.push_back(flagFact("--cuda-graph", settings.cudaGraph));
  facts.push_back(flagFact("--check-replicas", settings.checkReplicas));
  // --save-gradients sums the ranks' accumulators: a collective.
  facts.push_back(flagFact("--save-gradients (given or not)",
                           !settings.saveGradients.empty()));
  // The data's values and order.
  facts.push_back(
      {"different training data (the same number of samples "
       "with other values)",
       checkpointing() ? identity.data : fingerprintTrainingData(sig, *data)});
  std::string order;
  for (int64_t i : fixedOrder)
    order += " " + std::to_string(i);
  facts.push_back({"a different --order-file", hashText(order)});
  // The starting parameters (initialized, --load-params or --resume):
  // replicas must start equal. Not the running statistics, which each
  // rank moves from its own micro-batches (as DDP without SyncBatchNorm).
  uint64_t stateHash = 0;
  for (const HostTensor &t : st.params)
    stateHash = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                    static_cast<const uint8_t *>(t.data()), t.numBytes())) ^
                (stateHash * 0x9E3779B97F4A7C15ull);
  facts.push_back({"different starting parameters (--load-params)", stateHash});
  return facts;
}

/// Every rank must run the same job: fingerprints of the model and of the
/// run settings are compared before the first collective, so that ranks
/// that disagree stop with one line instead of hanging in (or corrupting)
/// an all-reduce of another size or count.
bool Trainer::ranksAgree() {
  std::vector<RankFact> facts = rankFacts();
  std::vector<uint64_t> hashes;
  for (const RankFact &fact : facts)
    hashes.push_back(fact.hash);
  std::optional<collectives::RankDifference> differs =
      collectives::firstDifference(hashes);
  if (!differs)
    return true;
  if (lead)
    reportError(llvm::formatv("the ranks disagree: rank {0} has {1} than "
                              "rank 0; every rank must run the same "
                              "command on the same data",
                              differs->rank, facts[differs->index].what));
  // Every rank saw the mismatch; rank 0's line is out before any rank ends
  // the job.
  collectives::barrier();
  return false;
}

/// On the cuda target the parameters live in managed memory (or the
/// arenas) and the running statistics in managed memory during training:
/// copied back before evaluation, replica checks and saving.
void Trainer::syncParamsToHost() {
  if (settings.arenaUpdate)
    arenas.paramsToHost(st.params);
  else if (onDevice)
    for (unsigned i = 0; i < sig.numParams; ++i)
      mirror.toHost(sig.paramArg(i));
  if (onDevice)
    for (unsigned q = 0; q < sig.numStatistics; ++q)
      mirror.toHost(sig.statisticArg(q));
}

/// Window `w` of the epoch through the compiled step (and the arena
/// update): this rank's slice [begin, end) of the global window; a rank
/// past the end of a short last window gets padding only.
int Trainer::runWindow(const std::vector<int64_t> &order, int64_t w,
                       StepOutcome &o) {
  int64_t windowBegin = windows.starts[w], windowEnd = windows.starts[w + 1];
  o.accumSteps = schedule.accumStepsAt(pos.globalStep);
  o.samples = windowEnd - windowBegin;
  int64_t rankSize =
      rankWindowSamples(o.accumSteps, sig.microBatch, perRank);
  int64_t end =
      std::min(windowBegin + (settings.rank + 1) * rankSize, windowEnd);
  int64_t begin = std::min(windowBegin + settings.rank * rankSize, end);
  fillWindow(*data, sig, order, begin, end, st.windows);
  if (onDevice) {
    for (size_t j = 0; j < sig.inputTypes.size(); ++j)
      mirror.toDevice(sig.inputArg(j));
    // The copies are queued on the stream; an eager step's host code may
    // read an input before its first wait. The step's time starts after
    // them, as PyTorch's baselines read inputs already on the device.
    gacc_cuda_synchronize();
  }
  std::vector<JitArg> &args = onDevice ? mirror.args : st.args;
  int64_t stepIndex = pos.optimizerSteps;
  args[sig.stepArg()].i = stepIndex;
  // Random ops (dropout) key their draws by each sample's index in the
  // epoch's order: this rank's slice starts at `begin`.
  args[sig.firstSampleArg()].i = begin;
  if (sig.lossScaling)
    args[sig.lossScaleArg()].f = pos.lossScale;
  float results[abi::kMaxStepResults] = {};
  uint64_t collectivesBefore = collectives::count();
  auto t0 = std::chrono::steady_clock::now();
  CpuJit &jit = onDevice ? *deviceJit : *hostJit;
  llvm::MutableArrayRef<float> resultsRef(results, sig.numResults());
  // With checkpoints, one micro-batch at a time (a stop request ends the
  // window early); a window of fewer micro-batches than the step's N
  // through the resumable functions; otherwise the whole window in one
  // call.
  int stopSignal = 0;
  llvm::Error err = llvm::Error::success();
  if (checkpointing() || o.accumSteps != sig.accumSteps) {
    auto stopped = runMicroBatches(jit, args, o.accumSteps, resultsRef);
    if (stopped)
      stopSignal = *stopped;
    else
      err = stopped.takeError();
  } else if (settings.cudaGraph) {
    err = graph.run(jit, sig.name, args, resultsRef);
  } else {
    err = jit.call(sig.name, args, resultsRef);
  }
  o.ms = msSince(t0);
  if (!err && onDevice)
    if (std::string e = cuda::lastError(); !e.empty())
      err = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                    "cuda: " + e);
  if (err)
    return reportFailure(std::move(err));
  if (stopSignal)
    return stopWithCheckpoint(stopSignal);
  o.collectives = int64_t(collectives::count() - collectivesBefore);
  o.objective = results[abi::kObjective];
  o.count = results[abi::kCount];
  o.lr = results[abi::kLearningRate];
  o.gradNorm = results[abi::kGradNorm];
  o.skipped = sig.lossScaling && results[abi::kSkipped] != 0.0f;
  o.lossScale = pos.lossScale;
  pos.samplesSeen += windowEnd - windowBegin;
  if (settings.arenaUpdate)
    return applyArenaUpdate(stepIndex, o);
  return 0;
}

/// The deferred update of --arena-update: the arena kernels over every
/// parameter.
int Trainer::applyArenaUpdate(int64_t stepIndex, StepOutcome &o) {
  auto t0 = std::chrono::steady_clock::now();
  CpuJit &jit = onDevice ? *deviceJit : *hostJit;
  if (llvm::Error e = arenas.update(
          jit, sig, step.getMaxGradNorm().has_value(), o.count, o.skipped,
          float(settings.lr), stepIndex, sig.lossScaling ? o.lossScale : 1.0f))
    return reportFailure(std::move(e));
  if (std::string e = onDevice ? cuda::lastError() : ""; !e.empty()) {
    reportError("cuda: " + e);
    return 1;
  }
  o.ms += msSince(t0);
  return 0;
}

/// --check-replicas: every rank's parameters hash the same.
int Trainer::checkReplicas() {
  syncParamsToHost();
  std::vector<uint64_t> hashes =
      collectives::allGather(hashParameters(st.params));
  for (size_t r = 1; r < hashes.size(); ++r)
    if (hashes[r] != hashes[0]) {
      if (lead)
        reportError(llvm::formatv(
            "--check-replicas: after optimizer step {0} rank {1} holds "
            "different parameters from rank 0 (hash {2:x} vs {3:x})",
            pos.globalStep, r, hashes[r], hashes[0]));
      collectives::barrier();
      return 1;
    }
  return 0;
}

/// torch.cuda.amp.GradScaler: a skipped window backs off the scale; after
/// growth_interval clean steps it grows, unless the grown scale would leave
/// f32 (as GradScaler's update) or make a window's divisor count × scale
/// do so (which skips a window whose gradients are finite). The count is
/// the largest a window of the step can have (StepSignature::
/// largestWindowCount: 1 for `sum`), not this window's: a short window (an
/// epoch's last, a token_mean window of few tokens) is followed by full
/// ones, and a resumed run decides as the uninterrupted one.
void Trainer::advanceLossScale(const StepOutcome &o) {
  float largestCount = float(sig.largestWindowCount(settings.ranks));
  if (o.skipped) {
    ++pos.skippedSteps;
    pos.lossScale *= settings.backoffFactor;
    pos.cleanSteps = 0;
    return;
  }
  ++pos.optimizerSteps;
  if (sig.lossScaling && ++pos.cleanSteps == settings.growthInterval) {
    float grown = pos.lossScale * settings.growthFactor;
    if (std::isfinite(grown * largestCount))
      pos.lossScale = grown;
    pos.cleanSteps = 0;
  }
}

/// The data source's evaluation after an epoch (rank 0).
int Trainer::evaluate(int64_t epoch) {
  if (pos.globalStep == 0 || settings.noEval || !lead)
    return 0;
  // The training peak so far; evaluation's own buffers do not count.
  bool measure = settings.memoryPlan.has_value();
  if (measure)
    trainingPeakBytes = std::max(trainingPeakBytes, rss::peakBytes());
  llvm::scope_exit restartPeak([measure] {
    if (measure) {
      rss::trim();
      rss::resetPeak();
    }
  });
  syncParamsToHost();
  if (settings.evalEma)
    copyMovingAverages();
  auto eval = data->evaluate(settings.evalEma ? *emaPredictor : *predictor);
  if (!eval)
    return reportFailure(eval.takeError());
  if (eval->empty())
    return 0;
  lastEval = *eval;
  llvm::json::Object obj{{"epoch", epoch + 1}, {"step", pos.globalStep}};
  out << "epoch " << epoch + 1 << (settings.evalEma ? " (EMA weights)" : "");
  if (settings.evalEma)
    obj["ema"] = true;
  for (const Metric &mt : lastEval) {
    out << llvm::format("  %s %.4f", mt.key.c_str(), mt.value);
    obj[mt.key] = mt.value;
  }
  out << "\n";
  return writeMetric("epoch", std::move(obj));
}

/// --save-gradients: the gradient the last update applied, each
/// accumulator divided by the window's count (and the loss scale); the
/// trainable parameters only.
std::vector<HostTensor> Trainer::appliedGradients(float count, float scale) {
  // One flat copy of the accumulators: the compiled step sums the ranks'
  // accumulators into a buffer of its own and leaves each rank's sum in
  // its accumulators (the arena update sums them in place), so a
  // data-parallel job sums them here, in one all-reduce.
  std::vector<float> flat;
  for (unsigned k = 0; k < sig.numTrainable; ++k) {
    const JitArg &acc = st.args[sig.accArg(k)];
    if (onDevice && !settings.arenaUpdate)
      mirror.toHost(sig.accArg(k));
    // The host tensor, or the arena the argument points into.
    const float *data = static_cast<const float *>(
        acc.kind == JitArg::Tensor ? acc.tensor->data() : acc.pointer);
    int64_t n = sig.paramTypes[sig.trainable[k]].getNumElements();
    flat.insert(flat.end(), data, data + n);
  }
  if (settings.ranks > 1 && !settings.arenaUpdate)
    collectives::allReduceHost(flat.data(), flat.size());
  float divisor = std::max(count, 1.0f) * scale;
  std::vector<HostTensor> grads;
  size_t offset = 0;
  for (unsigned i : sig.trainable) {
    HostTensor g(DType::F32, shapeOf(sig.paramTypes[i]));
    for (int64_t e = 0, n = g.numElements(); e < n; ++e)
      g.f32()[e] = flat[offset + e] / divisor;
    offset += g.numElements();
    grads.push_back(std::move(g));
  }
  return grads;
}

/// The step for the CPU (and the device), the arenas and the device
/// mirror, holding the state as prepare() left it.
int Trainer::compile() {
  auto compileStart = std::chrono::steady_clock::now();
  auto hostOr = compileStep(model, sig, settings);
  if (!hostOr)
    return reportCompileFailure(hostOr.takeError());
  hostJit = std::move(*hostOr);
  if (settings.arenaUpdate)
    if (int status = bindArenas())
      return status;
  // On the cuda target the step runs from a second JIT (NVVM pipeline);
  // evaluation stays on the CPU JIT above.
  if (onDevice) {
    auto d = compileStep(model, sig, settings, /*onDevice=*/true);
    if (!d)
      return reportCompileFailure(d.takeError());
    deviceJit = std::move(*d);
    // Data-parallel on the GPU: the one all-reduce per step runs on NCCL.
    if (settings.ranks > 1)
      if (std::string problem = collectives::useNccl(); !problem.empty()) {
        reportError("--target cuda --data-parallel: " + problem);
        return 1;
      }
    auto isInput = [&](size_t k) {
      return k >= sig.inputArg(0) && k < sig.inputArg(0) + sig.numInputs;
    };
    if (llvm::Error e = mirror.bind(st.args, isInput))
      return reportFailure(std::move(e));
    if (settings.cudaGraph)
      if (llvm::Error e = graph.bind(mirror.args, sig.numResults()))
        return reportFailure(std::move(e));
  }
  double compileMs = msSince(compileStart);
  if (settings.ranks > 1 && !ranksAgree())
    return kExitBadInput;
  if (int status = openOutputs())
    return status;
  printHeader(compileMs);
  if (int status = printResumed())
    return status;
  predictor =
      std::make_unique<JitPredictor>(*hostJit, sig, st.params, st.statistics);
  if (settings.evalEma) {
    for (const HostTensor &p : st.params)
      emaWeights.emplace_back(p.dtype, p.shape);
    emaPredictor = std::make_unique<JitPredictor>(*hostJit, sig, emaWeights,
                                                  st.statistics);
  }
  return 0;
}

/// The sample order of `epoch`: the resumed epoch's from its checkpoint,
/// --order-file's, or the seeded shuffle.
const std::vector<int64_t> &Trainer::orderOf(int64_t epoch) {
  if (epoch == epochOrderEpoch)
    return epochOrder;
  epochOrderEpoch = epoch;
  if (epoch == resumedEpoch)
    epochOrder = resumedOrder;
  else if (!fixedOrder.empty())
    epochOrder = fixedOrder;
  else
    epochOrder = shuffledOrder(data->numTrain(), settings.seed, epoch);
  return epochOrder;
}

void Trainer::copyMovingAverages() {
  syncStateToHost();
  // A frozen parameter is its own average.
  for (unsigned i = 0; i < sig.numParams; ++i)
    std::memcpy(emaWeights[i].data(), st.params[i].data(),
                st.params[i].numBytes());
  for (auto [k, i] : llvm::enumerate(sig.trainable)) {
    const HostTensor &ema =
        st.states[k * sig.statePerParam + sig.emaState()];
    std::memcpy(emaWeights[i].data(), ema.data(), ema.numBytes());
  }
}

/// The bookkeeping after an optimizer step: counters, replica check, loss
/// scale, divergence, the progress line.
int Trainer::afterStep(const StepOutcome &o) {
  stepMs.push_back(o.ms);
  ++pos.globalStep;
  // The base of the measured training peak: after the first step, which
  // leaves what lives for the whole run and is not the step's (OpenBLAS's
  // packing buffers, kept from its first GEMM; the epoch's sample order).
  if (stepMs.size() == 1 && settings.memoryPlan) {
    trainingBaseBytes = rss::trimmedCurrentBytes();
    rss::resetPeak();
  }
  last = o;
  if (settings.checkReplicas)
    if (int status = checkReplicas())
      return status;
  advanceLossScale(o);
  if (!o.skipped && (!std::isfinite(o.objective) || !std::isfinite(o.gradNorm)))
    return reportDivergence(pos.epoch, pos.window, o);
  return logStep(pos.epoch, pos.window, o);
}

int Trainer::run() {
  if (int status = prepare())
    return status;
  if (onDevice)
    if (int status = prepareDevice())
      return status;
  if (int status = compile())
    return status;
  samplesAtStart = pos.samplesSeen;
  // From `pos` (the start, or where a checkpoint left off) to the last
  // epoch or --max-steps; `pos` always names the next micro-batch.
  bool reachedMaxSteps = false;
  for (; pos.epoch < settings.epochs; ++pos.epoch, pos.window = 0) {
    const std::vector<int64_t> &order = orderOf(pos.epoch);
    if (int status = planWindows())
      return status;
    for (; pos.window < windows.size(); ++pos.window) {
      if (settings.maxSteps >= 0 && pos.globalStep >= settings.maxSteps) {
        reachedMaxSteps = true;
        break;
      }
      if (int status = atWindowBoundary())
        return status == kStopped ? 0 : status;
      StepOutcome o;
      if (int status = runWindow(order, pos.window, o))
        return status == kStopped ? 0 : status;
      if (int status = afterStep(o))
        return status;
    }
    // The epoch's evaluation, also of an epoch that --max-steps ends.
    if (int status = evaluate(pos.epoch))
      return status;
    if (reachedMaxSteps)
      break;
  }
  if (checkpointing())
    if (int status = writeCheckpoint())
      return status;
  return finish();
}

int gaccrt::train(ModuleOp model, TrainStepOp step, const StepSignature &sig,
                  const RunSettings &settings) {
  return Trainer(model, step, sig, settings).run();
}
