//===- Training.cpp - gacc-run's training driver --------------------------===//
//
// Initializes the parameters, compiles the step with
// gacc-lower-to-cpu-pipeline, feeds it one window (N micro-batches) per
// optimizer step from a data source, evaluates after each epoch, and
// reports progress, metrics and a timing summary.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/Options.h"

#include "passes/Pipelines.h"
#include "runtime/CpuJit.h"
#include "tools/gacc-run/DataSources.h"
#include "runtime/Initializers.h"
#include "runtime/Safetensors.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <sys/resource.h>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

namespace {

DType dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  return t.isInteger(64) ? DType::I64 : DType::I32;
}

std::vector<int64_t> shapeOf(ShapedType t) {
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

/// Reads --order-file: one index in [0, n) per line.
llvm::Expected<std::vector<int64_t>> readOrderFile(const std::string &path,
                                                   int64_t n) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + buf.getError().message());
  std::vector<int64_t> order;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    llvm::StringRef s = line.trim();
    if (s.empty())
      continue;
    int64_t v;
    if (s.getAsInteger(10, v) || v < 0 || v >= n)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          path + ":" + llvm::Twine(i + 1) + ": '" + s +
              "' is not a training-sample index in [0, " + llvm::Twine(n) +
              ")");
    order.push_back(v);
  }
  if (order.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": no indices");
  return order;
}

/// The documented default order: Fisher–Yates with std::mt19937_64 seeded
/// by seed·1000003 + epoch + 1; j = rng() mod (i + 1) for i = n−1 … 1.
std::vector<int64_t> shuffledOrder(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  std::mt19937_64 rng(seed * 1000003ull + uint64_t(epoch) + 1);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[rng() % uint64_t(i + 1)]);
  return order;
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

std::string jsonLine(llvm::json::Object obj) {
  std::string line;
  llvm::raw_string_ostream os(line);
  os << llvm::json::Value(std::move(obj));
  return line;
}

} // namespace

