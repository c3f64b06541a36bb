//===- StepRuntime.cpp - running a compiled step: state, windows, JIT -----===//
//
// What the training driver and --check-equivalence share: the sample
// order, the step's persistent state and its binding to the step's
// arguments, window filling, compilation for the CPU or the cuda target,
// and the device mirror of the step's arguments.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/StepRuntime.h"

#include "abi/ArenaABI.h"
#include "abi/RuntimeABI.h"
#include "passes/Pipelines.h"
#include "runtime/CudaRuntime.h"
#include "runtime/CudnnAttention.h"
#include "runtime/HostMemory.h"
#include "runtime/Initializers.h"
#include "runtime/InputFile.h"
#include "runtime/Safetensors.h"
#include "tools/gacc-run/ParamLayouts.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <random>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;
namespace abi = ::gacc::abi;

namespace gaccrt {

char CompileError::ID = 0;

int reportFailure(llvm::Error e, int status) {
  reportError(llvm::toString(std::move(e)));
  return status;
}

int reportCompileFailure(llvm::Error e) {
  int status = 1;
  llvm::handleAllErrors(
      std::move(e), [&](const CompileError &) { status = kExitBadInput; },
      [&](const llvm::ErrorInfoBase &info) { reportError(info.message()); });
  return status;
}

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
  auto buf = readInputFile(path);
  if (!buf)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " +
                                       llvm::toString(buf.takeError()));
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

/// Draws `tensors` from their initializers with `rng`.
static void initialize(ArrayRef<RankedTensorType> types,
                       ArrayRef<Attribute> inits,
                       std::vector<HostTensor> &tensors,
                       std::mt19937_64 &rng) {
  tensors.clear();
  for (auto [type, init] : llvm::zip(types, inits)) {
    tensors.emplace_back(DType::F32, shapeOf(type));
    initializeParameter(
        cast<InitializerAttrInterface>(init).getDistribution(),
        tensors.back(), rng);
  }
}

/// Replaces each of `tensors` by the F32 tensor of its name in `loaded`; one
/// that is not there keeps its initial value and is added to `missing`,
/// unless `required` says it must be there. A tensor missing, of another
/// type or of another shape is an error naming it as the file does
/// (`fileName`, in the file's layout: its name and, for a weight stored
/// transposed, its shape) and saying what the step expects; a required one
/// the layout has no name for says so (`layoutNames`: the names it has,
/// empty for gacc's own layout). A tensor
/// `nonNegative` marks (a variance) must hold no value below 0.
static llvm::Error
takeLoaded(const std::string &path, std::map<std::string, HostTensor> &loaded,
           llvm::function_ref<FileOrigin(StringRef)> fileName,
           StringRef layoutNames, ArrayRef<std::string> names, StringRef what,
           llvm::function_ref<bool(unsigned)> required,
           ArrayRef<bool> nonNegative, std::vector<HostTensor> &tensors,
           std::vector<std::string> &missing) {
  auto reversed = [](std::vector<int64_t> shape) {
    std::reverse(shape.begin(), shape.end());
    return shape;
  };
  for (auto [k, name] : llvm::enumerate(names)) {
    HostTensor &tensor = tensors[k];
    auto it = loaded.find(name);
    if (it == loaded.end() && !required(k)) {
      missing.push_back(name);
      continue;
    }
    // With another layout, the file's own name of the tensor.
    FileOrigin own = fileName(name);
    std::string inFile = own.name.empty() ? name : own.name;
    std::string expected =
        "the " + what.str() + (own.name.empty() ? "" : " '" + name + "'") +
        " is F32 " + formatShape(tensor.shape) +
        (own.transposed ? ", stored transposed in this layout: [in, out] = " +
                              formatShape(reversed(tensor.shape))
                        : "");
    // A name the file's layout has none for: the model, not the file,
    // is named otherwise.
    if (it == loaded.end() && own.name.empty() && !layoutNames.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          path + ": the " + what + " '" + name +
              "' has no name in the --params-layout, which names " +
              layoutNames);
    if (it == loaded.end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     path + ": no tensor '" + inFile + "'; " +
                                         expected);
    const HostTensor &found = it->second;
    if (found.dtype != DType::F32 || found.shape != tensor.shape)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     path + ": tensor '" + inFile + "' is " +
                                         dtypeName(found.dtype) + " " +
                                         formatShape(own.transposed
                                                         ? reversed(found.shape)
                                                         : found.shape) +
                                         "; " + expected);
    if (llvm::Error e = checkFinite(path, inFile, found,
                                    !nonNegative.empty() && nonNegative[k]))
      return e;
    tensor = found;
  }
  return llvm::Error::success();
}

