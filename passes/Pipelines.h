//===- Pipelines.h - gacc pass pipelines ------------------------*- C++ -*-===//
//
// The pass pipelines from the gacc dialect to the CPU (LLVM dialect) and to
// NVVM (gpu kernels, PTX, cubin). gacc-opt registers them and gacc-run calls
// the same builders, so what gacc-opt prints is what gacc-run executes.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_PIPELINES_H
#define GACC_PASSES_PIPELINES_H

#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::gacc {

/// Options of gacc-lower-to-cpu-pipeline.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> unroll{
      *this, "unroll",
      llvm::cl::desc("Fully unroll the micro-batch loop"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> arenaUpdate{
      *this, "arena-update",
      llvm::cl::desc("Build the arena kernels and leave the update to them "
                     "(gacc-expand-accumulation arena-update)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> resumable{
      *this, "resumable",
      llvm::cl::desc("Also build the step split at micro-batch boundaries "
                     "(gacc-expand-accumulation resumable)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Call OpenBLAS cblas_sgemm (through the runtime's "
                     "gacc_sgemm) for matrix products; otherwise loops"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> deferWindowBytes{
      *this, "defer-window-bytes",
      llvm::cl::desc("gacc-defer-weight-gradients' max-window-bytes (0: "
                     "every weight gradient accumulates per micro-batch)"),
      llvm::cl::init(kDeferWindowBytes)};
  PassOptions::Option<bool> stepArena{
      *this, "step-arena",
      llvm::cl::desc("Place the transient buffers in the step arena at "
                     "compile-time offsets (gacc-place-transient-buffers); "
                     "otherwise each is allocated from the heap as it runs"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fp32Storage{
      *this, "fp32-storage",
      llvm::cl::desc("Keep a bf16/fp16 step's rounded values in fp32 "
                     "tensors (no gacc-narrow-stored-values): the same "
                     "values in twice the bytes"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("CPU threads the step's large loops run on "
                     "(gacc-parallelize-loops, then an OpenMP team through "
                     "convert-scf-to-openmp; the program needs libomp). 1: "
                     "serial loops; outside [1, 1024]: an error"),
      llvm::cl::init(1)};
};

/// Options of gacc-lower-to-nvvm-pipeline.
struct NVVMPipelineOptions : public PassPipelineOptions<NVVMPipelineOptions> {
  PassOptions::Option<bool> cublas{
      *this, "cublas",
      llvm::cl::desc("Call cuBLAS (gacc_cublas_sgemm, from host code) for "
                     "the GEMMs instead of compiling them to kernels"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> cublasLt{
      *this, "cublaslt",
      llvm::cl::desc("With cublas: call cuBLASLt (gacc_cublaslt_sgemm, its "
                     "plans chosen once per shape) instead of cuBLAS"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> cublasLtGelu{
      *this, "cublaslt-gelu",
      llvm::cl::desc("With cublaslt: fold a linear layer's tanh GELU into "
                     "its GEMM (GELU_AUX_BIAS) and the GELU's gradient into "
                     "the next layer's data-gradient GEMM (DGELU); off until "
                     "a device has run it"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> arenaKernels{
      *this, "arena-kernels",
      llvm::cl::desc("Also build the multi-tensor arena kernels "
                     "(gacc-build-arena-kernels)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> unroll{
      *this, "unroll",
      llvm::cl::desc("Fully unroll the micro-batch loop"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> arenaUpdate{
      *this, "arena-update",
      llvm::cl::desc("Build the arena kernels and leave the update to them "
                     "(gacc-expand-accumulation arena-update)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> resumable{
      *this, "resumable",
      llvm::cl::desc("Also build the step split at micro-batch boundaries "
                     "(gacc-expand-accumulation resumable)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> fp32Storage{
      *this, "fp32-storage",
      llvm::cl::desc("Keep a bf16/fp16 step's rounded values in fp32 "
                     "tensors (no gacc-narrow-stored-values): the same "
                     "values in twice the bytes"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> deferWindowBytes{
      *this, "defer-window-bytes",
      llvm::cl::desc("gacc-defer-weight-gradients' max-window-bytes (0: "
                     "every weight gradient accumulates per micro-batch); "
                     "its launch-elements is the GPU's"),
      llvm::cl::init(kDeferWindowBytes)};
  PassOptions::Option<bool> cudnnAttention{
      *this, "cudnn-attention",
      llvm::cl::desc("Run a bf16/fp16 step's attention, forward and "
                     "backward, as cuDNN's fused scaled-dot-product "
                     "attention (gacc-fuse-attention, convert-gacc-to-"
                     "cudnn) where the head size allows (a multiple of 8 "
                     "up to 128), instead of its decomposition"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> cudaGraph{
      *this, "cuda-graph",
      llvm::cl::desc("Compile every public function to its graph form "
                     "(gacc-device-resident-scalars: scalar arguments and "
                     "results in device buffers, no host read of device "
                     "memory), so that a CUDA graph can capture it"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU architecture: an NVPTX chip from sm_50 on "
                     "(sm_80, sm_90, sm_90a, sm_100f, ...); cubin and fatbin "
                     "need one the CUDA toolkit's ptxas assembles (CUDA 13: "
                     "sm_75 on)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX ISA versions, as +ptxNN; the default +ptx80 is "
                     "raised to the chip's oldest where that is newer "
                     "(sm_100: +ptx86); given ones older than the chip's are "
                     "an error"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel object format: isa (PTX text), bin (cubin, "
                     "assembled by ptxas) or fatbin"),
      llvm::cl::init("bin")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block along the innermost parallel "
                     "dimension"),
      llvm::cl::init(256)};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("LLVM optimization level for PTX"),
      llvm::cl::init(3)};
};

/// gacc-autodiff, gacc-expand-accumulation (with `expand`'s options),
/// gacc-fuse-accumulation, gacc-defer-weight-gradients (when
/// `options.deferWindowBytes` is positive: its max-window-bytes),
/// gacc-fuse-attention (with `options.fusedAttention`),
/// convert-gacc-to-linalg, gacc-narrow-stored-values (unless
/// `options.fp32Storage`) and one-shot bufferization with buffer
/// deallocation: the model down to memref-level step functions.
void buildTrainingStepToBuffersPipeline(
    OpPassManager &pm, const GAccExpandAccumulationPassOptions &expand,
    const StepToBuffersOptions &options = {});

/// The model down to the LLVM dialect for the CPU.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const CPUPipelineOptions &options);

/// Checks the CPU pipeline's options: threads in [1, kMaxCpuThreads],
/// defer-window-bytes >= 0. Returns the problem, or an empty string.
std::string validateCPUPipelineOptions(const CPUPipelineOptions &options);

/// The model down to gpu kernels serialized for NVIDIA GPUs (NVVM, PTX,
/// cubin) with host code in the LLVM dialect.
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const NVVMPipelineOptions &options);

/// Checks the NVVM pipeline's options: a chip LLVM's NVPTX back end knows
/// from sm_50 on (suffix a from sm_90, f from sm_100), PTX features it
/// knows and not older than the chip's, format isa, bin or fatbin,
/// block-size in [1, 1024], opt-level 0–3, defer-window-bytes >= 0,
/// cublaslt only with cublas and cublaslt-gelu only with cublaslt,
/// cuda-graph not with resumable. Returns the problem, or an empty string.
/// Reads the options alone (checkNVVMToolchain looks at the machine).
std::string validateNVVMPipelineOptions(const NVVMPipelineOptions &options);

/// The toolchain the NVVM pipeline will run, checked before it starts: for
/// format bin and fatbin, a chip that the ptxas the serializer will run
/// lists (checkPtxasChip, which runs `ptxas --help` once per ptxas and
/// process). Returns the problem, a clause to which the caller adds the
/// flag that changes it, or an empty string.
std::string checkNVVMToolchain(const NVVMPipelineOptions &options);

/// Registers gacc-lower-to-cpu-pipeline and gacc-lower-to-nvvm-pipeline.
void registerGAccPipelines();

/// Points MLIR's NVVM serializer at the CUDA toolkit (for libdevice and
/// ptxas) when the environment does not: if none of CUDA_ROOT, CUDA_HOME and
/// CUDA_PATH is set, sets CUDA_HOME to the first toolkit that holds
/// nvvm/libdevice/libdevice.10.bc among: the one holding the `ptxas` found on
/// PATH (after resolving links), /usr/local/cuda, /usr/lib/nvidia-cuda-toolkit. Without a toolkit PTX
/// output still works (math functions stay unresolved externs) and cubin
/// output fails with ptxas's message.
void configureCUDAToolkit();

/// Everything a gacc tool must register: the gacc dialect, the upstream
/// dialects the pipelines produce, their bufferization and conversion
/// interfaces, the NVVM target and the LLVM IR translations.
void registerGAccDialectsAndInterfaces(DialectRegistry &registry);

} // namespace mlir::gacc

#endif // GACC_PASSES_PIPELINES_H
