//===- CpuJit.cpp - running compiled training steps on the CPU ------------===//
//
// The calling convention is MLIR's packed interface: `_mlir_<name>` takes an
// array of pointers, one per scalar of the lowered signature (each memref
// expands to allocated pointer, aligned pointer, offset, sizes, strides),
// then one for the result.
//
//===----------------------------------------------------------------------===//

#include "runtime/CpuJit.h"
#include "runtime/Collectives.h"
#include "runtime/CudaRuntime.h"
#include "runtime/CudnnAttention.h"
#include "runtime/HostMemory.h"
#include "runtime/Runtime.h"
#include "runtime/StepArena.h"

#include "abi/RuntimeABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace gaccrt;
namespace abi = ::gacc::abi;

/// Moves the parameter arrays of kernel launches into the entry block. The
/// gpu-to-llvm lowering allocas each launch's parameter array (and the
/// values it points to) where the launch is; inside a loop (the micro-batch
/// loop) each iteration would take new stack that is only returned when the
/// step returns, so enough iterations overflow the stack (seen as a crash
/// inside cuLaunchKernel). Only fixed-size allocas used in their own block
/// only, in a block that calls mgpuLaunchKernel, move: they live for that
/// launch alone, so one slot serves every iteration. Other allocas (whose
/// memory might have to outlive an iteration) stay where they are.
static void hoistLaunchAllocas(llvm::Module &module) {
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    llvm::BasicBlock &entry = f.getEntryBlock();
    llvm::BasicBlock::iterator at = entry.getFirstInsertionPt();
    for (llvm::BasicBlock &block : f) {
      if (&block == &entry)
        continue;
      bool launches = llvm::any_of(block, [](llvm::Instruction &inst) {
        auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
        llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
        return callee && callee->getName() == "mgpuLaunchKernel";
      });
      if (!launches)
        continue;
      for (llvm::Instruction &inst : llvm::make_early_inc_range(block)) {
        auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst);
        if (!alloca || !llvm::isa<llvm::ConstantInt>(alloca->getArraySize()))
          continue;
        bool local = llvm::all_of(alloca->users(), [&](llvm::User *u) {
          auto *user = llvm::dyn_cast<llvm::Instruction>(u);
          return user && user->getParent() == &block;
        });
        if (local)
          alloca->moveBefore(at);
      }
    }
  }
}

/// The compiled code's malloc: it has no way to handle a null result.
static void *checkedMalloc(uint64_t bytes) {
  void *p = std::malloc(bytes);
  if (!p && bytes)
    reportAllocationFailure(bytes, AllocationSite::HostStepBuffer);
  return p;
}

/// The compiled code's step arena (abi::kStepArena), with the same
/// failure handling as its malloc.
static void checkedStepArena(ByteBufferDescriptor *result, int64_t bytes) {
  auto *p = static_cast<int8_t *>(reserveStepArena(uint64_t(bytes)));
  if (!p)
    reportAllocationFailure(uint64_t(bytes), AllocationSite::HostStepBuffer);
  *result = {p, p, 0, bytes, 1};
}

static void *checkedCudaMalloc(uint64_t bytes) {
  void *p = gacc_cuda_malloc(bytes);
  if (!p && bytes)
    reportAllocationFailure(bytes, AllocationSite::DeviceStepBuffer);
  return p;
}

/// The compiled step allocates its buffers and frees them within every
/// micro-batch. With glibc's defaults a large buffer comes from mmap and
/// goes back to the system when freed, as does the top of the heap, so each
/// micro-batch faults its pages in again: on fashion_cnn_groupnorm the
/// kernel's time matched the step's own. Freed memory stays in the heap
/// for reuse instead: buffers up to 32 MiB (glibc's largest mmap
/// threshold) from the heap, no trimming of its top below 1 GiB.
/// malloc_trim (the memory measurement's rss::trim) still returns it.
static void keepFreedBuffersInHeap() {
#ifdef __GLIBC__
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

/// LLVM's default pipeline at `optLevel` (0 to 3) for `tm`, as
/// mlir::makeOptimizingTransformer builds it (loop and SLP vectorizers,
/// interleaving) but without loop unrolling. A loop nest over image
/// activations has inner loops of 14 or 28 iterations, which the full
/// unrolling before vectorization unrolls; the vectorizer then vectorizes
/// the next loop out with gathers and scatters. Without unrolling the
/// CNN examples' step took 0.7 times as long, the others the same
/// (docs/benchmarks.md).
static llvm::Error optimizeModule(llvm::Module &module, unsigned optLevel,
                                  llvm::TargetMachine *tm) {
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(levels[std::min(optLevel, 3u)]);
  passes.run(module, mam);
  return llvm::Error::success();
}

/// GACC_JIT_IR=FILE: the LLVM IR the JIT compiles, after LLVM's
/// optimization (what the vectorizers made of the step), written to FILE.
static void writeOptimizedIR(const llvm::Module &module) {
  const char *path = std::getenv("GACC_JIT_IR");
  if (!path || !*path)
    return;
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    std::fprintf(stderr, "warning: GACC_JIT_IR: cannot write %s: %s\n", path,
                 ec.message().c_str());
    return;
  }
  module.print(os, nullptr);
}