llvm::Error initialParameters(const StepSignature &sig,
                              const RunSettings &settings,
                              std::vector<HostTensor> &params,
                              std::vector<HostTensor> &statistics,
                              std::vector<std::string> *initialized) {
  std::mt19937_64 initRng(settings.seed);
  initialize(sig.paramTypes, sig.paramInits, params, initRng);
  initialize(sig.statisticTypes, sig.statisticInits, statistics, initRng);
  if (settings.loadParams.empty())
    return llvm::Error::success();
  auto loaded = loadSafetensors(settings.loadParams);
  if (!loaded)
    return loaded.takeError();
  std::map<std::string, FileOrigin> origin;
  if (llvm::Error e = mapParamsLayout(settings.paramsLayout,
                                      settings.loadParams, *loaded, origin))
    return e;
  // Frozen parameters are never trained, so they must be loaded; with
  // any of them, a trainable one missing from the file keeps its
  // initializer (LoRA adapters on loaded weights).
  bool anyFrozen = sig.numTrainable < sig.numParams;
  std::vector<std::string> missing;
  std::string layoutNames = paramsLayoutNames(settings.paramsLayout);
  auto fileName = [&](StringRef name) {
    auto from = origin.find(name.str());
    return from != origin.end()
               ? from->second
               : paramsLayoutOrigin(settings.paramsLayout, name.str());
  };
  if (llvm::Error e = takeLoaded(
          settings.loadParams, *loaded, fileName, layoutNames, sig.paramNames,
          "parameter",
          [&](unsigned i) {
            return !anyFrozen || !llvm::is_contained(sig.trainable, i);
          },
          /*nonNegative=*/{}, params, missing))
    return e;
  // Running statistics are part of a trained model: always loaded.
  if (llvm::Error e = takeLoaded(
          settings.loadParams, *loaded, fileName, layoutNames,
          sig.statisticNames, "running statistic",
          [&](unsigned) { return true; }, sig.statisticNonNegative, statistics,
          missing))
    return e;
  // A tensor the step has no place for is one error too: loading adapters
  // or extra layers into a model without them would drop them unseen.
  for (const auto &[name, tensor] : *loaded)
    if (!llvm::is_contained(sig.paramNames, name) &&
        !llvm::is_contained(sig.statisticNames, name)) {
      auto from = origin.find(name);
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          settings.loadParams + ": tensor '" +
              (from == origin.end() ? name : from->second.name) +
              "' is not a parameter or running statistic of @" + sig.name +
              (from == origin.end() ? "" : " (it would be '" + name + "')"));
    }
  if (initialized)
    *initialized = std::move(missing);
  return llvm::Error::success();
}

/// Whether `bytes` of host memory can be allocated now: a probe, since a
/// failed allocation of a host tensor would end the process (LLVM's
/// out-of-memory handler) instead of being reported.
static bool canAllocate(size_t bytes) {
  void *p = std::malloc(std::max<size_t>(bytes, 1));
  std::free(p);
  return p != nullptr;
}

