//===- Pipelines.cpp - gacc pass pipelines --------------------------------===//
//
// Builders of gacc-lower-to-cpu-pipeline and gacc-lower-to-nvvm-pipeline and
// the registration of everything the gacc tools need.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"
#include "passes/Ptxas.h"

#include "passes/Passes.h"
#include "llvm/Support/FormatVariadic.h"

#include "abi/StepABI.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::gacc;

void mlir::gacc::buildTrainingStepToBuffersPipeline(
    OpPassManager &pm, const GAccExpandAccumulationPassOptions &expand,
    const StepToBuffersOptions &options) {
  // A large classifier head and its loss over blocks of rows.
  pm.addPass(createGAccFuseLinearCrossEntropyPass());
  // Padding rows never count in batch statistics.
  pm.addPass(createGAccMaskBatchStatisticsPass());
  pm.addPass(createGAccAutodiffPass());
  // Forward ops the model marks gacc.recompute run again in the backward.
  pm.addPass(createGAccRecomputeActivationsPass());
  pm.addPass(createGAccExpandAccumulationPass(expand));
  pm.addPass(createGAccFuseAccumulationPass());
  // A weight gradient computed once per window where that moves fewer
  // bytes than accumulating it per micro-batch.
  if (options.deferWindowBytes > 0) {
    GAccDeferWeightGradientsPassOptions defer;
    defer.maxWindowBytes = options.deferWindowBytes;
    defer.launchElements = options.launchElements;
    defer.narrowStorage = !options.fp32Storage;
    pm.addPass(createGAccDeferWeightGradientsPass(defer));
  }
  // Attention as fused kernels, before its decomposition would apply.
  if (options.fusedAttention)
    pm.addPass(createGAccFuseAttentionPass());
  pm.addPass(createConvertGAccToLinalgPass());
  // arith/math on tensors as elementwise linalg.generic ops.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  // CSE (e.g. statistics a hand-written adjoint recomputes), elementwise
  // chains fused into one op, then an init of its own for every op, so
  // that bufferization writes in place instead of copying a shared init.
  pm.addPass(createCSEPass());
  pm.addPass(createGAccFuseElementwisePass());
  // A low-precision step's rounded values in tensors of its type.
  if (!options.fp32Storage)
    pm.addPass(createGAccNarrowStoredValuesPass());
  // The products of a low-precision step that read its rounded values only.
  pm.addPass(createGAccMarkGemmInputsPass());
  pm.addPass(createGAccPrivatizeInitsPass());
  // A value built in a fresh tensor and then inserted into a larger one
  // (a deferred weight gradient's operand rows in their window buffer) is
  // built in place: no copy.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createGAccStridedCopiesToLinalgPass());
  // Each buffer freed as soon as it is dead: the live set the memory plan
  // reads is the one the step allocates.
  pm.addNestedPass<func::FuncOp>(createGAccHoistDeallocationsPass());
}