/// Whether GACC_PERF_MAP=1 asks for perf's view of the JIT code.
static bool perfMapRequested() {
  const char *flag = std::getenv("GACC_PERF_MAP");
  return flag && std::string(flag) == "1";
}

/// GACC_PERF_MAP=1: /tmp/perf-<pid>.map names the compiled functions for
/// `perf report` (each function's size taken to the next one's address).
static void writePerfMap(mlir::ModuleOp module,
                         const mlir::ExecutionEngine &engine) {
  if (!perfMapRequested())
    return;
  std::vector<std::pair<uintptr_t, std::string>> symbols;
  module.walk([&](mlir::LLVM::LLVMFuncOp f) {
    if (f.isExternal())
      return;
    if (auto address = engine.lookup(f.getSymName()))
      symbols.emplace_back(reinterpret_cast<uintptr_t>(*address),
                           f.getSymName().str());
    else
      llvm::consumeError(address.takeError());
  });
  llvm::sort(symbols);
  std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  FILE *out = std::fopen(path.c_str(), "a");
  if (!out)
    return;
  for (size_t i = 0; i < symbols.size(); ++i) {
    uintptr_t end = i + 1 < symbols.size() ? symbols[i + 1].first
                                           : symbols[i].first + 4096;
    std::fprintf(out, "%lx %lx %s\n", (unsigned long)symbols[i].first,
                 (unsigned long)(end - symbols[i].first),
                 symbols[i].second.c_str());
  }
  std::fclose(out);
}

llvm::Expected<std::unique_ptr<CpuJit>>
CpuJit::create(mlir::ModuleOp module, unsigned optLevel, bool deviceMemory) {
  keepFreedBuffersInHeap();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::ExecutionEngineOptions options;
  // The host's target machine, so that LLVM's loop and SLP vectorizers
  // know the vector registers (without it they see none and keep every
  // loop scalar).
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  std::shared_ptr<llvm::TargetMachine> host = std::move(*machine);
  auto optimize = [&](llvm::Module *module) {
    return optimizeModule(*module, optLevel, host.get());
  };
  // `transformer` is a function_ref: the callable must outlive create().
  // (A temporary lambda left it dangling, and the optimizer then read a
  // dead capture as its level: the CPU step ran unoptimized, unvectorized
  // code.)
  auto transform = [&](llvm::Module *module) -> llvm::Error {
    hoistLaunchAllocas(*module);
    if (llvm::Error e = optimize(module))
      return e;
    writeOptimizedIR(*module);
    return llvm::Error::success();
  };
  options.transformer = transform;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // LLVM's perf listener writes a jitdump file per process under
  // $JITDUMPDIR/.debug/jit, or /tmp/.debug/jit without it (megabytes a
  // run, never removed): only where the user
  // asked for perf's view of the JIT code (GACC_PERF_MAP=1).
  options.enablePerfNotificationListener = perfMapRequested();
  auto engineOr = mlir::ExecutionEngine::create(module, options);
  if (!engineOr)
    return engineOr.takeError();
  auto jit = std::unique_ptr<CpuJit>(new CpuJit());
  jit->engine = std::move(*engineOr);
  jit->engine->registerSymbols([deviceMemory](
                                   llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto bind = [&](const char *name, auto *fn) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
    };
    // What the lowerings call (abi/RuntimeABI.h).
    bind(abi::kSgemm, &gacc_sgemm);
    bind(abi::kSgemmBatched, &gacc_sgemm_batched);
    bind(abi::kAllReduceSumF32, &gacc_all_reduce_sum_f32);
    bind(abi::kCudaSynchronize, &gacc_cuda_synchronize);
    bind(abi::kCublasSgemm, &gacc_cublas_sgemm);
    bind(abi::kCublasLtSgemm, &gacc_cublaslt_sgemm);
    bind(abi::kCublasLtSgemmBatched, &gacc_cublaslt_sgemm_batched);
    bind(abi::kCublasLtSgemmEpilogue, &gacc_cublaslt_sgemm_epilogue);
    bind(abi::kCublasLtSgemmGeluBias, &gacc_cublaslt_sgemm_gelu_bias);
    bind(abi::kCublasLtSgemmGeluGrad, &gacc_cublaslt_sgemm_gelu_grad);
    // The same for bf16 and fp16 operands (a narrowed step's products).
    auto bindLow = [&](const char *f32, const char *type, auto *fn) {
      bind(abi::lowOperandsGemm(f32, type).c_str(), fn);
    };
    const char *bf16 = abi::kBF16Operands, *f16 = abi::kF16Operands;
    bindLow(abi::kSgemm, bf16, &gacc_sgemm_bf16);
    bindLow(abi::kSgemm, f16, &gacc_sgemm_f16);
    bindLow(abi::kSgemmBatched, bf16, &gacc_sgemm_batched_bf16);
    bindLow(abi::kSgemmBatched, f16, &gacc_sgemm_batched_f16);
    bindLow(abi::kCublasSgemm, bf16, &gacc_cublas_sgemm_bf16);
    bindLow(abi::kCublasSgemm, f16, &gacc_cublas_sgemm_f16);
    bindLow(abi::kCublasLtSgemm, bf16, &gacc_cublaslt_sgemm_bf16);
    bindLow(abi::kCublasLtSgemm, f16, &gacc_cublaslt_sgemm_f16);
    bindLow(abi::kCublasLtSgemmBatched, bf16,
            &gacc_cublaslt_sgemm_batched_bf16);
    bindLow(abi::kCublasLtSgemmBatched, f16, &gacc_cublaslt_sgemm_batched_f16);
    bindLow(abi::kCublasLtSgemmEpilogue, bf16,
            &gacc_cublaslt_sgemm_epilogue_bf16);
    // cuDNN's fused attention (CudnnAttention.h), both directions.
    auto bindAttention = [&](bool backward, const char *type, auto *fn) {
      bind(abi::cudnnAttention(backward, type).c_str(), fn);
    };
    bindAttention(false, bf16, &gacc_cudnn_attention_forward_bf16);
    bindAttention(false, f16, &gacc_cudnn_attention_forward_f16);
    bindAttention(true, bf16, &gacc_cudnn_attention_backward_bf16);
    bindAttention(true, f16, &gacc_cudnn_attention_backward_f16);
    bind((llvm::Twine("_mlir_ciface_") + abi::kStepArena).str().c_str(),
         &checkedStepArena);
    // The mgpu* launch ABI of NVVM-pipeline host code (CudaRuntime.cpp).
    bind("mgpuModuleLoad", &mgpuModuleLoad);
    bind("mgpuModuleUnload", &mgpuModuleUnload);
    bind("mgpuModuleGetFunction", &mgpuModuleGetFunction);
    bind("mgpuStreamCreate", &mgpuStreamCreate);
    bind("mgpuStreamSynchronize", &mgpuStreamSynchronize);
    bind("mgpuStreamDestroy", &mgpuStreamDestroy);
    bind("mgpuLaunchKernel", &mgpuLaunchKernel);
    if (deviceMemory) {
      bind("malloc", &checkedCudaMalloc);
      bind("free", &gacc_cuda_free);
    } else {
      bind("malloc", &checkedMalloc);
    }
    return map;
  });
  // Run the module's global constructors now that every symbol resolves
  // (NVVM-pipeline host code loads its kernels' cubin in one).
  jit->engine->initialize();
  writePerfMap(module, *jit->engine);
  return jit;
}

