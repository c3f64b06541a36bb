//===- Options.h - gacc-run's settings --------------------------*- C++ -*-===//
//
// The settings gacc-run's command line resolves to, shared by the training
// driver (Training.cpp) and the artifact emitter (Emit.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_OPTIONS_H
#define GACC_TOOLS_GACCRUN_OPTIONS_H

#include "tools/gacc-run/AccumulationSchedule.h"

#include "passes/StepSignature.h"
#include "passes/analysis/MemoryPlan.h"

#include "abi/RuntimeABI.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace gaccrt {

/// Exit status for bad input (flags, IR, data files).
constexpr int kExitBadInput = 2;

struct RunSettings {
  std::string dataset = "fashion-mnist";
  std::string dataDir;
  bool dropLast = false;
  bool noEval = false;
  int64_t epochs = 1;
  int64_t maxSteps = -1; // -1: no limit
  int64_t logEvery = 20;
  double lr = 0;
  uint64_t seed = 0;
  bool unroll = false;
  bool blas = true;
  /// The cuda target's GEMMs through cuBLASLt (gacc_cublaslt_sgemm), not
  /// cuBLAS (--cuda-gemm).
  bool cublasLt = false;
  /// With cublasLt: the tanh GELU and its gradient in cuBLASLt's epilogues
  /// (--cuda-gelu-epilogue).
  bool cublasLtGelu = false;
  /// A bf16/fp16 step's attention through cuDNN's fused kernels on the
  /// cuda target (--cuda-attention=cudnn).
  bool cudnnAttention = false;
  /// --cuda-graph: the cuda target's step compiled to its graph form and
  /// replayed as one CUDA graph per optimizer step (GraphStep).
  bool cudaGraph = false;
  /// The CPU step's transient buffers in the step arena
  /// (gacc-place-transient-buffers), not the heap.
  bool stepArena = true;
  /// CPU threads of the step's loops (CPUPipelineOptions::threads).
  int64_t threads = 1;
  /// gacc-defer-weight-gradients' max-window-bytes for the step (0:
  /// every weight gradient accumulates per micro-batch).
  int64_t deferWindowBytes = 0;
  /// --fp32-storage: a bf16/fp16 step's rounded values in fp32 buffers.
  bool fp32Storage = false;
  std::string metricsPath, saveParams, loadParams, orderFile;
  /// The names and layout of the --load-params file (--params-layout).
  std::string paramsLayout = "gacc";
  /// ema_decay: evaluate the weights' moving average (--eval-ema) and
  /// write it (--save-ema).
  bool evalEma = false;
  std::string saveEma;
  /// --save-gradients: where to write the last applied gradient.
  std::string saveGradients;
  /// Dynamic loss scaling (from the step's #gacc.loss_scaling; 1 without).
  float initialLossScale = 1.0f;
  float growthFactor = float(::gacc::abi::kLossScaleGrowthFactor);
  float backoffFactor = float(::gacc::abi::kLossScaleBackoffFactor);
  int64_t growthInterval = ::gacc::abi::kLossScaleGrowthInterval;
  /// Data parallelism: this process's rank among `ranks` (1: a single
  /// process); each rank trains on its slice of every global effective
  /// batch. checkReplicas compares the ranks' parameters after every step.
  int rank = 0, ranks = 1;
  bool checkReplicas = false;
  /// Where the step runs: "cpu", or "cuda" (the device's driver is loaded:
  /// the step's host code is JIT-compiled from the NVVM pipeline, its
  /// memory is the managed-memory arena, its GEMMs are cuBLAS calls;
  /// evaluation runs on the CPU).
  std::string target = "cpu";
  /// The device's compute capability (e.g. 90) on the cuda target.
  int computeCapability = 0;
  /// The update runs as the arena kernels over flat parameter, accumulator
  /// and state arenas after each step (StepArenas) instead of inside it.
  bool arenaUpdate = false;
  /// --checkpoint-dir (where checkpoints go: every `checkpointEvery`
  /// optimizer steps when positive, on SIGTERM/SIGINT at the next
  /// micro-batch boundary, and at the end) and --resume (the checkpoint
  /// this run continues). With a checkpoint directory the step runs one
  /// micro-batch at a time (its resumable form).
  std::string checkpointDir, resumeDir;
  int64_t checkpointEvery = 0;
  /// Testing aid (--pause-after-micro-batch STEP:K): rank 0 waits for
  /// SIGTERM or SIGINT after micro-batch K of optimizer step STEP (both
  /// 1-based), so that a test can stop the run exactly there.
  int64_t pauseStep = 0, pauseMicroBatch = 0;
  /// The step's memory plan (--memory-plan, --memory-plan-svg,
  /// --memory-budget, the cuda target): a --metrics row, and the measured
  /// peak beside it at the end.
  std::optional<mlir::gacc::MemoryPlan> memoryPlan;
  /// --accum-schedule: accumulation steps per optimizer step (none: the
  /// step's N for every step, also when the schedule gives just that).
  std::optional<AccumulationSchedule> accumSchedule;
  /// --memory-budget in bytes (none without it): it chose the micro-batch
  /// and N (not --accum-steps), and the end of the run says when the
  /// measured peak exceeded it.
  std::optional<uint64_t> memoryBudgetBytes;

  /// The step is compiled in its resumable form (@S_accumulate and
  /// @S_update beside @S): for checkpoints within a window, and for
  /// windows of fewer micro-batches than the step's N.
  bool resumable() const {
    return !checkpointDir.empty() || accumSchedule.has_value();
  }
};

/// Prints "gacc-run: error: <msg>" to stderr.
void reportError(const llvm::Twine &msg);

/// Trains the (verified, re-specialized) model. Returns the exit status.
int train(mlir::ModuleOp model, mlir::gacc::TrainStepOp step,
          const mlir::gacc::StepSignature &sig, const RunSettings &settings);

/// Compiles the model as given and with N = 1 (one micro-batch holding the
/// effective batch), runs one optimizer step of each from the same
/// parameters on the same samples, prints the maximum relative differences
/// of the normalized gradients and updated parameters, and returns 0 when
/// both are within `tolerance`, 1 otherwise.
int checkEquivalence(mlir::ModuleOp model, mlir::gacc::TrainStepOp step,
                     const mlir::gacc::StepSignature &sig,
                     const RunSettings &settings, double tolerance);

/// Compiles the model and writes `kind` (ptx, cubin, llvm) to `outPath`.
int emit(mlir::ModuleOp model, llvm::StringRef kind, llvm::StringRef outPath,
         llvm::StringRef chip, bool unroll, bool blas,
         int64_t deferWindowBytes, bool fp32Storage);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_OPTIONS_H
