//===- ArenaKernelsBench.cpp - gacc-bench-arena ---------------------------===//
//
// Times the arena kernels of a model (gacc-build-arena-kernels) over arenas
// of --elements fp32 values against the memory system's own copy bandwidth,
// on the CPU or on a CUDA device, and on a device first checks their
// results against the CPU path of the same kernels. Prints one table.
//
//   gacc-bench-arena examples/fashion_mlp_adamw.mlir --target cuda
//
//===----------------------------------------------------------------------===//

#include "abi/ArenaABI.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "runtime/ArenaKernels.h"
#include "runtime/CpuJit.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"
#include "runtime/DeviceArena.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;
namespace cl = llvm::cl;
namespace abi = ::gacc::abi;

static cl::OptionCategory cat("gacc-bench-arena options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required, cl::cat(cat));
static cl::opt<std::string> target("target", cl::desc("cpu or cuda (default)"),
                                   cl::init("cuda"), cl::cat(cat));
static cl::opt<int64_t> elements("elements",
                                 cl::desc("Arena length in fp32 elements "
                                          "(rounded up to a multiple of 4; "
                                          "at most 2^31)"),
                                 cl::init(100000000), cl::cat(cat));
static cl::opt<int64_t> checkElements(
    "check-elements",
    cl::desc("Arena length of the device-against-CPU check (cuda only; at "
             "most 2^31)"),
    cl::init(1 << 20), cl::cat(cat));
static cl::opt<int> repeats("repeats", cl::desc("Timed runs per kernel"),
                            cl::init(20), cl::cat(cat));
static cl::opt<std::string> compileOnly(
    "compile-only",
    cl::desc("Only compile the device code for this chip (e.g. sm_90) and "
             "JIT-load its host code, which loads the cubin through the "
             "mgpu* ABI; reports what the module load said. Needs no GPU"),
    cl::init(""), cl::cat(cat));

static cl::opt<bool> graphForm(
    "cuda-graph",
    cl::desc("With --compile-only: compile every function to its graph "
             "form (the NVVM pipeline's cuda-graph=true), as gacc-run "
             "--cuda-graph does"),
    cl::init(false), cl::cat(cat));

static cl::opt<bool> cublasLt(
    "cublaslt",
    cl::desc("With --compile-only: the GEMMs through cuBLASLt (the NVVM "
             "pipeline's cublaslt=true, gacc-run --cuda-gemm=cublaslt), "
             "batch products included"),
    cl::init(false), cl::cat(cat));

static cl::opt<bool> cublasLtGelu(
    "cuda-gelu-epilogue",
    cl::desc("With --compile-only --cublaslt: the tanh GELU and its "
             "gradient in cuBLASLt's epilogues (the NVVM pipeline's "
             "cublaslt-gelu=true, gacc-run --cuda-gelu-epilogue)"),
    cl::init(false), cl::cat(cat));

static cl::opt<bool> cudnnAttention(
    "cudnn-attention",
    cl::desc("With --compile-only: a bf16/fp16 step's attention through "
             "cuDNN's fused kernels (the NVVM pipeline's "
             "cudnn-attention=true, gacc-run --cuda-attention=cudnn)"),
    cl::init(false), cl::cat(cat));

namespace {

[[noreturn]] void fail(const llvm::Twine &msg, int code = 1) {
  llvm::errs() << "gacc-bench-arena: error: " << msg << "\n";
  std::exit(code);
}

/// Memory on the target: host memory, or blocks of one device arena.
struct Memory {
  const cuda::Driver *driver = nullptr;
  std::unique_ptr<DeviceArena> arena;
  std::vector<std::vector<int64_t>> host;

  void *alloc(size_t bytes) {
    if (!driver) {
      host.emplace_back((bytes + 7) / 8);
      return host.back().data();
    }
    auto p = arena->allocate(bytes);
    if (!p)
      fail("device arena exhausted (" + llvm::Twine(bytes) + " bytes more)");
    return reinterpret_cast<void *>(*p);
  }
  void upload(void *dst, const void *src, size_t bytes) {
    if (!driver)
      std::memcpy(dst, src, bytes);
    else if (auto r = driver->cuMemcpyHtoD(cuda::CUdeviceptr(dst), src, bytes))
      fail(cuda::describe("cuMemcpyHtoD", r));
  }
  void download(void *dst, const void *src, size_t bytes) {
    if (!driver)
      std::memcpy(dst, src, bytes);
    else if (auto r = driver->cuMemcpyDtoH(dst, cuda::CUdeviceptr(src), bytes))
      fail(cuda::describe("cuMemcpyDtoH", r));
  }
  void copy(void *dst, const void *src, size_t bytes) {
    if (!driver) {
      std::memcpy(dst, src, bytes);
      return;
    }
    // On the stream the kernels run on, so that the same events time it.
    auto stream = static_cast<cuda::CUstream>(cuda::processStream());
    if (auto r = driver->cuMemcpyDtoDAsync(cuda::CUdeviceptr(dst),
                                           cuda::CUdeviceptr(src), bytes,
                                           stream))
      fail(cuda::describe("cuMemcpyDtoDAsync", r));
    if (auto r = driver->cuStreamSynchronize(stream))
      fail(cuda::describe("cuStreamSynchronize", r));
  }
};

/// The step's arena kernels, compiled for `onDevice` and JIT-loaded.
std::unique_ptr<CpuJit> compile(ModuleOp model, bool onDevice,
                                const std::string &chip) {
  OwningOpRef<ModuleOp> module(model.clone());
  PassManager pm(model.getContext());
  if (onDevice) {
    NVVMPipelineOptions options;
    options.chip = chip;
    options.format = "bin";
    options.cublas = true;
    options.cublasLt = cublasLt;
    options.cublasLtGelu = cublasLtGelu;
    options.cudaGraph = graphForm;
    options.cudnnAttention = cudnnAttention;
    buildLowerToNVVMPipeline(pm, options);
  } else {
    pm.addPass(createGAccBuildArenaKernelsPass());
    buildLowerToCPUPipeline(pm, CPUPipelineOptions());
  }
  if (failed(pm.run(*module)))
    fail("compiling the arena kernels failed");
  auto jit = CpuJit::create(*module, 3, /*deviceMemory=*/onDevice);
  if (!jit)
    fail(llvm::toString(jit.takeError()));
  return std::move(*jit);
}

/// The arena buffers and the gradients the accumulate reads.
struct Arenas {
  ArenaBuffers b;
  int64_t decayEnd = 0;
  void *gradF32 = nullptr, *gradLow = nullptr;
};

/// Arenas of n elements laid out (abi::layoutArena) as two tensors, the
/// first half with weight decay and the second without, as a model's
/// weights and then its biases and norms.
Arenas allocate(Memory &mem, int64_t n, unsigned numStates, bool lowGrad,
                uint64_t seed) {
  Arenas a;
  abi::ArenaLayout layout =
      abi::layoutArena({n / 2, n - n / 2}, {false, true});
  a.b.length = layout.length;
  a.decayEnd = layout.decayEnd;
  n = layout.length;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(n);
  auto filled = [&](float scale) {
    for (float &v : values)
      v = normal(rng) * scale;
    auto *p = static_cast<float *>(mem.alloc(n * 4));
    mem.upload(p, values.data(), n * 4);
    return p;
  };
  a.b.params = filled(0.5f);
  a.b.accs = filled(8.0f);
  a.gradF32 = filled(1.0f);
  for (unsigned s = 0; s < numStates; ++s)
    a.b.states.push_back(filled(0.01f));
  // Second moments must be non-negative.
  if (numStates == 2) {
    for (float &v : values)
      v = std::fabs(normal(rng)) * 1e-4f;
    mem.upload(a.b.states[1], values.data(), n * 4);
  }
  if (lowGrad) {
    std::vector<uint16_t> low(n);
    for (auto &v : low)
      v = uint16_t(0x3f80 ^ (rng() & 0x00ff)); // bf16 values near ±1
    a.gradLow = mem.alloc(n * 2);
    mem.upload(a.gradLow, low.data(), n * 2);
  }
  a.b.partials = static_cast<double *>(mem.alloc(abi::kPartials * 8));
  float countValue = 256;
  a.b.count = static_cast<float *>(mem.alloc(4));
  mem.upload(a.b.count, &countValue, 4);
  a.b.sumSquares = static_cast<double *>(mem.alloc(8));
  int32_t zero = 0;
  a.b.nonfinite = static_cast<int32_t *>(mem.alloc(4));
  mem.upload(a.b.nonfinite, &zero, 4);
  return a;
}

struct Kernels {
  std::string step;
  std::string lowName; // "" or "bf16"/"f16"
  unsigned numStates = 0;
};

void runAccumulate(CpuJit &jit, const Kernels &k, Arenas &a, bool low,
                   int first) {
  if (auto e = callAccumulate(jit, k.step, low ? k.lowName : "f32", a.b,
                              low ? a.gradLow : a.gradF32, 0.5f, first))
    fail(llvm::toString(std::move(e)));
}

void runSumSquares(CpuJit &jit, const Kernels &k, Arenas &a) {
  if (auto e = callSumSquares(jit, k.step, a.b))
    fail(llvm::toString(std::move(e)));
}

/// Weight decay on the first tensor of the layout.
void runUpdate(CpuJit &jit, const Kernels &k, Arenas &a, int64_t step) {
  if (auto e = callUpdate(jit, k.step, a.b, a.decayEnd, 1e-3f, step,
                          1.0f))
    fail(llvm::toString(std::move(e)));
}

void checkDriverErrors() {
  std::string e = cuda::lastError();
  if (!e.empty())
    fail("cuda: " + e);
}

/// The median time of `runs` calls of `fn` (after 3 untimed ones): on a
/// device, CUDA events recorded on the process's stream (where the kernels
/// queue) before and after each call; on the CPU, the wall clock.
double medianMs(const std::function<void()> &fn, int runs,
                const cuda::Driver *driver) {
  for (int i = 0; i < 3; ++i)
    fn();
  cuda::CUevent start = nullptr, stop = nullptr;
  auto stream = static_cast<cuda::CUstream>(
      driver ? cuda::processStream() : nullptr);
  if (driver && (driver->cuEventCreate(&start, 0) ||
                 driver->cuEventCreate(&stop, 0)))
    fail("cuEventCreate failed");
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    if (driver) {
      float elapsed = 0;
      if (driver->cuEventRecord(start, stream))
        fail("cuEventRecord failed");
      fn();
      if (driver->cuEventRecord(stop, stream) ||
          driver->cuEventSynchronize(stop) ||
          driver->cuEventElapsedTime(&elapsed, start, stop))
        fail("timing with CUDA events failed");
      ms.push_back(elapsed);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  if (driver) {
    driver->cuEventDestroy(start);
    driver->cuEventDestroy(stop);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// max |a − b| / max |b| over two host arrays.
double relDiff(const std::vector<float> &a, const std::vector<float> &b) {
  double d = 0, s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::fabs(double(a[i]) - b[i]));
    s = std::max(s, std::fabs(double(b[i])));
  }
  return s > 0 ? d / s : d;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "gacc-bench-arena: time a model's arena kernels against the copy "
          "bandwidth (and, on a device, check them against the CPU path)\n",
          &llvm::errs()))
    return 2;
  if (target != "cpu" && target != "cuda")
    fail("--target must be cpu or cuda", 2);
  constexpr int64_t kMaxElements = int64_t(1) << 31;
  if (elements < 4 || checkElements < 4 || elements > kMaxElements ||
      checkElements > kMaxElements || repeats < 1)
    fail("--elements and --check-elements must be in [4, 2^31], --repeats "
         ">= 1",
         2);
  int64_t n = (elements + 3) / 4 * 4, nCheck = (checkElements + 3) / 4 * 4;
  bool onDevice = target == "cuda" && compileOnly.empty();
  Memory mem;
  int cc = 0;
  std::string device = "CPU";
  if (onDevice) {
    std::string reason;
    mem.driver = cuda::load(reason);
    if (!mem.driver)
      fail("--target cuda: " + reason, 2);
    cuda::DeviceInfo info = cuda::deviceInfo();
    cc = info.computeCapability;
    device = info.name + " (sm_" + std::to_string(cc) + ")";
  }

  configureCUDAToolkit();
  DialectRegistry registry;
  registerGAccDialectsAndInterfaces(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string openError;
  auto file = openInputFile(inputFile, &openError);
  if (!file)
    fail(openError, 2);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> model = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!model)
    return 2; // the diagnostic handler printed the location
  auto steps = llvm::to_vector(model->getOps<TrainStepOp>());
  if (steps.size() != 1 || failed(verify(*model)))
    fail(inputFile + " must hold exactly one valid gacc.train_step", 2);
  TrainStepOp stepOp = steps.front();
  Kernels k;
  k.step = stepOp.getSymName().str();
  k.numStates =
      cast<OptimizerAttrInterface>(stepOp.getOptimizer()).getNumStateTensors();
  Precision precision = stepOp.getPrecision().value_or(Precision::fp32);
  if (precision == Precision::bf16)
    k.lowName = "bf16";
  else if (precision == Precision::fp16)
    k.lowName = "f16";
  bool low = !k.lowName.empty();

  if (!compileOnly.empty()) {
    NVVMPipelineOptions chipOptions;
    chipOptions.chip = compileOnly;
    std::string problem = validateNVVMPipelineOptions(chipOptions);
    if (problem.empty())
      problem = checkNVVMToolchain(chipOptions);
    if (!problem.empty())
      fail("--compile-only: " + problem, 2);
    std::unique_ptr<CpuJit> deviceJit = compile(*model, true, compileOnly);
    // The arena kernels' host code and the training step's (cuBLAS GEMMs,
    // managed-memory malloc), as gacc-run --target cuda JIT-compiles it.
    for (std::string fn :
         {abi::accumulateArenaName(k.step, "f32"),
          abi::sumSquaresArenaName(k.step), abi::updateArenaName(k.step),
          k.step})
      if (auto e = deviceJit->materialize(fn))
        fail(llvm::toString(std::move(e)));
    std::string load = cuda::lastError();
    llvm::outs() << "gacc-bench-arena: host code"
                 << (graphForm ? " (graph form)" : "") << " for "
                 << compileOnly << " JIT-compiled; module load: "
                 << (load.empty() ? "ok" : load) << "\n";
    return 0;
  }
  llvm::outs() << "gacc-bench-arena: @" << k.step << " on " << device << ", "
               << n << " elements (" << llvm::format("%.0f", n * 4 / 1e6)
               << " MB per fp32 arena), median of " << repeats << " runs\n";
  llvm::outs().flush();
  std::unique_ptr<CpuJit> cpu = compile(*model, false, "");
  std::unique_ptr<CpuJit> jit =
      onDevice ? compile(*model, true, "sm_" + std::to_string(cc)) : nullptr;
  if (onDevice)
    checkDriverErrors();
  CpuJit &run = onDevice ? *jit : *cpu;

  // params, accumulators, fp32 gradients, the copy's destination, the
  // optimizer states and the low-precision gradients.
  size_t arenas = 4 + k.numStates + (low ? 1 : 0);
  if (onDevice) {
    // One reservation for every arena of both phases.
    size_t bytes =
        (arenas * (n + nCheck) * 4) + 4 * (abi::kPartials * 8 + 4096);
    cuda::CUdeviceptr base = 0;
    if (auto r = mem.driver->cuMemAlloc(&base, bytes))
      fail(cuda::describe("cuMemAlloc", r));
    mem.arena = std::make_unique<DeviceArena>(base, bytes);
  }

  // --- Check: the device's results against the CPU path's.
  if (onDevice) {
    Memory host;
    Arenas d = allocate(mem, nCheck, k.numStates, low, 1);
    Arenas h = allocate(host, nCheck, k.numStates, low, 1);
    for (auto [jitRef, arena] : {std::pair<CpuJit *, Arenas *>{jit.get(), &d},
                                 {cpu.get(), &h}}) {
      runAccumulate(*jitRef, k, *arena, false, 1);
      runAccumulate(*jitRef, k, *arena, low, 0);
      runSumSquares(*jitRef, k, *arena);
      runUpdate(*jitRef, k, *arena, 0);
      runUpdate(*jitRef, k, *arena, 1);
    }
    checkDriverErrors();
    double worst = 0;
    std::vector<float> dv(nCheck), hv(nCheck);
    std::vector<std::pair<void *, void *>> pairs = {{d.b.accs, h.b.accs},
                                                    {d.b.params, h.b.params}};
    for (unsigned s = 0; s < k.numStates; ++s)
      pairs.push_back({d.b.states[s], h.b.states[s]});
    for (auto [dp, hp] : pairs) {
      mem.download(dv.data(), dp, nCheck * 4);
      std::memcpy(hv.data(), hp, nCheck * 4);
      worst = std::max(worst, relDiff(dv, hv));
    }
    double ssDevice = 0, ssHost = 0;
    mem.download(&ssDevice, d.b.sumSquares, 8);
    std::memcpy(&ssHost, h.b.sumSquares, 8);
    double ssRel = std::fabs(ssDevice - ssHost) / std::max(ssHost, 1e-300);
    bool ok = worst <= 1e-5 && ssRel <= 1e-12;
    llvm::outs() << llvm::format(
        "check: device against CPU path over %lld elements: accumulator, "
        "parameters and state max relative difference %.2e, sum of squares "
        "%.2e: %s\n",
        (long long)nCheck, worst, ssRel, ok ? "ok" : "DIFFERENT");
    if (!ok)
      return 1;
  }

  // --- Timing.
  Arenas a = allocate(mem, n, k.numStates, low, 2);
  void *copyDst = mem.alloc(n * 4);
  double copyMs = medianMs([&] { mem.copy(copyDst, a.gradF32, n * 4); },
                           repeats, mem.driver);
  double copyGBs = 2.0 * n * 4 / (copyMs * 1e6);
  struct Row {
    std::string name;
    double bytes, ms;
  };
  std::vector<Row> rows;
  rows.push_back({"accumulate f32", 12.0 * n,
                  medianMs([&] { runAccumulate(run, k, a, false, 0); },
                           repeats, mem.driver)});
  if (low)
    rows.push_back({"accumulate " + k.lowName, 10.0 * n,
                    medianMs([&] { runAccumulate(run, k, a, true, 0); },
                             repeats, mem.driver)});
  rows.push_back({"sum of squares (3 kernels)", 4.0 * n,
                  medianMs([&] { runSumSquares(run, k, a); }, repeats,
                           mem.driver)});
  int64_t t = 0;
  rows.push_back({"update (" + std::to_string(k.numStates) + " state)",
                  (3.0 + 2 * k.numStates) * 4 * n,
                  medianMs([&] { runUpdate(run, k, a, ++t % 1000); },
                           repeats, mem.driver)});
  if (onDevice)
    checkDriverErrors();

  llvm::outs() << llvm::format("\n%-28s %10s %10s %10s %8s\n", "kernel",
                               "MB moved", "ms", "GB/s", "of copy");
  llvm::outs() << llvm::format("%-28s %10.0f %10.3f %10.1f %7.0f%%\n",
                               "copy (reference)", 2.0 * n * 4 / 1e6, copyMs,
                               copyGBs, 100.0);
  for (const Row &r : rows) {
    double gbs = r.bytes / (r.ms * 1e6);
    llvm::outs() << llvm::format("%-28s %10.0f %10.3f %10.1f %7.0f%%\n",
                                 r.name.c_str(), r.bytes / 1e6, r.ms, gbs,
                                 100.0 * gbs / copyGBs);
  }
  if (onDevice)
    llvm::outs() << llvm::format(
        "device arena: peak %.1f MB of %.1f MB reserved\n",
        mem.arena->peak() / 1e6, mem.arena->capacity() / 1e6);
  return 0;
}