/// Allocates accumulators, state and windows and binds the step's arguments
/// (the order of StepSignature).
llvm::Error bindStepState(const StepSignature &sig, const RunSettings &settings,
                          StepState &st) {
  // The window's size follows the micro-batch and the accumulation
  // steps; an accumulator's or optimizer state's only the parameter's.
  auto allocate = [&](std::vector<HostTensor> &group, DType dtype,
                      std::vector<int64_t> shape,
                      const llvm::Twine &what) -> llvm::Error {
    size_t bytes = dtypeSize(dtype);
    for (int64_t d : shape)
      bytes *= size_t(d);
    if (!canAllocate(bytes)) {
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("cannot allocate {0:F2} GB of host memory for {1}: "
                        "{2}; {3}",
                        bytes / 1e9, what.str(), hostOutOfMemoryCause(),
                        &group == &st.windows
                            ? "lower --micro-batch or --accum-steps"
                            : "its size is the parameter's, whatever the "
                              "micro-batch: more memory, or a smaller "
                              "model"));
    }
    group.emplace_back(dtype, std::move(shape));
    return llvm::Error::success();
  };
  for (unsigned i : sig.trainable) {
    std::vector<int64_t> shape = shapeOf(sig.paramTypes[i]);
    if (llvm::Error e = allocate(st.accs, DType::F32, shape,
                                 "the accumulator of " + sig.paramNames[i]))
      return e;
    for (unsigned s = 0; s < sig.statePerParam; ++s)
      if (llvm::Error e =
              allocate(st.states, DType::F32, shape,
                       "the optimizer state of " + sig.paramNames[i]))
        return e;
  }
  for (size_t j = 0; j < sig.inputTypes.size(); ++j)
    if (llvm::Error e = allocate(
            st.windows, dtypeOf(sig.inputTypes[j].getElementType()),
            shapeOf(sig.windowInputType(j)),
            llvm::formatv("the window of input #{0} ({1} micro-batches of "
                          "{2})",
                          j, sig.accumSteps, sig.microBatch)
                .str()))
      return e;
  for (auto *group :
       {&st.params, &st.accs, &st.states, &st.statistics, &st.windows})
    for (auto &t : *group)
      st.args.push_back(JitArg::of(t));
  // lr, step, first_sample (abi/StepABI.h).
  st.args.push_back(JitArg::f32(float(settings.lr)));
  st.args.push_back(JitArg::i64(0));
  st.args.push_back(JitArg::i64(0));
  if (sig.lossScaling)
    st.args.push_back(JitArg::f32(settings.initialLossScale));
  return llvm::Error::success();
}

/// Fills the window with samples order[begin, end); the remaining rows are
/// padding whose targets are the loss's ignore_index, so they add nothing
/// and are not counted by the step. Their inputs are a copy of the window's
/// first sample (of the epoch's where the window is empty): a body finite on
/// the real samples is finite on them, where zeros could make it infinite (a
/// log or square root of 0, whose infinite derivative times the padding's
/// gradient of 0 is NaN).
void fillWindow(const DataSource &data, const StepSignature &sig,
                const std::vector<int64_t> &order, int64_t begin, int64_t end,
                std::vector<HostTensor> &windows) {
  for (auto &t : windows)
    std::memset(t.data(), 0, t.numBytes());
  HostTensor &targets = windows[sig.targetInput];
  // Targets a sample leaves unwritten (past a verse's end) are ignored.
  for (int64_t i = 0, e = targets.numElements(); i < e; ++i)
    targets.setInt(i, sig.paddingTarget);
  // Windows are [N, m, ...]: N·m rows.
  int64_t rows = targets.shape[0] * targets.shape[1];
  for (int64_t k = begin; k < end; ++k)
    data.fillTrain(order[k], k - begin, windows);
  // (A data-parallel rank's slice of a short last window may be empty:
  // any sample serves, unseen.)
  if (!order.empty())
    for (int64_t slot = end - begin; slot < rows; ++slot)
      data.fillTrain(order[end > begin ? begin : 0], slot, windows);
  int64_t perRow = targets.numElements() / std::max<int64_t>(rows, 1);
  for (int64_t i = (end - begin) * perRow, e = targets.numElements(); i < e;
       ++i)
    targets.setInt(i, sig.paddingTarget);
}

