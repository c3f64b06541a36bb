//===- Training.cpp - gacc-run's training driver --------------------------===//
//
// Feeds the compiled step one window per optimizer step (this rank's slice
// of the global effective batch) from a data source, on the CPU or the cuda
// target, evaluates after each epoch, and reports progress, metrics and a
// timing summary.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/StepRuntime.h"

#include "runtime/Collectives.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"
#include "runtime/Safetensors.h"

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

} // namespace

namespace {

/// The step's predict function over host tensors.
class JitPredictor : public Predictor {
public:
  JitPredictor(CpuJit &jit, const StepSignature &sig,
               std::vector<HostTensor> &params)
      : jit(jit), name(sig.predictName()) {
    for (size_t j = 0; j < sig.inputTypes.size(); ++j)
      if (j != sig.targetInput)
        ins.emplace_back(dtypeOf(sig.inputTypes[j].getElementType()),
                         shapeOf(sig.inputTypes[j]));
    out = HostTensor(DType::F32, shapeOf(sig.predictionType));
    for (auto &t : params)
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

/// A number for the metrics file: JSON has no NaN or infinity, so a
/// non-finite value (a skipped fp16 window) is written as null.
llvm::json::Value jsonNumber(double v) {
  return std::isfinite(v) ? llvm::json::Value(v) : llvm::json::Value(nullptr);
}

std::string jsonLine(llvm::json::Object obj) {
  std::string line;
  llvm::raw_string_ostream os(line);
  os << llvm::json::Value(std::move(obj));
  return line;
}

} // namespace

int gaccrt::train(ModuleOp model, TrainStepOp step, const StepSignature &sig,
                  const RunSettings &settings) {
  CrossEntropyOp loss;
  std::unique_ptr<DataSource> source =
      sourceForStep(step, sig, settings, loss);
  if (!source)
    return kExitBadInput;
  DataSource &data = *source;

  // --- Parameters, accumulators and optimizer state: allocated once.
  unsigned P = sig.numParams;
  StepState st;
  if (llvm::Error e = initialParameters(sig, settings, st.params)) {
    reportError(llvm::toString(std::move(e)));
    return kExitBadInput;
  }
  bindStepState(sig, settings, st);
  std::vector<HostTensor> &params = st.params;

  std::vector<int64_t> fixedOrder;
  if (!settings.orderFile.empty()) {
    auto order = readOrderFile(settings.orderFile, data.numTrain());
    if (!order) {
      reportError(llvm::toString(order.takeError()));
      return kExitBadInput;
    }
    fixedOrder = std::move(*order);
  }

  bool onDevice = settings.target == "cuda";
  if (onDevice) {
    // Device memory: one managed reservation of 90% of the device's memory
    // (pages are backed on first touch), carved for every buffer.
    uint64_t reserve = uint64_t(cuda::deviceInfo().memoryBytes * 0.9);
    std::string problem = cuda::reserveManagedArena(reserve);
    if (problem.empty() && settings.blas)
      problem = cuda::loadCublas();
    if (!problem.empty()) {
      reportError("--target cuda: " + problem);
      return 1;
    }
  }
  auto compileStart = std::chrono::steady_clock::now();
  auto jitOr = compileStep(model, sig, settings);
  if (!jitOr) {
    reportError(llvm::toString(jitOr.takeError()));
    return 1;
  }
  // --arena-update: parameters, accumulators and state in flat arenas
  // (host memory, or managed memory on the cuda target).
  StepArenas arenas;
  std::vector<std::unique_ptr<void, void (*)(void *)>> hostBlocks;
  if (settings.arenaUpdate) {
    auto alloc = [&](size_t bytes) -> void * {
      size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
      void *p = onDevice ? gacc_cuda_malloc(rounded)
                         : std::aligned_alloc(64, rounded);
      if (p && !onDevice)
        hostBlocks.emplace_back(p, &std::free);
      if (p)
        std::memset(p, 0, rounded);
      return p;
    };
    if (llvm::Error e = arenas.bind(sig, st, alloc)) {
      reportError(llvm::toString(std::move(e)));
      return 1;
    }
  }
  // On the cuda target the step runs from a second JIT (NVVM pipeline);
  // evaluation stays on the CPU JIT above.
  std::unique_ptr<CpuJit> deviceJit;
  DeviceMirror mirror;
  if (onDevice) {
    auto d = compileStep(model, sig, settings, /*onDevice=*/true);
    if (!d) {
      reportError(llvm::toString(d.takeError()));
      return 1;
    }
    deviceJit = std::move(*d);
    // Data-parallel on the GPU: the one all-reduce per step runs on NCCL.
    if (settings.ranks > 1) {
      std::string problem = collectives::useNccl();
      if (!problem.empty()) {
        reportError("--target cuda --data-parallel: " + problem);
        return 1;
      }
    }
    if (llvm::Error e = mirror.bind(st.args)) {
      reportError(llvm::toString(std::move(e)));
      return 1;
    }
  }
  CpuJit &jit = onDevice ? *deviceJit : **jitOr;
  CpuJit &hostJit = **jitOr;
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();

  // Data parallelism: the global effective batch is m × N × ranks; rank r
  // trains on its r-th slice of N · m consecutive samples of it.
  int64_t n = sig.accumSteps, m = sig.microBatch, ranks = settings.ranks;
  int64_t perRank = n * m, eff = perRank * ranks;
  // Only rank 0 prints, evaluates and writes files.
  bool lead = settings.rank == 0;
  llvm::raw_ostream &out = lead ? llvm::outs() : llvm::nulls();

  int64_t perEpoch = fixedOrder.empty() ? data.numTrain()
                                        : int64_t(fixedOrder.size());
  // The last window of an epoch may be short: it trains on what it holds,
  // unless --drop-last skips it.
  int64_t stepsPerEpoch = settings.dropLast ? perEpoch / eff
                                            : (perEpoch + eff - 1) / eff;
  if (stepsPerEpoch == 0) {
    reportError("the epoch holds " + llvm::Twine(perEpoch) +
                " samples, fewer than one effective batch of " +
                llvm::Twine(eff) + ", and --drop-last skips it");
    return kExitBadInput;
  }
  // Every rank must run the same job: compare fingerprints of the model
  // and of the run settings before the first collective, so that ranks
  // that disagree stop with one line instead of hanging in (or corrupting)
  // an all-reduce of another size or count.
  if (ranks > 1) {
    std::string text;
    llvm::raw_string_ostream os(text);
    model->print(os);
    uint64_t modelHash = llvm::xxh3_64bits(text);
    std::string run = llvm::formatv(
        "{0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10}", settings.epochs,
        settings.maxSteps, settings.dropLast, perEpoch, stepsPerEpoch,
        data.numTrain(), settings.seed, settings.lr, settings.checkReplicas,
        settings.target, settings.unroll);
    for (int64_t i : fixedOrder)
      run += " " + std::to_string(i);
    uint64_t runHash = llvm::xxh3_64bits(run);
    std::vector<uint64_t> models = collectives::allGather(modelHash);
    std::vector<uint64_t> runs = collectives::allGather(runHash);
    for (size_t r = 1; r < models.size(); ++r) {
      const char *what =
          models[r] != models[0]
              ? "a different model (after the command line's schedule)"
          : runs[r] != runs[0] ? "different run settings (epochs, steps, "
                                 "order, data, seed, lr, flags)"
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
      return kExitBadInput;
    }
  }
  out << "gacc-run: " << data.describe() << "\n";
  out << "gacc-run: @" << sig.name << ": " << P << " parameters, micro-batch "
      << m << " × " << n << " accumulation steps";
  if (ranks > 1)
    out << " × " << ranks << " ranks (data-parallel)";
  out << " = effective batch " << eff << ", " << stepsPerEpoch
      << " optimizer steps per epoch, lr " << llvm::format("%g", settings.lr)
      << ", compiled in " << llvm::format("%.0f", compileMs) << " ms\n";

  std::vector<JitArg> &stepArgs = onDevice ? mirror.args : st.args;
  JitPredictor predictor(hostJit, sig, params);
  // On the cuda target the parameters live in managed memory during
  // training: copied back before evaluation, replica checks and saving.
  auto syncParamsToHost = [&] {
    if (settings.arenaUpdate)
      arenas.paramsToHost(params);
    else if (onDevice)
      for (unsigned i = 0; i < P; ++i)
        mirror.toHost(i);
  };

  std::vector<std::string> metricLines;
  std::vector<double> stepMs;
  int64_t globalStep = 0, samplesSeen = 0;
  // Dynamic loss scaling state (GradScaler's), kept by the host.
  int64_t optimizerSteps = 0, skippedSteps = 0, cleanSteps = 0;
  float lossScale = settings.initialLossScale;
  std::vector<Metric> lastEval;
  bool stop = false;
  for (int64_t epoch = 0; epoch < settings.epochs && !stop; ++epoch) {
    std::vector<int64_t> order =
        fixedOrder.empty() ? shuffledOrder(data.numTrain(), settings.seed, epoch)
                           : fixedOrder;
    for (int64_t w = 0; w < stepsPerEpoch; ++w) {
      if (settings.maxSteps >= 0 && globalStep >= settings.maxSteps) {
        stop = true;
        break;
      }
      // This rank's slice [begin, end) of the global window; a rank past
      // the end of a short last window gets padding only.
      int64_t windowBegin = w * eff;
      int64_t windowEnd = std::min(windowBegin + eff, perEpoch);
      int64_t end = std::min(windowBegin + (settings.rank + 1) * perRank,
                             windowEnd);
      int64_t begin = std::min(windowBegin + settings.rank * perRank, end);
      fillWindow(data, order, begin, end, sig.targetInput,
                 loss.getIgnoreIndex(), st.windows);
      if (onDevice)
        for (size_t j = 0; j < sig.inputTypes.size(); ++j)
          mirror.toDevice(sig.inputArg(j));
      // The optimizer's step count advances only on applied updates.
      int64_t stepIndex = optimizerSteps;
      stepArgs[sig.stepArg()].i = stepIndex;
      if (sig.lossScaling)
        stepArgs[sig.lossScaleArg()].f = lossScale;
      // objective, count, lr, norm (, skipped)
      float results[StepSignature::kMaxResults] = {};
      uint64_t collectivesBefore = collectives::count();
      auto t0 = std::chrono::steady_clock::now();
      llvm::Error err = jit.call(
          sig.name, stepArgs,
          llvm::MutableArrayRef<float>(results, sig.numResults()));
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      if (!err && onDevice) {
        std::string e = cuda::lastError();
        if (!e.empty())
          err = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                        "cuda: " + e);
      }
      if (err) {
        reportError(llvm::toString(std::move(err)));
        return 1;
      }
      int64_t stepCollectives =
          int64_t(collectives::count() - collectivesBefore);
      float objective = results[0], count = results[1], lrUsed = results[2],
            gradNorm = results[3];
      bool skipped = sig.lossScaling && results[4] != 0.0f;
      float scaleUsed = lossScale;
      if (settings.arenaUpdate) {
        // The deferred update: the arena kernels over every parameter.
        auto t1 = std::chrono::steady_clock::now();
        if (llvm::Error e = arenas.update(
                jit, sig, step.getMaxGradNorm().has_value(), count, skipped,
                float(settings.lr), stepIndex,
                sig.lossScaling ? scaleUsed : 1.0f)) {
          reportError(llvm::toString(std::move(e)));
          return 1;
        }
        if (std::string e = onDevice ? cuda::lastError() : ""; !e.empty()) {
          reportError("cuda: " + e);
          return 1;
        }
        ms += std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t1)
                  .count();
      }
      stepMs.push_back(ms);
      samplesSeen += windowEnd - windowBegin;
      ++globalStep;
      if (settings.checkReplicas) {
        syncParamsToHost();
        std::vector<uint64_t> hashes =
            collectives::allGather(hashParameters(params));
        for (size_t r = 1; r < hashes.size(); ++r)
          if (hashes[r] != hashes[0]) {
            if (lead)
              reportError(llvm::formatv(
                  "--check-replicas: after optimizer step {0} rank {1} holds "
                  "different parameters from rank 0 (hash {2:x} vs {3:x})",
                  globalStep, r, hashes[r], hashes[0]));
            collectives::barrier();
            return 1;
          }
      }
      if (skipped) {
        // torch.cuda.amp.GradScaler: back off and count the skip.
        ++skippedSteps;
        lossScale *= settings.backoffFactor;
        cleanSteps = 0;
      } else {
        ++optimizerSteps;
        if (sig.lossScaling && ++cleanSteps == settings.growthInterval) {
          lossScale *= settings.growthFactor;
          cleanSteps = 0;
        }
      }
      if (!skipped && !std::isfinite(objective)) {
        reportError("loss became " + std::to_string(objective) +
                    " at optimizer step " + llvm::Twine(globalStep) +
                    "; lower --lr");
        return 1;
      }
      if (globalStep % settings.logEvery == 0 || w == stepsPerEpoch - 1 ||
          globalStep == settings.maxSteps) {
        out << llvm::format(
            "step %5lld  epoch %lld  %5.1f%%  loss %.4f  lr %.4g  grad norm "
            "%.4g  %.1f ms/step",
            (long long)globalStep, (long long)epoch + 1,
            100.0 * (w + 1) / stepsPerEpoch, objective, lrUsed, gradNorm, ms);
        if (sig.lossScaling)
          out << llvm::format("  loss scale %g%s", scaleUsed,
                              skipped ? "  (skipped: non-finite)" : "");
        if (ranks > 1)
          out << "  collectives " << stepCollectives;
        out << "\n";
        out.flush();
        llvm::json::Object row{{"step", globalStep},
                               {"epoch", epoch + 1},
                               {"loss", jsonNumber(objective)},
                               {"count", count},
                               {"lr", lrUsed},
                               {"grad_norm", jsonNumber(gradNorm)},
                               {"collectives", stepCollectives}};
        if (sig.lossScaling) {
          row["loss_scale"] = scaleUsed;
          row["skipped"] = skipped;
          row["skipped_steps"] = skippedSteps;
        }
        metricLines.push_back(jsonLine(std::move(row)));
      }
    }
    if (globalStep == 0 || settings.noEval || !lead)
      continue;
    syncParamsToHost();
    auto eval = data.evaluate(predictor);
    if (!eval) {
      reportError(llvm::toString(eval.takeError()));
      return 1;
    }
    if (eval->empty())
      continue;
    lastEval = *eval;
    llvm::json::Object obj{{"epoch", epoch + 1}, {"step", globalStep}};
    out << "epoch " << epoch + 1;
    for (const Metric &mt : lastEval) {
      out << llvm::format("  %s %.4f", mt.key.c_str(), mt.value);
      obj[mt.key] = mt.value;
    }
    out << "\n";
    metricLines.push_back(jsonLine(std::move(obj)));
  }

