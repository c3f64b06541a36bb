//===- Training.cpp - gacc-run's training driver --------------------------===//
//
// The Trainer's set-up, loop and reports (Trainer.h): one window per
// optimizer step from a data source, on the CPU or the cuda target,
// evaluation after each epoch, progress, metrics and a timing summary. One
// method per job: set-up, compilation, the ranks' agreement, one window,
// the loss-scale bookkeeping, logging, evaluation and the final outputs.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/Trainer.h"
#include "tools/gacc-run/MemoryBudget.h"

#include "runtime/Collectives.h"
#include "runtime/CpuThreads.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"
#include "runtime/CudnnAttention.h"
#include "runtime/DeviceArena.h"
#include "runtime/OutputFile.h"
#include "runtime/Safetensors.h"
#include "runtime/StepArena.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sys/resource.h>

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

double peakRssMb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0; // Linux reports KiB
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

/// "NaN", "inf" or "-inf", whatever the platform's printf makes of them.
std::string nonFiniteName(double v) {
  if (std::isnan(v))
    return "NaN";
  return v > 0 ? "inf" : "-inf";
}

/// A number for the metrics file: JSON has no NaN or infinity, so a
/// non-finite value (a skipped fp16 window) is written as null.
llvm::json::Value jsonNumber(double v) {
  return std::isfinite(v) ? llvm::json::Value(v) : llvm::json::Value(nullptr);
}