int gaccrt::train(ModuleOp model, TrainStepOp step, const StepSignature &sig,
                  const RunSettings &settings) {
  auto loss = step.getLoss().getDefiningOp<CrossEntropyOp>();
  if (!loss) {
    reportError("@" + sig.name + " must end in gacc.cross_entropy to train");
    return kExitBadInput;
  }
  auto source = createDataSource(settings.dataset, settings.dataDir, sig,
                                 loss.getIgnoreIndex());
  if (!source) {
    reportError(llvm::toString(source.takeError()));
    return kExitBadInput;
  }
  DataSource &data = **source;

  // --- Parameters, accumulators and optimizer state: allocated once.
  unsigned P = sig.numParams, S = sig.statePerParam;
  std::vector<HostTensor> params, accs, states;
  std::mt19937_64 initRng(settings.seed);
  for (unsigned i = 0; i < P; ++i) {
    params.emplace_back(DType::F32, shapeOf(sig.paramTypes[i]));
    initializeParameter(sig.paramInits[i], params.back(), initRng);
    accs.emplace_back(DType::F32, shapeOf(sig.paramTypes[i]));
    for (unsigned s = 0; s < S; ++s)
      states.emplace_back(DType::F32, shapeOf(sig.paramTypes[i]));
  }
  if (!settings.loadParams.empty()) {
    auto loaded = loadSafetensors(settings.loadParams);
    if (!loaded) {
      reportError(llvm::toString(loaded.takeError()));
      return kExitBadInput;
    }
    for (unsigned i = 0; i < P; ++i) {
      auto it = loaded->find(sig.paramNames[i]);
      if (it == loaded->end() || it->second.dtype != DType::F32 ||
          it->second.shape != params[i].shape) {
        reportError(settings.loadParams + ": no F32 tensor '" +
                    sig.paramNames[i] + "' with the parameter's shape");
        return kExitBadInput;
      }
      params[i] = it->second;
    }
  }

  std::vector<int64_t> fixedOrder;
  if (!settings.orderFile.empty()) {
    auto order = readOrderFile(settings.orderFile, data.numTrain());
    if (!order) {
      reportError(llvm::toString(order.takeError()));
      return kExitBadInput;
    }
    fixedOrder = std::move(*order);
  }

  // --- Compile with the library pipeline (the one gacc-opt registers).
  OwningOpRef<ModuleOp> module(model.clone());
  PassManager pm(model.getContext());
  CPUPipelineOptions pipelineOptions;
  pipelineOptions.unroll = settings.unroll;
  pipelineOptions.blas = settings.blas;
  buildLowerToCPUPipeline(pm, pipelineOptions);
  auto compileStart = std::chrono::steady_clock::now();
  if (failed(pm.run(*module))) {
    reportError("compilation failed");
    return 1;
  }
  auto jitOr = CpuJit::create(*module);
  if (!jitOr) {
    reportError("JIT compilation failed: " +
                llvm::toString(jitOr.takeError()));
    return 1;
  }
  CpuJit &jit = **jitOr;
  // The ExecutionEngine compiles lazily: materialize both functions now so
  // that the compile time is reported here and not in the first step.
  for (const std::string &fn : {sig.name, sig.predictName()})
    if (llvm::Error e = jit.materialize(fn)) {
      reportError("JIT compilation failed: " + llvm::toString(std::move(e)));
      return 1;
    }
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();

  int64_t n = sig.accumSteps, m = sig.microBatch, eff = n * m;
  std::vector<HostTensor> windows;
  for (size_t j = 0; j < sig.inputTypes.size(); ++j)
    windows.emplace_back(dtypeOf(sig.inputTypes[j].getElementType()),
                         shapeOf(sig.windowInputType(j)));
  HostTensor &targets = windows[sig.targetInput];

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
  llvm::outs() << "gacc-run: " << data.describe() << "\n";
  llvm::outs() << "gacc-run: @" << sig.name << ": " << P
               << " parameters, micro-batch " << m << " × " << n
               << " accumulation steps = effective batch " << eff << ", "
               << stepsPerEpoch << " optimizer steps per epoch, lr "
               << llvm::format("%g", settings.lr) << ", compiled in "
               << llvm::format("%.0f", compileMs) << " ms\n";

  std::vector<JitArg> stepArgs;
  for (auto &t : params)
    stepArgs.push_back(JitArg::of(t));
  for (auto &t : accs)
    stepArgs.push_back(JitArg::of(t));
  for (auto &t : states)
    stepArgs.push_back(JitArg::of(t));
  for (auto &t : windows)
    stepArgs.push_back(JitArg::of(t));
  stepArgs.push_back(JitArg::f32(float(settings.lr)));
  stepArgs.push_back(JitArg::i64(0));
  JitPredictor predictor(jit, sig, params);

  std::vector<std::string> metricLines;
  std::vector<double> stepMs;
  int64_t globalStep = 0, samplesSeen = 0;
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
      // Fill the window; slots past the end of the epoch are padding whose
      // targets are the loss's ignore_index, so they add nothing and are
      // not counted by the step.
      int64_t begin = w * eff, end = std::min(begin + eff, perEpoch);
      for (auto &t : windows)
        std::memset(t.data(), 0, t.numBytes());
      for (int64_t i = 0, e = targets.numElements(); i < e; ++i)
        targets.setInt(i, loss.getIgnoreIndex());
      for (int64_t k = begin; k < end; ++k)
        data.fillTrain(order[k], k - begin, windows);
      stepArgs.back().i = globalStep;
      float results[2] = {0, 0}; // objective, count
      auto t0 = std::chrono::steady_clock::now();
      llvm::Error err = jit.call(sig.name, stepArgs, results);
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      if (err) {
        reportError(llvm::toString(std::move(err)));
        return 1;
      }
      float objective = results[0], count = results[1];
      stepMs.push_back(ms);
      samplesSeen += end - begin;
      ++globalStep;
      if (!std::isfinite(objective)) {
        reportError("loss became " + std::to_string(objective) +
                    " at optimizer step " + llvm::Twine(globalStep) +
                    "; lower --lr");
        return 1;
      }
      if (globalStep % settings.logEvery == 0 || w == stepsPerEpoch - 1 ||
          globalStep == settings.maxSteps) {
        llvm::outs() << llvm::format(
            "step %5lld  epoch %lld  %5.1f%%  loss %.4f  lr %g  %.1f ms/step\n",
            (long long)globalStep, (long long)epoch + 1,
            100.0 * (w + 1) / stepsPerEpoch, objective, settings.lr, ms);
        llvm::outs().flush();
        metricLines.push_back(jsonLine(llvm::json::Object{{"step", globalStep},
                                        {"epoch", epoch + 1},
                                        {"loss", objective},
                                        {"count", count},
                                        {"lr", settings.lr}}));
      }
    }
    if (globalStep == 0 || settings.noEval)
      continue;
    auto eval = data.evaluate(predictor);
    if (!eval) {
      reportError(llvm::toString(eval.takeError()));
      return 1;
    }
    if (eval->empty())
      continue;
    lastEval = *eval;
    llvm::json::Object obj{{"epoch", epoch + 1}, {"step", globalStep}};
    llvm::outs() << "epoch " << epoch + 1;
    for (const Metric &mt : lastEval) {
      llvm::outs() << llvm::format("  %s %.4f", mt.key.c_str(), mt.value);
      obj[mt.key] = mt.value;
    }
    llvm::outs() << "\n";
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
  llvm::outs() << llvm::format(
      "summary: %lld optimizer steps, median %.2f ms/step, %.0f samples/s, "
      "peak RSS %.1f MB",
      (long long)globalStep, median, samplesPerS, peakRssMb());
  for (const Metric &mt : lastEval)
    llvm::outs() << llvm::format(", %s %.4f", mt.key.c_str(), mt.value);
  llvm::outs() << "\n";
  llvm::json::Object summary{{"summary", true},
                             {"optimizer_steps", globalStep},
                             {"median_step_ms", median},
                             {"samples_per_s", samplesPerS},
                             {"peak_rss_mb", peakRssMb()},
                             {"micro_batch", m},
                             {"accum_steps", n},
                             {"effective_batch", eff}};
  for (const Metric &mt : lastEval)
    summary[mt.key] = mt.value;
  metricLines.push_back(jsonLine(std::move(summary)));
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