void mlir::gacc::buildLowerToCPUPipeline(OpPassManager &pm,
                                         const CPUPipelineOptions &options) {
  if (options.arenaUpdate)
    pm.addPass(createGAccBuildArenaKernelsPass());
  StepToBuffersOptions toBuffers;
  toBuffers.deferWindowBytes = options.deferWindowBytes;
  toBuffers.fp32Storage = options.fp32Storage;
  buildTrainingStepToBuffersPipeline(
      pm, {options.unroll, options.arenaUpdate, options.resumable}, toBuffers);
  // The transient buffers at the offsets the memory plan reports.
  if (options.stepArena)
    pm.addPass(createGAccPlaceTransientBuffersPass());
  if (options.blas)
    pm.addPass(createConvertGAccToBLASPass());
  pm.addPass(createConvertGAccToRuntimePass());
  pm.addPass(createConvertGAccToSCFPass());
  // Reductions that LLVM may vectorize (several partial sums).
  pm.addNestedPass<func::FuncOp>(createGAccReassociateReductionsPass());
  // Few, long loops: contiguous dimensions run as one.
  pm.addNestedPass<func::FuncOp>(createGAccCollapseDimensionsPass());
  // Large loops split over the CPU threads, one slab each (before
  // outlining: the outlined function computes a slab of whole buffers).
  // The parallel loops already there (the arena kernels' and, with
  // blas=false, the GEMMs', written for GPU threads) run as serial loops.
  // threads below 1 reach gacc-parallelize-loops, which rejects them.
  bool threaded = options.threads != 1;
  if (threaded) {
    pm.addPass(createParallelForToNestedForsPass());
    pm.addNestedPass<func::FuncOp>(createGAccParallelizeLoopsPass(
        GAccParallelizeLoopsPassOptions{options.threads}));
  }
  // One function per loop nest: LLVM's loop passes cost the square of the
  // loops in a function.
  pm.addPass(createGAccOutlineLinalgOpsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // The slabs as OpenMP parallel loops of the team.
  if (threaded)
    pm.addPass(createConvertSCFToOpenMPPass(
        ConvertSCFToOpenMPPassOptions{static_cast<unsigned>(options.threads)}));
  // Per-element tanh, exp, ... as arithmetic that LLVM vectorizes.
  pm.addPass(createGAccApproximateMathPass());
  // bf16 rounding (truncf/extf) as integer arithmetic: no compiler-rt
  // helpers are needed at run time.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Vector ops (the arena kernels' 16-byte accesses).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (erf, tanh) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // The outlined ops' disjoint buffers, as their pointers' noalias.
  pm.addPass(createGAccMarkNoaliasPointersPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (threaded)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

/// Reads the PTX `features` (comma-separated +ptxNN or -ptxNN entries):
/// `newest` is the newest version turned on (0 for none). Returns the
/// first entry that is not a PTX version LLVM 22's NVPTX back end knows
/// (`llc -march=nvptx64 -mattr=help`; it ignores any other feature with a
/// warning), or std::nullopt.
static std::optional<std::string> readPtxFeatures(StringRef features,
                                                  unsigned &newest) {
  static const unsigned known[] = {32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64,
                                   65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80,
                                   81, 82, 83, 84, 85, 86, 87, 88, 90};
  newest = 0;
  SmallVector<StringRef> entries;
  features.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    StringRef name = entry.trim();
    bool on = name.consume_front("+");
    unsigned ptx = 0;
    if ((!on && !name.consume_front("-")) || !name.consume_front("ptx") ||
        name.getAsInteger(10, ptx) || !llvm::is_contained(known, ptx))
      return entry.str();
    if (on)
      newest = std::max(newest, ptx);
  }
  return std::nullopt;
}

/// The oldest PTX ISA version (NN of +ptxNN) LLVM 22's NVPTX back end
/// accepts for chip sm_`sm` with `suffix` ('a', 'f' or 0), as `llc
/// -mcpu=CHIP -mattr=+ptx32` reports it ("Minimum required PTX version").
static unsigned minimumPtx(unsigned sm, char suffix) {
  if (suffix == 'f')
    return sm == 110 ? 90 : 88;
  if (sm == 90 && suffix == 'a')
    return 80;
  switch (sm) {
  case 50:
    return 40;
  case 52:
    return 41;
  case 53:
    return 42;
  case 60:
  case 61:
  case 62:
    return 50;
  case 70:
    return 60;
  case 72:
    return 61;
  case 75:
    return 63;
  case 80:
    return 70;
  case 86:
    return 71;
  case 87:
    return 74;
  case 89:
  case 90:
    return 78;
  case 100:
  case 101:
    return 86;
  case 120:
    return 87;
  case 103:
  case 121:
    return 88;
  default: // 88, 110
    return 90;
  }
}

/// The chip of `options` read as sm_`sm` with `suffix`; false when it is
/// not one LLVM 22's NVPTX back end knows from sm_50 on (`llc
/// -march=nvptx64 -mcpu=help`; `a`, architecture-specific, exists from
/// sm_90, `f`, family, from sm_100), written as llc writes it (sm_90, not
/// sm_090).
static bool readChip(StringRef text, unsigned &sm, char &suffix) {
  static const unsigned known[] = {50, 52,  53,  60,  61,  62,  70,
                                   72, 75,  80,  86,  87,  88,  89,
                                   90, 100, 101, 103, 110, 120, 121};
  suffix = 0;
  if (!text.consume_front("sm_"))
    return false;
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
    suffix = text.back();
    text = text.drop_back();
  }
  return !text.getAsInteger(10, sm) && text == std::to_string(sm) &&
         llvm::is_contained(known, sm) && (suffix != 'a' || sm >= 90) &&
         (suffix != 'f' || sm >= 100);
}

/// The PTX features the NVPTX back end gets: `features` as given, or, when
/// the option was left at its default, the default raised to the chip's
/// oldest PTX version where that is newer (sm_100 needs PTX 8.6).
static std::string effectivePtxFeatures(const NVVMPipelineOptions &options) {
  unsigned sm = 0, newest = 0;
  char suffix = 0;
  if (options.features.hasValue() || !readChip(options.chip, sm, suffix) ||
      readPtxFeatures(options.features, newest))
    return options.features;
  unsigned minimum = minimumPtx(sm, suffix);
  return minimum > newest ? "+ptx" + std::to_string(minimum)
                          : std::string(options.features);
}

/// The most bytes of parameters a kernel may take with the PTX `features`
/// (validated): 32764 from PTX ISA 8.1 on (CUDA 12.1),
/// kPtxKernelParameterBytes before.
static int64_t kernelParameterLimit(StringRef features) {
  unsigned newest = 0;
  (void)readPtxFeatures(features, newest);
  return newest >= 81 ? kPtxIsa81KernelParameterBytes
                      : kPtxKernelParameterBytes;
}

void mlir::gacc::buildLowerToNVVMPipeline(OpPassManager &pm,
                                          const NVVMPipelineOptions &options) {
  // The arena kernels are built from the model-level step (before the
  // step's own passes consume it) and lowered with the rest.
  if (options.arenaKernels || options.arenaUpdate)
    pm.addPass(createGAccBuildArenaKernelsPass());
  StepToBuffersOptions toBuffers;
  toBuffers.deferWindowBytes = options.deferWindowBytes;
  toBuffers.launchElements = kGpuLaunchElements;
  toBuffers.fp32Storage = options.fp32Storage;
  toBuffers.fusedAttention = options.cudnnAttention;
  buildTrainingStepToBuffersPipeline(
      pm, {options.unroll, options.arenaUpdate, options.resumable}, toBuffers);
  const char *gemm = options.cublasLt ? ::gacc::abi::kCublasLtSgemm
                                      : ::gacc::abi::kCublasSgemm;
  if (options.cublas) {
    ConvertGAccToBLASPassOptions blas;
    blas.callee = gemm;
    blas.geluEpilogues = options.cublasLtGelu;
    pm.addPass(createConvertGAccToBLASPass(blas));
  }
  if (options.cudnnAttention)
    pm.addPass(createConvertGAccToCuDNNPass());
  pm.addPass(createConvertGAccToRuntimePass());
  pm.addPass(createConvertGAccToSCFPass());
  // The GEMM entry points the host code calls, each with its entry points
  // for bf16 and fp16 operands.
  SmallVector<const char *> gemms;
  if (options.cublas)
    gemms.push_back(gemm);
  if (options.cublas && options.cublasLt)
    gemms.push_back(::gacc::abi::kCublasLtSgemmBatched);
  SmallVector<std::string> gemmCallees;
  for (const char *g : gemms)
    for (const char *type :
         {"", ::gacc::abi::kBF16Operands, ::gacc::abi::kF16Operands})
      gemmCallees.push_back(*type ? ::gacc::abi::lowOperandsGemm(g, type)
                                  : std::string(g));
  // cuBLASLt's GEMMs with an epilogue: the bias (fp32 and bf16 operands),
  // which also read the bias, their fourth memref, and the GELU and its
  // gradient (fp32), which write and read the GELU's input
  // (abi::gemmWritesMemref).
  if (options.cublas && options.cublasLt) {
    gemmCallees.push_back(::gacc::abi::kCublasLtSgemmEpilogue);
    gemmCallees.push_back(::gacc::abi::lowOperandsGemm(
        ::gacc::abi::kCublasLtSgemmEpilogue, ::gacc::abi::kBF16Operands));
    gemmCallees.push_back(::gacc::abi::kCublasLtSgemmGeluBias);
    gemmCallees.push_back(::gacc::abi::kCublasLtSgemmGeluGrad);
  }
  // Every static linalg op as one-dimensional parallel loops (coalesced,
  // reductions in registers, split sums, scalars on the device, fills
  // folded, consecutive ops fused); the upstream lowering takes what is
  // left (dynamic shapes).
  std::string features = effectivePtxFeatures(options);
  int64_t parameterBytes = kernelParameterLimit(features);
  GAccLinalgToParallelLoopsPassOptions parallelLoops;
  parallelLoops.gemmCallees = gemmCallees;
  parallelLoops.distinctArguments = ::gacc::abi::kDistinctArguments;
  parallelLoops.maxParameterBytes = parameterBytes;
  pm.addNestedPass<func::FuncOp>(
      createGAccLinalgToParallelLoopsPass(parallelLoops));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  if (options.cudaGraph)
    pm.addPass(createGAccDeviceResidentScalarsPass());
  GAccMergeSingleThreadLoopsPassOptions mergeScalars;
  mergeScalars.gemmCallees = gemmCallees;
  mergeScalars.distinctArguments = ::gacc::abi::kDistinctArguments;
  mergeScalars.maxParameterBytes = parameterBytes;
  pm.addNestedPass<func::FuncOp>(
      createGAccMergeSingleThreadLoopsPass(mergeScalars));
  // Tile the parallel loops so that the inner tile maps to the threads of
  // a block and the outer loop to the grid.
  // Fixed-size tiles with an in-bounds check inside: the inner tile loop
  // always has block-size iterations (no canonicalization may fold it away
  // before mapping, or a short loop would lose its threads).
  pm.addNestedPass<func::FuncOp>(createParallelLoopTilingPass(
      {options.blockSize}, /*noMinMaxBounds=*/true));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createLowerAffinePass());
  // Constants (and memref.dim, arith.select and arith.cmpi of them) go
  // into the kernels (upstream's outlining no longer sinks them): the
  // kernels take fewer parameters (KernelParameters.h leaves constants
  // out) and fold them.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  GAccCheckKernelParametersPassOptions checkParameters;
  checkParameters.maxParameterBytes = parameterBytes;
  pm.addPass(createGAccCheckKernelParametersPass(checkParameters));
  GAccMergeGPUModulesPassOptions merge;
  pm.addPass(createGAccMergeGPUModulesPass(merge));
  // Launches queue on one stream; the host waits only before it touches
  // memory (and before returning).
  GAccAsyncLaunchesPassOptions async;
  async.streamOrderedCallees = gemmCallees;
  if (options.cudnnAttention)
    for (bool backward : {false, true})
      for (const char *type :
           {::gacc::abi::kBF16Operands, ::gacc::abi::kF16Operands})
        async.streamOrderedCallees.push_back(
            ::gacc::abi::cudnnAttention(backward, type));
  pm.addPass(createGAccAsyncLaunchesPass(async));
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

std::string
mlir::gacc::validateNVVMPipelineOptions(const NVVMPipelineOptions &options) {
  unsigned sm = 0;
  char suffix = 0;
  if (!readChip(options.chip, sm, suffix))
    return "chip must be an NVPTX target from sm_50 on (e.g. sm_80, sm_90, "
           "sm_90a), got '" +
           options.chip + "'";
  unsigned newest = 0;
  if (std::optional<std::string> bad =
          readPtxFeatures(options.features, newest))
    return "features must be PTX versions LLVM knows, as +ptxNN "
           "separated by commas (e.g. +ptx80, +ptx81), got '" +
           *bad + "'";
  // Given features older than the chip's PTX would stop LLVM's back end
  // with a fatal error (the default is raised instead).
  if (unsigned minimum = minimumPtx(sm, suffix);
      options.features.hasValue() && newest < minimum)
    return llvm::formatv("{0} needs PTX ISA {1}.{2} or later "
                         "(features=+ptx{3}), got features '{4}'",
                         options.chip.getValue(), minimum / 10, minimum % 10,
                         minimum, options.features.getValue())
        .str();
  if (options.format != "isa" && options.format != "bin" &&
      options.format != "fatbin")
    return "format must be isa, bin or fatbin, got '" + options.format + "'";
  if (options.cudaGraph && options.resumable)
    return "cuda-graph excludes resumable: the resumable functions' "
           "micro-batch bounds are host values that change from call to "
           "call";
  if (options.blockSize <= 0 || options.blockSize > 1024)
    return "block-size must be in [1, 1024], got " +
           std::to_string(options.blockSize);
  if (options.optLevel < 0 || options.optLevel > 3)
    return "opt-level must be in [0, 3], got " +
           std::to_string(options.optLevel);
  if (options.deferWindowBytes < 0)
    return "defer-window-bytes must be >= 0, got " +
           std::to_string(options.deferWindowBytes);
  // A library choice without the library it refines would be silently
  // dropped.
  if (options.cublasLt && !options.cublas)
    return "cublaslt chooses cuBLASLt for the GEMMs that cublas sends to a "
           "library; give cublas too";
  if (options.cublasLtGelu && !options.cublasLt)
    return "cublaslt-gelu folds GELU into cuBLASLt's epilogues; give "
           "cublaslt (and cublas) too";
  return "";
}

std::string
mlir::gacc::validateCPUPipelineOptions(const CPUPipelineOptions &options) {
  if (options.threads < 1 || options.threads > kMaxCpuThreads)
    return "threads must be in [1, " + std::to_string(kMaxCpuThreads) +
           "], got " + std::to_string(options.threads);
  if (options.deferWindowBytes < 0)
    return "defer-window-bytes must be >= 0, got " +
           std::to_string(options.deferWindowBytes);
  return "";
}

/// Registers the pipeline `name` with `Options`, checked by `validate`
/// before `build` runs: bad options are one error naming the pipeline, not
/// a pipeline that silently does something else (PassPipelineRegistration
/// would build whatever parsed).
template <typename Options>
static void registerValidatedPipeline(StringRef name, StringRef description,
                                      std::string (*validate)(const Options &),
                                      void (*build)(OpPassManager &,
                                                    const Options &)) {
  registerPassPipeline(
      name, description,
      [=](OpPassManager &pm, StringRef optionsStr,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        std::string problem = validate(options);
        if (!problem.empty())
          return errorHandler(name + ": " + problem);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

void mlir::gacc::registerGAccPipelines() {
  registerValidatedPipeline<CPUPipelineOptions>(
      "gacc-lower-to-cpu-pipeline",
      "Lower gacc training steps to the LLVM dialect for the CPU (autodiff, "
      "accumulation, fusion, bufferization, OpenBLAS GEMMs, loops, LLVM)",
      validateCPUPipelineOptions, buildLowerToCPUPipeline);
  registerValidatedPipeline<NVVMPipelineOptions>(
      "gacc-lower-to-nvvm-pipeline",
      "Lower gacc training steps to GPU kernels (NVVM, PTX, cubin through "
      "ptxas) with host code in the LLVM dialect",
      +[](const NVVMPipelineOptions &options) {
        if (std::string problem = validateNVVMPipelineOptions(options);
            !problem.empty())
          return problem;
        std::string toolchain = checkNVVMToolchain(options);
        return toolchain.empty() ? toolchain
                                 : toolchain + "; PTX (format=isa) needs no "
                                               "ptxas";
      },
      buildLowerToNVVMPipeline);
}

std::string mlir::gacc::checkNVVMToolchain(const NVVMPipelineOptions &options) {
  // A cubin is assembled by ptxas at the end of the pipeline: a chip it
  // lacks is refused now, not in an error pinned to a line of the model.
  return options.format == "isa" ? "" : checkPtxasChip(options.chip);
}

void mlir::gacc::configureCUDAToolkit() {
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::getenv(var))
      return;
  // A toolkit is a folder holding nvvm/libdevice/libdevice.10.bc. The ptxas
  // on PATH may be a wrapper script or a symbolic link outside any toolkit
  // (/usr/local/bin/ptxas), so its folder is only the first candidate.
  llvm::SmallVector<std::string> candidates;
  if (auto ptxas = llvm::sys::findProgramByName("ptxas")) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*ptxas, real))
      real = *ptxas;
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(real))
            .str());
  }
  candidates.push_back("/usr/local/cuda");
  candidates.push_back("/usr/lib/nvidia-cuda-toolkit");
  for (const std::string &root : candidates) {
    llvm::SmallString<256> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice",
                            "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice)) {
      ::setenv("CUDA_HOME", root.c_str(), /*overwrite=*/0);
      return;
    }
  }
}

void mlir::gacc::registerGAccDialectsAndInterfaces(DialectRegistry &registry) {
  registry.insert<GAccDialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, index::IndexDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect>();
  registerGAccExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}
