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
#include "runtime/Collectives.h"
#include "runtime/CpuJit.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"
#include "tools/gacc-run/DataSources.h"
#include "runtime/Initializers.h"
#include "runtime/Safetensors.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/FormatVariadic.h"
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

namespace {

/// Parameters (initialized from the step's initializers with the seed, or
/// loaded), and zeroed accumulators and optimizer state: the persistent
/// state of a compiled step, allocated once.
struct StepState {
  std::vector<HostTensor> params, accs, states, windows;
  std::vector<JitArg> args;
};

llvm::Error initialParameters(const StepSignature &sig,
                              const RunSettings &settings,
                              std::vector<HostTensor> &params) {
  std::mt19937_64 initRng(settings.seed);
  params.clear();
  for (unsigned i = 0; i < sig.numParams; ++i) {
    params.emplace_back(DType::F32, shapeOf(sig.paramTypes[i]));
    initializeParameter(sig.paramInits[i], params.back(), initRng);
  }
  if (settings.loadParams.empty())
    return llvm::Error::success();
  auto loaded = loadSafetensors(settings.loadParams);
  if (!loaded)
    return loaded.takeError();
  for (unsigned i = 0; i < sig.numParams; ++i) {
    auto it = loaded->find(sig.paramNames[i]);
    if (it == loaded->end() || it->second.dtype != DType::F32 ||
        it->second.shape != params[i].shape)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          settings.loadParams + ": no F32 tensor '" + sig.paramNames[i] +
              "' with the parameter's shape");
    params[i] = it->second;
  }
  return llvm::Error::success();
}

/// Allocates accumulators, state and windows and binds the step's arguments
/// (the order of StepSignature).
void bindStepState(const StepSignature &sig, const RunSettings &settings,
                   StepState &st) {
  for (unsigned i = 0; i < sig.numParams; ++i) {
    st.accs.emplace_back(DType::F32, shapeOf(sig.paramTypes[i]));
    for (unsigned s = 0; s < sig.statePerParam; ++s)
      st.states.emplace_back(DType::F32, shapeOf(sig.paramTypes[i]));
  }
  for (size_t j = 0; j < sig.inputTypes.size(); ++j)
    st.windows.emplace_back(dtypeOf(sig.inputTypes[j].getElementType()),
                            shapeOf(sig.windowInputType(j)));
  for (auto *group : {&st.params, &st.accs, &st.states, &st.windows})
    for (auto &t : *group)
      st.args.push_back(JitArg::of(t));
  st.args.push_back(JitArg::f32(float(settings.lr)));
  st.args.push_back(JitArg::i64(0));
  if (sig.lossScaling)
    st.args.push_back(JitArg::f32(settings.initialLossScale));
}

/// Fills the window with samples order[begin, end); the remaining rows are
/// padding whose targets are the loss's ignore_index, so they add nothing
/// and are not counted by the step.
void fillWindow(const DataSource &data, const std::vector<int64_t> &order,
                int64_t begin, int64_t end, unsigned targetInput,
                int64_t ignoreIndex, std::vector<HostTensor> &windows) {
  for (auto &t : windows)
    std::memset(t.data(), 0, t.numBytes());
  HostTensor &targets = windows[targetInput];
  for (int64_t i = 0, e = targets.numElements(); i < e; ++i)
    targets.setInt(i, ignoreIndex);
  for (int64_t k = begin; k < end; ++k)
    data.fillTrain(order[k], k - begin, windows);
}