  double median = 0, total = 0;
  if (!stepMs.empty()) {
    std::vector<double> sorted = stepMs;
    std::sort(sorted.begin(), sorted.end());
    median = sorted[sorted.size() / 2];
    for (double v : stepMs)
      total += v;
  }
  double samplesPerS = total > 0 ? samplesSeen / (total / 1000.0) : 0;
  out << llvm::format(
      "summary: %lld optimizer steps, median %.2f ms/step, %.0f samples/s, "
      "peak RSS %.1f MB",
      (long long)globalStep, median, samplesPerS, peakRssMb());
  if (ranks > 1)
    out << " (rank 0 of " << ranks << ")";
  if (onDevice)
    out << llvm::format(", peak device memory %.1f MB",
                        cuda::managedPeakBytes() / 1e6);
  for (const Metric &mt : lastEval)
    out << llvm::format(", %s %.4f", mt.key.c_str(), mt.value);
  out << "\n";
  if (onDevice && lead) {
    out.flush();
    cuda::printProfile(stdout);
  }
  llvm::json::Object summary{{"summary", true},
                             {"optimizer_steps", globalStep},
                             {"median_step_ms", median},
                             {"samples_per_s", samplesPerS},
                             {"peak_rss_mb", peakRssMb()},
                             {"micro_batch", m},
                             {"accum_steps", n},
                             {"ranks", ranks},
                             {"target", settings.target},
                             {"effective_batch", eff}};
  if (onDevice)
    summary["peak_device_mb"] = cuda::managedPeakBytes() / 1e6;
  if (sig.lossScaling) {
    summary["loss_scale"] = lossScale;
    summary["skipped_steps"] = skippedSteps;
  }
  for (const Metric &mt : lastEval)
    summary[mt.key] = mt.value;
  metricLines.push_back(jsonLine(std::move(summary)));
  syncParamsToHost();
  if (!lead)
    return 0;
  if (!settings.metricsPath.empty()) {
    std::string all;
    for (auto &l : metricLines)
      all += l + "\n";
    if (llvm::Error e = writeFileAtomically(settings.metricsPath, all)) {
      reportError(llvm::toString(std::move(e)));
      return 1;
    }
  }
  if (!settings.saveParams.empty()) {
    NamedTensors named;
    for (unsigned i = 0; i < P; ++i)
      named.push_back({sig.paramNames[i], &params[i]});
    if (llvm::Error e = saveSafetensors(settings.saveParams, named)) {
      reportError(llvm::toString(std::move(e)));
      return 1;
    }
  }
  return 0;
}
