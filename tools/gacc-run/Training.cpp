//===- Training.cpp - gacc-run's training driver --------------------------===//
//
// Loads Fashion-MNIST, initializes the parameters, compiles the step with
// gacc-lower-to-cpu-pipeline, feeds it one window (N micro-batches) per
// optimizer step, evaluates test accuracy per epoch, and reports progress,
// metrics and a timing summary.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/Options.h"

#include "passes/Pipelines.h"
#include "runtime/CpuJit.h"
#include "runtime/Datasets.h"
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

int gaccrt::train(ModuleOp model, TrainStepOp step, const StepSignature &sig,
                const RunSettings &settings) {
  auto loss = step.getLoss().getDefiningOp<CrossEntropyOp>();
  // gacc-run feeds Fashion-MNIST: [m, 784] f32 images and [m] labels.
  if (!loss || sig.inputTypes.size() != 2 || sig.targetInput != 1 ||
      !sig.inputTypes[0].getElementType().isF32() ||
      sig.inputTypes[0].getRank() != 2 || sig.inputTypes[1].getRank() != 1) {
    reportError("@" + sig.name +
                " must take [m, features] f32 images then [m] integer labels "
                "and end in gacc.cross_entropy to train on Fashion-MNIST");
    return kExitBadInput;
  }
  auto train = loadFashionMNIST(settings.dataDir, "train");
  if (!train) {
    reportError(llvm::toString(train.takeError()));
    return kExitBadInput;
  }
  auto test = loadFashionMNIST(settings.dataDir, "t10k");
  if (!test) {
    reportError(llvm::toString(test.takeError()));
    return kExitBadInput;
  }
  int64_t features = sig.inputTypes[0].getDimSize(1);
  int64_t classes = sig.predictionType.getDimSize(1);
  if (features != train->features || classes < 10) {
    reportError("@" + sig.name + " takes " + llvm::Twine(features) +
                " features and predicts " + llvm::Twine(classes) +
                " classes; Fashion-MNIST has " +
                llvm::Twine(train->features) + " features and 10 classes");
    return kExitBadInput;
  }

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
  auto jit = CpuJit::create(*module);
  if (!jit) {
    reportError("JIT compilation failed: " + llvm::toString(jit.takeError()));
    return 1;
  }
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();

  int64_t n = sig.accumSteps, m = sig.microBatch, eff = n * m;
  HostTensor xWin(DType::F32, shapeOf(sig.windowInputType(0)));
  HostTensor yWin(dtypeOf(sig.inputTypes[1].getElementType()),
                  shapeOf(sig.windowInputType(1)));
  std::vector<int64_t> fixedOrder;
  if (!settings.orderFile.empty()) {
    auto order = readOrderFile(settings.orderFile, train->count);
    if (!order) {
      reportError(llvm::toString(order.takeError()));
      return kExitBadInput;
    }
    fixedOrder = std::move(*order);
  }
  int64_t perEpoch = fixedOrder.empty() ? train->count
                                        : int64_t(fixedOrder.size());
  int64_t stepsPerEpoch = (perEpoch + eff - 1) / eff;
  llvm::outs() << "gacc-run: @" << sig.name << ": " << P
               << " parameters, micro-batch " << m << " × " << n
               << " accumulation steps = effective batch " << eff << ", "
               << stepsPerEpoch << " optimizer steps per epoch, lr "
               << settings.lr << ", compiled in "
               << llvm::format("%.0f", compileMs) << " ms\n";

  std::vector<JitArg> stepArgs;
  for (auto &t : params)
    stepArgs.push_back(JitArg::of(t));
  for (auto &t : accs)
    stepArgs.push_back(JitArg::of(t));
  for (auto &t : states)
    stepArgs.push_back(JitArg::of(t));
  stepArgs.push_back(JitArg::of(xWin));
  stepArgs.push_back(JitArg::of(yWin));
  stepArgs.push_back(JitArg::f32(float(settings.lr)));
  stepArgs.push_back(JitArg::i64(0));

  HostTensor xEval(DType::F32, shapeOf(sig.inputTypes[0]));
  HostTensor logits(DType::F32, shapeOf(sig.predictionType));
  std::vector<JitArg> predictArgs;
  for (auto &t : params)
    predictArgs.push_back(JitArg::of(t));
  predictArgs.push_back(JitArg::of(xEval));
  predictArgs.push_back(JitArg::of(logits));

  auto evaluate = [&]() -> llvm::Expected<double> {
    int64_t correct = 0;
    for (int64_t start = 0; start < test->count; start += m) {
      int64_t rows = std::min(m, test->count - start);
      std::memset(xEval.data(), 0, xEval.numBytes());
      std::memcpy(xEval.f32(), &test->images[start * features],
                  rows * features * sizeof(float));
      if (llvm::Error e = jit.get()->call(sig.predictName(), predictArgs))
        return std::move(e);
      for (int64_t i = 0; i < rows; ++i) {
        const float *row = logits.f32() + i * classes;
        int64_t best = std::max_element(row, row + classes) - row;
        correct += best == test->labels[start + i];
      }
    }
    return double(correct) / double(test->count);
  };

  std::vector<std::string> metricLines;
  std::vector<double> stepMs;
  int64_t globalStep = 0, samplesSeen = 0;
  double lastAccuracy = 0;
  bool stop = false;
  for (int64_t epoch = 0; epoch < settings.epochs && !stop; ++epoch) {
    std::vector<int64_t> order = fixedOrder.empty()
                                     ? shuffledOrder(train->count,
                                                     settings.seed, epoch)
                                     : fixedOrder;
    for (int64_t w = 0; w < stepsPerEpoch; ++w) {
      if (settings.maxSteps >= 0 && globalStep >= settings.maxSteps) {
        stop = true;
        break;
      }
      // Fill the window; slots past the end of the epoch are padding whose
      // label is the loss's ignore_index, so they add nothing, and the
      // count holds only the real samples.
      int64_t begin = w * eff, end = std::min(begin + eff, perEpoch);
      std::memset(xWin.data(), 0, xWin.numBytes());
      for (int64_t slot = 0; slot < eff; ++slot) {
        int64_t k = begin + slot;
        if (k < end) {
          int64_t idx = order[k];
          std::memcpy(xWin.f32() + slot * features,
                      &train->images[idx * features],
                      features * sizeof(float));
          yWin.setInt(slot, train->labels[idx]);
        } else {
          yWin.setInt(slot, loss.getIgnoreIndex());
        }
      }
      int64_t real = end - begin;
      stepArgs.back().i = globalStep;
      float results[2] = {0, 0}; // objective, count
      auto t0 = std::chrono::steady_clock::now();
      llvm::Error err = jit.get()->call(sig.name, stepArgs, results);
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      if (err) {
        reportError(llvm::toString(std::move(err)));
        return 1;
      }
      float *objective = &results[0];
      stepMs.push_back(ms);
      samplesSeen += real;
      ++globalStep;
      if (!std::isfinite(*objective)) {
        reportError("loss became " + std::to_string(*objective) +
                    " at optimizer step " + llvm::Twine(globalStep) +
                    "; lower --lr");
        return 1;
      }
      if (globalStep % settings.logEvery == 0 || w == stepsPerEpoch - 1) {
        llvm::outs() << llvm::format(
            "step %5lld  epoch %lld  %5.1f%%  loss %.4f  lr %g  %.1f ms/step\n",
            (long long)globalStep, (long long)epoch + 1,
            100.0 * (w + 1) / stepsPerEpoch, *objective, settings.lr, ms);
        llvm::outs().flush();
        std::string line;
        llvm::raw_string_ostream os(line);
        os << llvm::json::Value(llvm::json::Object{{"step", globalStep},
                                                   {"epoch", epoch + 1},
                                                   {"loss", *objective},
                                                   {"lr", settings.lr}});
        metricLines.push_back(line);
      }
    }
    if (globalStep == 0)
      break;
    auto acc = evaluate();
    if (!acc) {
      reportError(llvm::toString(acc.takeError()));
      return 1;
    }
    lastAccuracy = *acc;
    llvm::outs() << llvm::format("epoch %lld  test accuracy %.4f\n",
                                 (long long)epoch + 1, lastAccuracy);
    std::string line;
    llvm::raw_string_ostream os(line);
    os << llvm::json::Value(llvm::json::Object{
        {"epoch", epoch + 1}, {"step", globalStep},
        {"test_accuracy", lastAccuracy}});
    metricLines.push_back(line);
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
      "peak RSS %.1f MB, test accuracy %.4f\n",
      (long long)globalStep, median, samplesPerS, peakRssMb(), lastAccuracy);
  {
    std::string line;
    llvm::raw_string_ostream os(line);
    os << llvm::json::Value(llvm::json::Object{
        {"summary", true},
        {"optimizer_steps", globalStep},
        {"median_step_ms", median},
        {"samples_per_s", samplesPerS},
        {"peak_rss_mb", peakRssMb()},
        {"test_accuracy", lastAccuracy},
        {"micro_batch", m},
        {"accum_steps", n},
        {"effective_batch", eff}});
    metricLines.push_back(line);
  }
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