llvm::Error CpuJit::materialize(llvm::StringRef name) {
  auto fn = engine->lookupPacked(name);
  return fn ? llvm::Error::success() : fn.takeError();
}

llvm::Error CpuJit::call(llvm::StringRef name, llvm::ArrayRef<JitArg> args,
                         llvm::MutableArrayRef<float> results) {
  // One 8-byte slot per scalar, reserved up front so pointers stay valid.
  size_t slots = 1;
  for (const JitArg &a : args)
    slots += a.kind == JitArg::Tensor   ? 3 + 2 * a.tensor->shape.size()
             : a.kind == JitArg::Buffer ? 3 + 2 * a.shape.size()
                                        : 1;
  std::vector<int64_t> storage(slots, 0);
  std::vector<void *> packed;
  size_t next = 0;
  auto push = [&](int64_t v) {
    storage[next] = v;
    packed.push_back(&storage[next++]);
  };
  for (const JitArg &a : args) {
    if (a.kind == JitArg::F32) {
      int64_t bits = 0;
      std::memcpy(&bits, &a.f, sizeof(float));
      push(bits);
      continue;
    }
    if (a.kind == JitArg::I64) {
      push(a.i);
      continue;
    }
    void *data = a.kind == JitArg::Buffer ? a.pointer : a.tensor->data();
    const std::vector<int64_t> &shape =
        a.kind == JitArg::Buffer ? a.shape : a.tensor->shape;
    push(reinterpret_cast<int64_t>(data)); // allocated
    push(reinterpret_cast<int64_t>(data)); // aligned
    push(0);                               // offset
    for (int64_t d : shape)
      push(d);
    int64_t stride = 1;
    std::vector<int64_t> strides(shape.size());
    for (int i = int(shape.size()) - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= shape[i];
    }
    for (int64_t st : strides)
      push(st);
  }
  // Several f32 results come back as one struct of floats.
  if (!results.empty())
    packed.push_back(results.data());
  return engine->invokePacked(name, packed);
}