/// Lowers with the library pipeline (the one gacc-opt registers) and JIT
/// compiles the step and predict functions now. With `onDevice`, the NVVM
/// pipeline for the device (cubin for its compute capability, cuBLAS GEMMs)
/// and host code whose memory is the managed-memory arena.
llvm::Expected<std::unique_ptr<CpuJit>>
compileStep(ModuleOp model, const StepSignature &sig,
            const RunSettings &settings, bool onDevice = false) {
  OwningOpRef<ModuleOp> module(model.clone());
  PassManager pm(model.getContext());
  if (onDevice) {
    NVVMPipelineOptions options;
    options.unroll = settings.unroll;
    options.chip = "sm_" + std::to_string(settings.computeCapability);
    options.format = "bin";
    options.cublas = settings.blas;
    options.arenaKernels = false;
    buildLowerToNVVMPipeline(pm, options);
  } else {
    CPUPipelineOptions pipelineOptions;
    pipelineOptions.unroll = settings.unroll;
    pipelineOptions.blas = settings.blas;
    buildLowerToCPUPipeline(pm, pipelineOptions);
  }
  if (failed(pm.run(*module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "compilation failed");
  auto jit = CpuJit::create(*module, 3, onDevice);
  if (!jit)
    return jit.takeError();
  // The ExecutionEngine compiles lazily: materialize both functions now so
  // that compile time is not counted in the first step.
  for (const std::string &fn : {sig.name, sig.predictName()})
    if (llvm::Error e = (*jit)->materialize(fn))
      return std::move(e);
  if (onDevice) {
    std::string e = cuda::lastError();
    if (!e.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cuda: " + e);
  }
  return jit;
}

/// The step's memref arguments in device-visible (managed) memory: each
/// tensor argument mirrored into a block of the managed arena, so the
/// kernels, cuBLAS and the host code all reach it.
struct DeviceMirror {
  std::vector<void *> blocks; // per argument, null for scalars
  std::vector<HostTensor *> tensors;
  std::vector<JitArg> args;

  llvm::Error bind(const std::vector<JitArg> &hostArgs) {
    for (const JitArg &a : hostArgs) {
      if (a.kind != JitArg::Tensor) {
        blocks.push_back(nullptr);
        tensors.push_back(nullptr);
        args.push_back(a);
        continue;
      }
      void *p = gacc_cuda_malloc(std::max<size_t>(a.tensor->numBytes(), 4));
      if (!p)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "cuda: device memory exhausted");
      std::memcpy(p, a.tensor->data(), a.tensor->numBytes());
      blocks.push_back(p);
      tensors.push_back(a.tensor);
      args.push_back(JitArg::buffer(p, a.tensor->shape));
    }
    return llvm::Error::success();
  }
  /// Copies argument k between its host tensor and the device.
  void toDevice(size_t k) {
    std::memcpy(blocks[k], tensors[k]->data(), tensors[k]->numBytes());
  }
  void toHost(size_t k) {
    std::memcpy(tensors[k]->data(), blocks[k], tensors[k]->numBytes());
  }
};

/// The step's loss op and its data source; reports the error and returns
/// null when either is missing.
std::unique_ptr<DataSource> sourceForStep(TrainStepOp step,
                                          const StepSignature &sig,
                                          const RunSettings &settings,
                                          CrossEntropyOp &loss) {
  loss = step.getLoss().getDefiningOp<CrossEntropyOp>();
  if (!loss) {
    reportError("@" + sig.name + " must end in gacc.cross_entropy to train");
    return nullptr;
  }
  auto source = createDataSource(settings.dataset, settings.dataDir, sig);
  if (!source) {
    reportError(llvm::toString(source.takeError()));
    return nullptr;
  }
  return std::move(*source);
}

/// max |a − b| / max |b| over the elements of two same-shaped tensors.
double relativeDifference(const HostTensor &a, const HostTensor &b) {
  double diff = 0, scale = 0;
  for (int64_t i = 0, e = b.numElements(); i < e; ++i) {
    diff = std::max(diff, std::fabs(double(a.f32()[i]) - b.f32()[i]));
    scale = std::max(scale, std::fabs(double(b.f32()[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

} // namespace

int gaccrt::checkEquivalence(ModuleOp model, TrainStepOp step,
                             const StepSignature &sig,
                             const RunSettings &settings, double tolerance) {
  CrossEntropyOp loss;
  std::unique_ptr<DataSource> source =
      sourceForStep(step, sig, settings, loss);
  if (!source)
    return kExitBadInput;
  // The reference: the same effective batch as one micro-batch (N = 1).
  int64_t n = sig.accumSteps, m = sig.microBatch;
  OwningOpRef<ModuleOp> large(model.clone());
  TrainStepOp largeStep = *large->getOps<TrainStepOp>().begin();
  largeStep.setAccumSteps(1);
  if (failed(largeStep.setMicroBatchSize(n * m)) || failed(verify(*large)))
    return kExitBadInput;
  FailureOr<StepSignature> largeSig = getStepSignature(largeStep);
  if (failed(largeSig))
    return kExitBadInput;

  std::vector<int64_t> order;
  if (!settings.orderFile.empty()) {
    auto o = readOrderFile(settings.orderFile, source->numTrain());
    if (!o) {
      reportError(llvm::toString(o.takeError()));
      return kExitBadInput;
    }
    order = std::move(*o);
  } else {
    order = shuffledOrder(source->numTrain(), settings.seed, 0);
  }
  int64_t end = std::min<int64_t>(n * m, order.size());
  if (end <= m)
    llvm::outs() << "check-equivalence: warning: the window holds " << end
                 << " samples, at most one micro-batch of " << m
                 << ": the accumulation across micro-batches is not "
                    "exercised\n";

  StepState states[2];
  const StepSignature *sigs[2] = {&sig, &*largeSig};
  ModuleOp modules[2] = {model, *large};
  float results[2][StepSignature::kMaxResults] = {};
  for (int k = 0; k < 2; ++k) {
    if (llvm::Error e = initialParameters(*sigs[k], settings, states[k].params)) {
      reportError(llvm::toString(std::move(e)));
      return kExitBadInput;
    }
    bindStepState(*sigs[k], settings, states[k]);
    auto jit = compileStep(modules[k], *sigs[k], settings);
    if (!jit) {
      reportError(llvm::toString(jit.takeError()));
      return 1;
    }
    fillWindow(*source, order, 0, end, sigs[k]->targetInput,
               loss.getIgnoreIndex(), states[k].windows);
    if (llvm::Error e = (*jit)->call(
            sigs[k]->name, states[k].args,
            llvm::MutableArrayRef<float>(results[k], sigs[k]->numResults()))) {
      reportError(llvm::toString(std::move(e)));
      return 1;
    }
  }
  // Gradients: the accumulated sums divided by each run's count.
  double gradDiff = 0, paramDiff = 0;
  for (unsigned i = 0; i < sig.numParams; ++i) {
    HostTensor g[2];
    for (int k = 0; k < 2; ++k) {
      g[k] = states[k].accs[i];
      for (int64_t e = 0; e < g[k].numElements(); ++e)
        g[k].f32()[e] /= results[k][1];
    }
    gradDiff = std::max(gradDiff, relativeDifference(g[0], g[1]));
    paramDiff = std::max(paramDiff, relativeDifference(states[0].params[i],
                                                       states[1].params[i]));
  }
  bool ok = gradDiff <= tolerance && paramDiff <= tolerance &&
            results[0][1] == results[1][1];
  llvm::outs() << llvm::format(
      "check-equivalence: @%s, %lld samples: micro-batch %lld × %lld "
      "accumulation steps against one micro-batch of %lld\n"
      "  count %g vs %g, loss %.7g vs %.7g\n"
      "  max relative difference: gradients %.3e, updated parameters %.3e "
      "(tolerance %g)\n%s\n",
      sig.name.c_str(), (long long)end, (long long)m, (long long)n,
      (long long)(n * m), results[0][1], results[1][1], results[0][0],
      results[1][0], gradDiff, paramDiff, tolerance,
      ok ? "check-equivalence: EQUIVALENT" : "check-equivalence: DIFFERENT");
  return ok ? 0 : 1;
}

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
  // The parameters' and windows' positions among the step's arguments.
  auto syncParamsToHost = [&] {
    if (onDevice)
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
      stepArgs[sig.stepArg()].i = optimizerSteps;
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