/// `v` in printf's `format` (one double), or its name when it is not
/// finite (a skipped fp16 window's loss: "NaN", not "-nan").
std::string formatNumber(double v, const char *format) {
  if (!std::isfinite(v))
    return nonFiniteName(v);
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

/// A step time for the progress and summary lines: `decimals` (1 or 2)
/// decimals, or three significant digits below 1 ms (a tiny step is not
/// "0.0 ms/step").
std::string stepTime(double ms, int decimals) {
  return formatNumber(ms, ms < 1.0        ? "%.3g ms/step"
                          : decimals == 1 ? "%.1f ms/step"
                                          : "%.2f ms/step");
}

std::string jsonLine(llvm::json::Object obj) {
  std::string line;
  llvm::raw_string_ostream os(line);
  os << llvm::json::Value(std::move(obj));
  return line;
}

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
  if (int status = resume())
    return status;
  // A resumed run continues its metrics file.
  if (lead && !settings.metricsPath.empty())
    if (llvm::Error e = metrics.open(settings.metricsPath,
                                     /*append=*/!settings.resumeDir.empty()))
      return reportFailure(std::move(e), kExitBadInput);
  if (settings.memoryPlan)
    return writeMetric(
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
        "micro-batch {0} is larger than the {1} sample{2} of an epoch{3}: "
        "lower --micro-batch",
        sig.microBatch, perEpoch, perEpoch == 1 ? "" : "s",
        fixedOrder.empty() ? "" : " (--order-file)"));
    return kExitBadInput;
  }
  if (schedule.maxAccumSteps() > sig.accumSteps) {
    reportError(llvm::formatv(
        "--accum-schedule: N = {0} exceeds the step's {1} accumulation "
        "steps, which size its window ({2})",
        schedule.maxAccumSteps(), sig.accumSteps,
        settings.budgetChoseSchedule
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
      if (slice % sig.microBatch != 1)
        continue;
      reportError(llvm::formatv(
          "window {0} of epoch {1} ends{2} with a micro-batch of 1 sample, "
          "and {3} keeps statistics of one value per sample, which one "
          "sample has no variance for (torch raises \"Expected more than 1 "
          "value per channel when training\"); give --drop-last or a "
          "micro-batch size that leaves no single sample",
          w + 1, pos.epoch + 1,
          settings.ranks > 1 ? " on rank " + std::to_string(r) : "",
          sig.oneValuePerSampleStatistics));
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

/// Every rank must run the same job: fingerprints of the model and of the
/// run settings are compared before the first collective, so that ranks
/// that disagree stop with one line instead of hanging in (or corrupting)
/// an all-reduce of another size or count.
bool Trainer::ranksAgree() {
  std::string text;
  llvm::raw_string_ostream os(text);
  model->print(os);
  uint64_t modelHash = llvm::xxh3_64bits(text);
  std::string run = llvm::formatv(
      "{0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10}", settings.epochs,
      settings.maxSteps, settings.dropLast, perEpoch, schedule.str(),
      data->numTrain(), settings.seed, settings.lr, settings.checkReplicas,
      settings.target, settings.unroll);
  for (int64_t i : fixedOrder)
    run += " " + std::to_string(i);
  uint64_t runHash = llvm::xxh3_64bits(run);
  // Where checkpoints go and come from: one manifest names every rank's
  // state file, so they must be one directory.
  uint64_t checkpointHash = llvm::xxh3_64bits(
      llvm::formatv("{0}\n{1}\n{2}", settings.checkpointDir,
                    settings.checkpointEvery, settings.resumeDir)
          .str());
  // The starting parameters (initialized, --load-params or --resume):
  // replicas must start equal. Not the running statistics, which each
  // rank moves from its own micro-batches (as DDP without SyncBatchNorm).
  uint64_t stateHash = 0;
  for (const HostTensor &t : st.params)
    stateHash = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                    static_cast<const uint8_t *>(t.data()), t.numBytes())) ^
                (stateHash * 0x9E3779B97F4A7C15ull);
  std::vector<uint64_t> models = collectives::allGather(modelHash);
  std::vector<uint64_t> runs = collectives::allGather(runHash);
  std::vector<uint64_t> checkpoints = collectives::allGather(checkpointHash);
  std::vector<uint64_t> states = collectives::allGather(stateHash);
  for (size_t r = 1; r < models.size(); ++r) {
    const char *what =
        models[r] != models[0]
            ? "a different model (after the command line's schedule)"
        : runs[r] != runs[0] ? "different run settings (epochs, steps, "
                               "order, data, seed, lr, flags)"
        : checkpoints[r] != checkpoints[0]
            ? "different checkpoint settings (--checkpoint-dir, "
              "--checkpoint-every, --resume)"
        : states[r] != states[0]
            ? "different starting parameters (--load-params)"
            : nullptr;
    if (!what)
      continue;
    if (lead)
      reportError(llvm::formatv("the ranks disagree: rank {0} has {1} than "
                                "rank 0; every rank must run the same "
                                "command on the same data",
                                r, what));
    // Every rank saw the mismatch; rank 0's line is out before any rank
    // ends the job.
    collectives::barrier();
    return false;
  }
  return true;
}

void Trainer::printHeader(double compileMs) {
  out << "gacc-run: " << data->describe() << "\n";
  const char *most = ramp ? "at most " : "";
  out << "gacc-run: @" << sig.name << ": " << sig.numParams
      << (sig.numParams == 1 ? " parameter" : " parameters");
  if (sig.numTrainable != sig.numParams)
    out << " (" << sig.numParams - sig.numTrainable << " frozen)";
  out << ", micro-batch " << sig.microBatch << " × " << most
      << sig.accumSteps << " accumulation steps";
  if (settings.ranks > 1)
    out << " × " << settings.ranks << " ranks (data-parallel)";
  out << " = effective batch " << most << eff << ", " << windows.size()
      << (windows.size() == 1 ? " optimizer step " : " optimizer steps ");
  if (ramp)
    out << "in epoch " << pos.epoch + 1;
  else
    out << "per epoch";
  out << ", lr " << llvm::format("%g", settings.lr) << ", compiled in "
      << llvm::format("%.0f", compileMs) << " ms\n";
  if (settings.target == "cpu")
    out << "gacc-run: cpu: " << settings.threads
        << (settings.threads == 1 ? " thread" : " threads")
        << (settings.ranks > 1 ? " per rank" : "") << ", OpenBLAS "
        << gaccrt::blasKernels() << " kernels\n";
  if (ramp)
    out << "gacc-run: accumulation schedule: " << schedule.describe()
        << " (micro-batch " << sig.microBatch << "; each window normalized "
        << "by its own count)\n";
  // Frozen parameters are never trained: without a file they stay what
  // their initializers drew (LoRA's base weights come from a checkpoint).
  if (settings.loadParams.empty() && settings.resumeDir.empty() &&
      sig.numTrainable < sig.numParams) {
    unsigned frozen = sig.numParams - sig.numTrainable;
    out << "gacc-run: note: " << frozen
        << (frozen == 1 ? " frozen parameter keeps what its initializer drew"
                        : " frozen parameters keep what their initializers "
                          "drew")
        << " (no --load-params):";
    unsigned shown = 0;
    for (unsigned i = 0; i < sig.numParams && shown < 3; ++i)
      if (!llvm::is_contained(sig.trainable, i)) {
        out << " @" << sig.paramNames[i];
        ++shown;
      }
    if (frozen > shown)
      out << " ...";
    out << "\n";
  }
  if (!notLoaded.empty()) {
    out << "gacc-run: --load-params: " << notLoaded.size()
        << " trainable parameters not in the file start from their "
        << "initializers:";
    for (const std::string &name : notLoaded)
      out << " " << name;
    out << "\n";
  }
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
/// growth_interval clean steps it grows.
void Trainer::advanceLossScale(const StepOutcome &o) {
  if (o.skipped) {
    ++pos.skippedSteps;
    pos.lossScale *= settings.backoffFactor;
    pos.cleanSteps = 0;
    return;
  }
  ++pos.optimizerSteps;
  if (sig.lossScaling && ++pos.cleanSteps == settings.growthInterval) {
    pos.lossScale *= settings.growthFactor;
    pos.cleanSteps = 0;
  }
}

/// A progress line and a metrics row, every --log-every steps, at the end
/// of each epoch and when `force`d (a step that stops the run).
int Trainer::logStep(int64_t epoch, int64_t w, const StepOutcome &o,
                     bool force) {
  if (!force && pos.globalStep % settings.logEvery != 0 &&
      w != windows.size() - 1 && pos.globalStep != settings.maxSteps)
    return 0;
  out << llvm::format("step %5lld  epoch %lld  %5.1f%%  ",
                      (long long)pos.globalStep, (long long)epoch + 1,
                      100.0 * (w + 1) / windows.size())
      << "loss " << formatNumber(o.objective, "%.4f")
      << llvm::format("  lr %.4g  ", o.lr) << "grad norm "
      << formatNumber(o.gradNorm, "%.4g") << "  " << stepTime(o.ms, 1);
  if (ramp)
    out << llvm::formatv("  batch {0} (N = {1}{2})", o.samples, o.accumSteps,
                         o.samples <
                                 o.accumSteps * sig.microBatch * settings.ranks
                             ? ", the epoch's short last window, padded"
                             : "");
  if (sig.lossScaling)
    out << llvm::format("  loss scale %g%s", o.lossScale,
                        o.skipped ? "  (skipped: non-finite)" : "");
  if (settings.ranks > 1)
    out << "  collectives " << o.collectives;
  out << "\n";
  out.flush();
  llvm::json::Object row{{"step", pos.globalStep},
                         {"epoch", epoch + 1},
                         {"loss", jsonNumber(o.objective)},
                         {"count", o.count},
                         {"effective_batch", o.samples},
                         {"accum_steps", o.accumSteps},
                         {"lr", o.lr},
                         {"grad_norm", jsonNumber(o.gradNorm)},
                         {"collectives", o.collectives}};
  if (sig.lossScaling) {
    row["loss_scale"] = o.lossScale;
    row["skipped"] = o.skipped;
    row["skipped_steps"] = pos.skippedSteps;
  }
  return writeMetric(std::move(row));
}

/// One --metrics row, written and flushed now (rank 0).
int Trainer::writeMetric(llvm::json::Object row) {
  if (!metrics.isOpen())
    return 0;
  // In order with the progress lines when both go to standard output.
  out.flush();
  if (llvm::Error e = metrics.writeLine(jsonLine(std::move(row))))
    return reportFailure(std::move(e));
  return 0;
}

/// A loss that is not finite (without loss scaling to skip it) stops the
/// run; its row is logged first, so the metrics show how it got there.
int Trainer::reportDivergence(int64_t epoch, int64_t w, const StepOutcome &o) {
  if (int status = logStep(epoch, w, o, /*force=*/true))
    return status;
  // The first window's loss comes from the initial parameters, so a
  // learning rate cannot have caused it.
  if (pos.globalStep == 1)
    reportError("loss is " + nonFiniteName(o.objective) +
                " at optimizer step 1, before any update (not the learning "
                "rate): check the body for a log or division of values that "
                "can be zero, the initializers and the data");
  else
    reportError("loss became " + nonFiniteName(o.objective) +
                " at optimizer step " + llvm::Twine(pos.globalStep) +
                "; lower --lr");
  return 1;
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
  return writeMetric(std::move(obj));
}

/// --save-gradients: the gradient the last update applied, each
/// accumulator divided by the window's count (and the loss scale); the
/// trainable parameters only.
llvm::Error Trainer::saveGradients(float count, float scale) {
  std::vector<HostTensor> grads;
  for (auto [k, i] : llvm::enumerate(sig.trainable)) {
    const JitArg &acc = st.args[sig.accArg(k)];
    HostTensor g(DType::F32, shapeOf(sig.paramTypes[i]));
    if (onDevice && !settings.arenaUpdate)
      mirror.toHost(sig.accArg(k));
    // The host tensor, or the arena the argument points into.
    std::memcpy(g.data(),
                acc.kind == JitArg::Tensor ? acc.tensor->data() : acc.pointer,
                g.numBytes());
    float divisor = std::max(count, 1.0f) * scale;
    for (int64_t e = 0, n = g.numElements(); e < n; ++e)
      g.f32()[e] /= divisor;
    grads.push_back(std::move(g));
  }
  NamedTensors named;
  for (auto [k, i] : llvm::enumerate(sig.trainable))
    named.push_back({sig.paramNames[i], TensorBytes(grads[k])});
  return saveSafetensors(settings.saveGradients, named);
}

void Trainer::reportMemory(llvm::json::Object &summary) {
  if (!settings.memoryPlan)
    return;
  // What the step holds at most: on the CPU its persistent buffers, the
  // step arena and the buffers outside it.
  uint64_t planned = settings.stepArena || onDevice
                         ? settings.memoryPlan->heldPeakBytes
                         : settings.memoryPlan->peakBytes();
  summary["planned_peak_bytes"] = int64_t(planned);
  // Without a step there is nothing to measure: the process's own memory
  // is not the step's.
  if (stepMs.empty()) {
    out << "memory: planned peak " << formatBytes(planned)
        << ", not measured: this process ran no optimizer step\n";
    return;
  }
  // The device's arena peak with the scalar pool and cuBLAS workspace; on
  // the CPU the resident growth of the step's state, the step arena's
  // resident pages (faulted in by the first step, so inside the base) and
  // the largest growth while training.
  uint64_t measured;
  if (onDevice) {
    measured = cuda::managedPeakBytes();
  } else {
    uint64_t peak = std::max(trainingPeakBytes, rss::peakBytes());
    measured = measuredStateBytes + stepArenaResidentBytes() +
               (peak > trainingBaseBytes ? peak - trainingBaseBytes : 0);
  }
  out << "memory: planned peak " << formatBytes(planned) << ", measured "
      << formatBytes(measured)
      << (onDevice ? " (device arena, scalar pool and cuBLAS workspace)"
                   : " (resident growth of the step's state and of "
                     "training)")
      << llvm::format(", %+.1f%%\n", 100.0 *
                                         (double(measured) - double(planned)) /
                                         std::max<double>(planned, 1));
  summary["measured_peak_bytes"] = int64_t(measured);
}

/// The summary line and row, the metrics file, the saved parameters and
/// gradients.
int Trainer::finish() {
  double median = 0, total = 0;
  if (!stepMs.empty()) {
    std::vector<double> sorted = stepMs;
    std::sort(sorted.begin(), sorted.end());
    median = sorted[sorted.size() / 2];
    for (double v : stepMs)
      total += v;
  }
  // This process's samples over this process's step time (a resumed run
  // counts from where it resumed).
  double samplesPerS =
      total > 0 ? (pos.samplesSeen - samplesAtStart) / (total / 1000.0) : 0;
  out << llvm::format("summary: %lld optimizer step%s, ",
                      (long long)pos.globalStep,
                      pos.globalStep == 1 ? "" : "s");
  // Loss scaling's skipped windows updated nothing: said where the count
  // of steps would hide them.
  if (pos.skippedSteps)
    out << (pos.skippedSteps == pos.globalStep ? "all " : "")
        << pos.skippedSteps << " skipped (non-finite gradients: no update), ";
  // A resumed run that had nothing left to do has no step time.
  if (stepMs.empty())
    out << "none run by this process";
  else
    out << "median " << stepTime(median, 2)
        << llvm::format(", %.0f samples/s", samplesPerS);
  out << llvm::format(", peak RSS %.1f MB", peakRssMb());
  if (settings.ranks > 1)
    out << " (rank 0 of " << settings.ranks << ")";
  if (onDevice)
    out << llvm::format(", peak device memory %.1f MB",
                        cuda::managedPeakBytes() / 1e6);
  for (const Metric &mt : lastEval)
    out << llvm::format(", %s %.4f", mt.key.c_str(), mt.value);
  out << "\n";
  if (onDevice && lead) {
    if (std::string gemms = cuda::cublasLtSummary(); !gemms.empty())
      out << "cublaslt: " << gemms << "\n";
    if (std::string attention = cudnn::summary(); !attention.empty())
      out << "cudnn: " << attention << "\n";
    out.flush();
    cuda::printProfile(stdout);
  }
  llvm::json::Object summary{{"summary", true},
                             {"optimizer_steps", pos.globalStep},
                             {"median_step_ms", median},
                             {"samples_per_s", samplesPerS},
                             {"peak_rss_mb", peakRssMb()},
                             {"micro_batch", sig.microBatch},
                             {"accum_steps", sig.accumSteps},
                             {"ranks", settings.ranks},
                             {"target", settings.target},
                             {"effective_batch", eff}};
  if (ramp)
    summary["accum_schedule"] = schedule.str();
  if (settings.target == "cpu")
    summary["cpu_threads"] = settings.threads;
  if (onDevice)
    summary["peak_device_mb"] = cuda::managedPeakBytes() / 1e6;
  reportMemory(summary);
  if (sig.lossScaling) {
    summary["loss_scale"] = pos.lossScale;
    summary["skipped_steps"] = pos.skippedSteps;
  }
  for (const Metric &mt : lastEval)
    summary[mt.key] = mt.value;
  if (int status = writeMetric(std::move(summary)))
    return status;
  syncParamsToHost();
  if (!lead)
    return 0;
  if (!settings.saveParams.empty()) {
    NamedTensors named;
    for (unsigned i = 0; i < sig.numParams; ++i)
      named.push_back({sig.paramNames[i], TensorBytes(st.params[i])});
    // Running statistics beside the weights, as torch's state_dict.
    for (unsigned q = 0; q < sig.numStatistics; ++q)
      named.push_back({sig.statisticNames[q], TensorBytes(st.statistics[q])});
    if (llvm::Error e = saveSafetensors(settings.saveParams, named))
      return reportFailure(llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--save-params " + llvm::toString(std::move(e))));
  }
  if (!settings.saveEma.empty()) {
    if (emaWeights.empty())
      for (const HostTensor &p : st.params)
        emaWeights.emplace_back(p.dtype, p.shape);
    copyMovingAverages();
    NamedTensors named;
    for (unsigned i = 0; i < sig.numParams; ++i)
      named.push_back({sig.paramNames[i], TensorBytes(emaWeights[i])});
    if (llvm::Error e = saveSafetensors(settings.saveEma, named))
      return reportFailure(llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--save-ema " + llvm::toString(std::move(e))));
  }
  // The gradient of this run's last step (none after a resume that ran no
  // step: the accumulators then hold no applied gradient).
  if (!settings.saveGradients.empty() && !stepMs.empty() && last.skipped) {
    reportError("--save-gradients: the last window's gradients were not "
                "finite and loss scaling skipped its update; " +
                settings.saveGradients + " is not written");
    return 1;
  }
  if (!settings.saveGradients.empty() && !stepMs.empty())
    if (llvm::Error e = saveGradients(
            last.count, sig.lossScaling ? last.lossScale : 1.0f))
      return reportFailure(llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--save-gradients " + llvm::toString(std::move(e))));
  return 0;
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
  if (!o.skipped && !std::isfinite(o.objective))
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