/// Whether the lowered `module` calls cuDNN's fused attention (declares an
/// entry point of convert-gacc-to-cudnn): an fp32 step, or one whose
/// heads cuDNN does not take, does not, and runs without cuDNN.
static bool callsCudnnAttention(ModuleOp module) {
  for (bool backward : {false, true})
    for (const char *type : {abi::kBF16Operands, abi::kF16Operands})
      if (SymbolTable::lookupSymbolIn(module,
                                      abi::cudnnAttention(backward, type)))
        return true;
  return false;
}

/// Lowers with the library pipeline (the one gacc-opt registers) and JIT
/// compiles the step and predict functions now. With `onDevice`, the NVVM
/// pipeline for the device (cubin for its compute capability, cuBLAS GEMMs)
/// and host code whose memory is the managed-memory arena; cuDNN is loaded
/// when the step calls it (--cuda-attention=cudnn).
llvm::Expected<std::unique_ptr<CpuJit>>
compileStep(ModuleOp model, const StepSignature &sig,
            const RunSettings &settings, bool onDevice) {
  OwningOpRef<ModuleOp> module(model.clone());
  PassManager pm(model.getContext());
  if (onDevice) {
    NVVMPipelineOptions options;
    options.unroll = settings.unroll;
    options.chip = "sm_" + std::to_string(settings.computeCapability);
    options.format = "bin";
    options.cublas = settings.blas;
    options.cublasLt = settings.cublasLt;
    options.cublasLtGelu = settings.cublasLtGelu;
    options.cudnnAttention = settings.cudnnAttention;
    options.arenaKernels = false;
    options.arenaUpdate = settings.arenaUpdate;
    options.resumable = settings.resumable();
    options.cudaGraph = settings.cudaGraph;
    options.fp32Storage = settings.fp32Storage;
    options.deferWindowBytes = settings.deferWindowBytes;
    // The same checks as gacc-opt's pipeline and --emit (a device older
    // than sm_50 has no NVPTX target LLVM knows).
    if (std::string problem = validateNVVMPipelineOptions(options);
        !problem.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--target cuda: " + problem);
    if (std::string problem = checkNVVMToolchain(options); !problem.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--target cuda: " + problem +
              ", the device's chip: put a CUDA toolkit that knows it first "
              "on PATH");
    buildLowerToNVVMPipeline(pm, options);
  } else {
    CPUPipelineOptions pipelineOptions;
    pipelineOptions.unroll = settings.unroll;
    pipelineOptions.blas = settings.blas;
    pipelineOptions.stepArena = settings.stepArena;
    pipelineOptions.threads = settings.threads;
    pipelineOptions.deferWindowBytes = settings.deferWindowBytes;
    pipelineOptions.arenaUpdate = settings.arenaUpdate;
    pipelineOptions.resumable = settings.resumable();
    pipelineOptions.fp32Storage = settings.fp32Storage;
    buildLowerToCPUPipeline(pm, pipelineOptions);
  }
  if (failed(pm.run(*module)))
    return llvm::make_error<CompileError>();
  if (onDevice && callsCudnnAttention(*module))
    if (std::string problem = cudnn::load(); !problem.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--cuda-attention=cudnn: " + problem);
  auto jit = CpuJit::create(*module, 3, onDevice);
  if (!jit)
    return jit.takeError();
  // The ExecutionEngine compiles lazily: materialize the functions now so
  // that compile time is not counted in the first step.
  std::vector<std::string> functions = {sig.name, sig.predictName()};
  if (settings.resumable())
    functions.insert(functions.end(),
                     {sig.accumulateName(), sig.updateName()});
  for (const std::string &fn : functions)
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


/// The step's data source; reports the error and returns null when it
/// cannot be opened or does not fit the step.
std::unique_ptr<DataSource> sourceForStep(const StepSignature &sig,
                                          const RunSettings &settings) {
  auto source = createDataSource(settings.dataset, settings.dataDir, sig);
  if (!source) {
    reportError(llvm::toString(source.takeError()));
    return nullptr;
  }
  return std::move(*source);
}

llvm::Error StepArenas::bind(const StepSignature &sig, StepState &st,
                             const std::function<void *(size_t, bool)> &alloc) {
  unsigned S = sig.statePerParam;
  // The trainable parameters only: the frozen ones are not updated.
  members.assign(sig.trainable.begin(), sig.trainable.end());
  std::vector<int64_t> sizes;
  std::vector<bool> noDecay;
  for (unsigned i : members) {
    sizes.push_back(st.params[i].numElements());
    noDecay.push_back(sig.paramNoWeightDecay[i]);
  }
  abi::ArenaLayout layout = abi::layoutArena(sizes, noDecay);
  offsets = layout.offsets;
  decayEnd = layout.decayEnd;
  ArenaBuffers &a = buffers;
  a.length = layout.length;
  auto floats = [&](size_t n) {
    return static_cast<float *>(alloc(n * 4, false));
  };
  a.params = floats(a.length);
  a.accs = floats(a.length);
  a.states.clear();
  for (unsigned s = 0; s < S; ++s)
    a.states.push_back(floats(a.length));
  a.partials = static_cast<double *>(alloc(abi::kPartials * 8, false));
  a.sumSquares = static_cast<double *>(alloc(8, false));
  a.count = static_cast<float *>(alloc(4, true));
  a.nonfinite = static_cast<int32_t *>(alloc(4, true));
  if (!a.params || !a.accs || !a.partials || !a.sumSquares || !a.count ||
      !a.nonfinite || llvm::is_contained(a.states, nullptr))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot allocate the arenas");
  for (auto [k, i] : llvm::enumerate(members)) {
    // The state as the host holds it: initial, or restored by --resume.
    std::memcpy(a.params + offsets[k], st.params[i].data(),
                st.params[i].numBytes());
    std::memcpy(a.accs + offsets[k], st.accs[k].data(),
                st.accs[k].numBytes());
    for (unsigned s = 0; s < S; ++s)
      std::memcpy(a.states[s] + offsets[k], st.states[k * S + s].data(),
                  st.states[k * S + s].numBytes());
    const std::vector<int64_t> &shape = st.params[i].shape;
    st.args[sig.paramArg(i)] = JitArg::buffer(a.params + offsets[k], shape);
    st.args[sig.accArg(k)] = JitArg::buffer(a.accs + offsets[k], shape);
    for (unsigned s = 0; s < S; ++s)
      st.args[sig.stateArg(k, s)] =
          JitArg::buffer(a.states[s] + offsets[k], shape);
  }
  return llvm::Error::success();
}

void StepArenas::paramsToHost(std::vector<HostTensor> &hostParams) const {
  for (auto [k, i] : llvm::enumerate(members))
    std::memcpy(hostParams[i].data(), buffers.params + offsets[k],
                hostParams[i].numBytes());
}

void StepArenas::stateToHost(StepState &st) const {
  paramsToHost(st.params);
  size_t S = buffers.states.size();
  for (size_t k = 0; k < st.accs.size(); ++k) {
    std::memcpy(st.accs[k].data(), buffers.accs + offsets[k],
                st.accs[k].numBytes());
    for (size_t s = 0; s < S; ++s)
      std::memcpy(st.states[k * S + s].data(), buffers.states[s] + offsets[k],
                  st.states[k * S + s].numBytes());
  }
}

llvm::Error StepArenas::update(CpuJit &jit, const StepSignature &sig,
                               bool clips, float windowCount, bool skipped,
                               float baseLr, int64_t step, float lossScale) {
  *buffers.count = windowCount;
  *buffers.nonfinite = skipped ? 1 : 0;
  if (clips)
    if (llvm::Error e = callSumSquares(jit, sig.name, buffers))
      return e;
  return callUpdate(jit, sig.name, buffers, decayEnd, baseLr, step,
                    lossScale);
}

} // namespace gaccrt
