//===- gacc-run.cpp - compile and train a gacc model ----------------------===//
//
// gacc-run MODEL.mlir: its command line and the checks of the flags that
// need no model, then the driver: reads the model (ModelInput.cpp), applies
// the command line's overrides of its schedule, plans its memory
// (MemoryPlanning.cpp), then trains it on the CPU or a CUDA device
// (Training.cpp), checks it against N = 1 (CheckEquivalence.cpp) or writes
// the compiled artifact (Emit.cpp).
//
//===----------------------------------------------------------------------===//

#include "tools/Version.h"
#include "tools/gacc-run/DataSources.h"
#include "tools/gacc-run/MemoryBudget.h"
#include "tools/gacc-run/MemoryPlanning.h"
#include "tools/gacc-run/ModelInput.h"
#include "tools/gacc-run/Options.h"
#include "tools/gacc-run/OutputPaths.h"
#include "tools/gacc-run/ParamLayouts.h"
#include "tools/gacc-run/StopSignals.h"

#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "runtime/Collectives.h"
#include "runtime/CpuJit.h"
#include "runtime/CpuThreads.h"
#include "runtime/CudaDriver.h"
#include "runtime/HostMemory.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;
namespace cl = llvm::cl;

void gaccrt::reportError(const llvm::Twine &msg) {
  // Under mpirun every line names its rank, before MPI_Init too.
  std::string line = "gacc-run: error: ";
  if (collectives::size() > 1)
    line += "rank " + std::to_string(collectives::rank()) + ": ";
  else if (collectives::launcherSize() > 1)
    line += "rank " + std::to_string(collectives::launcherRank()) + ": ";
  line += msg.str() + "\n";
  // What was printed before the error comes before it on a terminal.
  llvm::outs().flush();
  llvm::errs() << line;
  llvm::errs().flush();
}

static cl::OptionCategory cat("gacc-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::cat(cat));
static cl::opt<std::string> dataset(
    "dataset",
    cl::desc("What to train on: fashion-mnist (images, test accuracy), kjv "
             "(King James Bible characters, one verse per sample, validation "
             "bits per character), kjv-text (the verses joined by newlines "
             "and cut into chunks of S + 1 characters, every 20th chunk "
             "validating) or tensors (input0, input1, ... of a safetensors "
             "file)"),
    cl::init("fashion-mnist"), cl::cat(cat));
static cl::opt<std::string> dataDir(
    "data",
    cl::desc("fashion-mnist: directory of the gzip IDX files (default "
             "/usr/share/datasets/fashion-mnist); kjv, kjv-text: a text file, "
             "one verse per line (default: the output of `bible -f "
             "Gen1:1-Rev22:21`); tensors: the safetensors file"),
    cl::cat(cat));
static cl::opt<bool> dropLast(
    "drop-last",
    cl::desc("Skip the last, short window of each epoch instead of training "
             "on the samples it holds"),
    cl::init(false), cl::cat(cat));
static cl::opt<bool> noEval("no-eval",
                            cl::desc("Skip the evaluation after each epoch"),
                            cl::init(false), cl::cat(cat));
static cl::opt<int64_t> microBatch(
    "micro-batch",
    cl::desc("Micro-batch size m (default: the model's micro_batch; alone it "
             "keeps the declared effective batch and must divide it)"),
    cl::init(0), cl::cat(cat));
static cl::opt<int64_t> accumSteps(
    "accum-steps",
    cl::desc("Accumulation steps N per optimizer step (default: the "
             "model's accum_steps; alone it keeps the declared effective "
             "batch E, so the micro-batch becomes E / N, and must divide "
             "it)"),
    cl::init(0), cl::cat(cat));
static cl::opt<std::string> accumSchedule(
    "accum-schedule",
    cl::desc("Ramp the effective batch over optimizer steps (batch-size "
             "warmup): STEP:N,... gives N accumulation steps from optimizer "
             "step STEP (1-based) on, e.g. 1:1,11:2,21:4. Every N is at "
             "most the step's accumulation steps, which size its window; "
             "each window is normalized by its own count, and clipping, the "
             "learning-rate schedule and the optimizer run once per step"),
    cl::value_desc("STEP:N,..."), cl::cat(cat));
static cl::opt<int64_t> epochs("epochs",
                               cl::desc("Epochs to train (default 1)"),
                               cl::init(1), cl::cat(cat));
static cl::opt<int64_t>
    maxSteps("max-steps",
             cl::desc("Stop after this many optimizer steps, skipped fp16 "
                      "windows included (default: no limit)"),
             cl::init(-1), cl::cat(cat));
static cl::opt<double> lr("lr",
                          cl::desc("Base learning rate (default: the "
                                   "optimizer's lr; an lr_schedule scales "
                                   "it)"),
                          cl::init(-1.0), cl::cat(cat));
static cl::opt<int64_t> seed(
    "seed",
    cl::desc("Seed of initialization, data order and dropout masks "
             "(default: the step's seed)"),
    cl::init(-1), cl::cat(cat));
static cl::opt<int64_t> logEvery(
    "log-every",
    cl::desc("Print a progress line every K optimizer steps (default 20)"),
    cl::init(20), cl::cat(cat));
static cl::opt<std::string>
    metrics("metrics",
            cl::desc("Write metrics as JSON lines, each as it happens (one "
                     "per logged step, one per epoch, a final summary); a "
                     "link is written through, a FIFO or /dev/stdout in "
                     "place (the progress lines then go to stderr)"),
            cl::cat(cat));
static cl::opt<std::string>
    saveParams("save-params",
               cl::desc("Write the trained parameters and running statistics "
                        "(safetensors)"),
               cl::cat(cat));
static cl::opt<bool> evalEma(
    "eval-ema",
    cl::desc("Evaluate the weights' exponential moving average (the step's "
             "ema_decay) instead of the weights"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string> saveEma(
    "save-ema",
    cl::desc("Write the weights' exponential moving average (the step's "
             "ema_decay; safetensors, one tensor per parameter)"),
    cl::cat(cat));
static cl::opt<std::string> saveGradients(
    "save-gradients",
    cl::desc("Write the gradient the last optimizer step applied "
             "(safetensors, one tensor per parameter): each accumulator "
             "(summed over the ranks of a data-parallel job) divided by the "
             "window's normalization count and loss scale, before clipping"),
    cl::cat(cat));
static cl::opt<std::string>
    loadParams("load-params",
               cl::desc("Start from these parameters and running "
                        "statistics (safetensors: F32, or F16 and BF16 "
                        "widened exactly) instead of the initializers; with "
                        "frozen parameters, trainable ones the file lacks "
                        "keep their initializers"),
               cl::cat(cat));
static cl::opt<std::string> paramsLayout(
    "params-layout",
    cl::desc("Names and layout of the --load-params file: gacc (the "
             "parameter symbols, torch layouts) or gpt2 (a Hugging Face "
             "GPT-2 checkpoint onto examples/kjv_gpt.mlir's names, Conv1D "
             "weights transposed)"),
    cl::init("gacc"), cl::cat(cat));
static cl::opt<bool> memoryPlanFlag(
    "memory-plan",
    cl::desc("Print the step's static memory plan (bytes of parameters, "
             "accumulators, optimizer state, window inputs, activations, "
             "temporaries and workspace at the planned peak, and the op "
             "where it occurs) before training, write it to --metrics, and "
             "set the measured peak beside it at the end"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string> memoryPlanSvg(
    "memory-plan-svg",
    cl::desc("Draw the planned live bytes over the step's ops, stacked by "
             "kind (persistent, activations, temporaries, workspace), as an "
             "SVG picture in this file, written once the step is planned, "
             "before training starts (a later failure leaves it: it "
             "describes the compiled step, not the run)"),
    cl::value_desc("file"), cl::cat(cat));
static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Train with the fewest micro-batches whose planned peak fits "
             "this size (e.g. 512MiB, 2GiB, 1.5GB): the parameters, "
             "accumulators, optimizer state, window inputs, activations, "
             "temporaries and workspaces, not the data set's host copy. "
             "The effective batch E stays: the fewest accumulation steps N "
             "whose micro-batch m = ceil(E / N) fits (the last micro-batch "
             "of a window may be ragged). Default on --target "
             "cuda: the model's micro-batch, checked against the device's "
             "free memory less 1 GiB"),
    cl::value_desc("size"), cl::cat(cat));
/// --memory-budget in bytes, parsed with the other flags (parseByteSize).
static std::optional<uint64_t> memoryBudgetBytes;
static cl::opt<std::string> recompute(
    "recompute",
    cl::desc("Activation recomputation: marked (the default: the forward ops "
             "the model marks gacc.recompute run again in the backward), "
             "cheap (also every op cheap to recompute: activations, "
             "normalizations, embeddings, pools, dropout, elementwise ops, "
             "unless the inputs they keep alive are larger than their "
             "outputs; the outputs of linear layers, convolutions and "
             "attention are kept) or none (every activation is kept, "
             "marks ignored). Gradients are bit-identical; the plan's "
             "activations shrink. Without it, --memory-budget turns cheap on "
             "when that lets a larger micro-batch fit, and says so"),
    cl::value_desc("policy"), cl::init("marked"), cl::cat(cat));
static cl::opt<std::string> checkpointDir(
    "checkpoint-dir",
    cl::desc("Write checkpoints into DIR (created if needed; one that holds "
             "a checkpoint needs --resume): every --checkpoint-every "
             "optimizer steps, at the end of the run, and on SIGTERM or "
             "SIGINT at the next micro-batch boundary, after which gacc-run "
             "exits 0. The step then runs one micro-batch at a time. A "
             "checkpoint holds parameters, optimizer state, running "
             "statistics, counters, the loss scale, the epoch's sample "
             "order and, in the middle of a window, the accumulators; it is "
             "complete or absent (per_window batch statistics are not "
             "supported yet)"),
    cl::value_desc("DIR"), cl::cat(cat));
static cl::opt<int64_t> checkpointEvery(
    "checkpoint-every",
    cl::desc("With --checkpoint-dir: a checkpoint every K optimizer steps "
             "(default: none besides the end and stop signals)"),
    cl::value_desc("K"), cl::init(0), cl::cat(cat));
static cl::opt<std::string> resumeDir(
    "resume",
    cl::desc("Continue the run checkpointed in DIR, bit for bit, from the "
             "micro-batch it stopped at (it must be the same model, "
             "schedule, data set, order and ranks); checkpoints continue "
             "there unless --checkpoint-dir says otherwise, and --metrics "
             "is appended to"),
    cl::value_desc("DIR"), cl::cat(cat));
static cl::opt<std::string> pauseAfterMicroBatch(
    "pause-after-micro-batch",
    cl::desc("Testing aid: rank 0 waits for SIGTERM or SIGINT after "
             "micro-batch K of optimizer step STEP (both from 1)"),
    cl::value_desc("STEP:K"), cl::Hidden, cl::cat(cat));
static cl::opt<std::string> orderFile(
    "order-file",
    cl::desc("Training-sample indices, one per line, in the order they are "
             "consumed each epoch (default: a Fisher-Yates shuffle seeded "
             "by --seed)"),
    cl::cat(cat));
static cl::opt<bool> checkEquiv(
    "check-equivalence",
    cl::desc("Instead of training: run one optimizer step as given and with "
             "N = 1 (the effective batch in one micro-batch) from the same "
             "parameters on the same samples; print the maximum relative "
             "differences of gradients and updated parameters and exit 1 "
             "above --tolerance"),
    cl::init(false), cl::cat(cat));
static cl::opt<double>
    tolerance("tolerance",
              cl::desc("Tolerance of --check-equivalence (default 1e-5, "
                       "fp32)"),
              cl::init(1e-5), cl::cat(cat));
static cl::opt<bool> unroll("unroll",
                            cl::desc("Fully unroll the micro-batch loop (no "
                                     "deferred weight gradients then: they "
                                     "need the loop)"),
                            cl::init(false), cl::cat(cat));
static cl::opt<bool>
    noBlas("no-blas",
           cl::desc("Compile matrix products to loops instead of OpenBLAS "
                    "calls (on --target cuda, to kernels instead of cuBLAS "
                    "calls)"),
           cl::init(false), cl::cat(cat));
enum class CudaGemm { Cublas, CublasLt };
static cl::opt<CudaGemm> cudaGemm(
    "cuda-gemm",
    cl::desc("The library that runs the GEMMs when the target is cuda "
             "(default cublas)"),
    cl::values(clEnumValN(CudaGemm::Cublas, "cublas",
                          "cublasSgemm, one call per GEMM"),
               clEnumValN(CudaGemm::CublasLt, "cublaslt",
                          "cublasLtMatmul, descriptors and algorithm chosen "
                          "once per GEMM shape; batch products (attention) "
                          "as batched GEMMs; a linear layer's bias add and "
                          "ReLU in the GEMM's epilogue (fp32 steps; the "
                          "tanh GELU too with --cuda-gelu-epilogue); a "
                          "bf16/fp16 step's operands on tensor cores with "
                          "fp32 sums")),
    cl::init(CudaGemm::Cublas), cl::cat(cat));
static cl::opt<bool> cudaGeluEpilogue(
    "cuda-gelu-epilogue",
    cl::desc("With --cuda-gemm=cublaslt: a linear layer's tanh GELU in its "
             "GEMM's epilogue (cuBLASLt's GELU_AUX_BIAS) and the GELU's "
             "gradient in the epilogue of the data-gradient GEMM that "
             "feeds it (DGELU), where their row length is a multiple of 8 "
             "(default false: gacc's kernels; not yet run on a device)"),
    cl::init(false), cl::cat(cat));
enum class CudaAttention { Decomposed, Cudnn };
static cl::opt<CudaAttention> cudaAttention(
    "cuda-attention",
    cl::desc("How a bf16/fp16 step runs gacc.attention when the target is "
             "cuda (default decomposed)"),
    cl::values(clEnumValN(CudaAttention::Decomposed, "decomposed",
                          "blockwise: GEMMs and kernels, the "
                          "probabilities recomputed in the backward"),
               clEnumValN(CudaAttention::Cudnn, "cudnn",
                          "cuDNN's fused scaled-dot-product attention, "
                          "forward and backward, where the head size is a "
                          "multiple of 8 up to 128 (libcudnn.so.9 opened "
                          "at run time; fp32 steps and other heads stay "
                          "decomposed)")),
    cl::init(CudaAttention::Decomposed), cl::cat(cat));
static cl::opt<bool> cudaGraph(
    "cuda-graph",
    cl::desc("On --target cuda, capture the whole optimizer step (its N "
             "micro-batches, accumulation and update) into one CUDA graph "
             "on the second step and replay it from then on: the step is "
             "compiled to its graph form, its scalars and results in device "
             "buffers (gacc-device-resident-scalars). Off by default; on an "
             "H200 it gave the eager step's parameters bit for bit and "
             "took the examples' step 1.7-4.3 times faster (docs/"
             "benchmarks.md). Implies the update inside "
             "the step (no --arena-update); not with checkpoints, --resume, "
             "--accum-schedule, data parallelism or GACC_CUDA_TRACE"),
    cl::init(false), cl::cat(cat));
static cl::opt<bool> noStepArena(
    "no-step-arena",
    cl::desc("On the CPU, allocate each transient buffer from the heap as "
             "the step runs instead of placing them all in the step arena "
             "at offsets chosen at compile time"),
    cl::init(false), cl::cat(cat));
static cl::opt<int> threadsOption(
    "cpu-threads",
    cl::desc("CPU threads of the CPU step: its large loops split into one "
             "slab per thread (gacc-parallelize-loops, run by an OpenMP "
             "team of LLVM's libomp, opened at run time), its large GEMMs "
             "into one slab of the product per thread and its batched GEMMs "
             "spread over the threads, OpenBLAS itself on one thread. "
             "Default: this process's share of the machine's CPUs (those it "
             "may run on, shared among the ranks of an mpirun job on this "
             "machine; one thread, with a note, where libomp is missing); "
             "1: everything on one thread; at most 1024, and OMP_THREAD_LIMIT "
             "caps it. Not with --target cuda or --emit (which writes the "
             "one-thread step)"),
    cl::value_desc("N"), cl::cat(cat));
static cl::opt<bool> deferWeightGradients(
    "defer-weight-gradients",
    cl::desc("Compute a weight gradient (and the bias gradient of the "
             "same output gradient) once per window from the "
             "micro-batches' kept operands where a cost model finds that "
             "moves fewer bytes (on the GPU, counting launches) than "
             "accumulating it per micro-batch; not a bf16/fp16 step's "
             "products of rounded values, unless --fp32-storage "
             "(gacc-defer-weight-gradients; default true; off with "
             "--memory-budget, which keeps memory smallest, with --unroll, "
             "which leaves no loop, and with checkpoints, --resume or "
             "--accum-schedule, whose windows span calls, where =true is an "
             "error)"),
    cl::init(true), cl::cat(cat));
static cl::opt<bool> fp32Storage(
    "fp32-storage",
    cl::desc("Keep the values a bf16/fp16 step rounds in fp32 buffers "
             "instead of buffers of its precision (no "
             "gacc-narrow-stored-values): the same values (on the CPU the "
             "same parameters bit for bit with --defer-weight-gradients="
             "false: fp32 storage lets weight gradients defer, whose "
             "summation order differs in the last bits; on the cuda target "
             "fp32 GEMMs instead of bf16 ones), with twice the bytes for "
             "each; for comparison (an error on an fp32 step)"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string>
    emitKind("emit",
             cl::desc("Write the compiled artifact to -o FILE instead of "
                      "training: ptx or cubin (GPU kernels, the matrix "
                      "products among them, as --no-blas compiles them), "
                      "llvm (CPU LLVM IR)"),
             cl::cat(cat));
static cl::opt<std::string> outFile("o",
                                    cl::desc("Output file for --emit ('-': "
                                             "standard output)"),
                                    cl::value_desc("file"), cl::cat(cat));
static cl::opt<std::string>
    chip("chip",
         cl::desc("GPU architecture for --emit ptx/cubin: an NVPTX chip from "
                  "sm_50 on (sm_80, sm_90a, sm_100, sm_120f, ...; default "
                  "sm_90), with the PTX ISA it needs; cubin needs one the CUDA "
                  "toolkit's ptxas assembles (CUDA 13: sm_75 on)"),
         cl::init("sm_90"), cl::cat(cat));

static cl::opt<std::string> target(
    "target",
    cl::desc("Where to train: cpu (default), cuda (this process's GPU: "
             "device 0, or under mpirun the local rank's; the CUDA driver "
             "and cuBLAS are opened at run time; without a driver or device "
             "this is an error, exit status 2) or auto (cuda when a device "
             "is present, else cpu). On cuda the step's kernels run on the "
             "device in managed memory; evaluation runs on the CPU. "
             "GACC_CUDA_TRACE=1 prints (and synchronizes) every kernel launch; "
             "GACC_CUDA_PROFILE=1 times every launch and cuBLAS call with "
             "events and prints the device time per kernel at the end"),
    cl::init("cpu"), cl::cat(cat));
static cl::opt<bool> arenaUpdate(
    "arena-update",
    cl::desc("Keep parameters, accumulators and optimizer state in flat "
             "arenas and run the deferred update as the arena kernels "
             "(gacc-build-arena-kernels: one update kernel, and the "
             "deterministic norm when clipping) after each step instead of "
             "one update per parameter inside it (default: on for the cuda "
             "target unless the step has ema_decay, off on the CPU)"),
    cl::cat(cat));
static cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("Data-parallel training over the processes of an MPI job: each "
             "rank runs N micro-batches of its slice of every global "
             "effective batch (m × N × ranks samples) and the ranks sum "
             "their accumulators with one all-reduce per optimizer step "
             "(default: on when launched by mpirun; see docs/distributed.md)"),
    cl::cat(cat));
static cl::opt<bool> checkReplicas(
    "check-replicas",
    cl::desc("Data-parallel debug check: after every optimizer step, compare "
             "a hash of every rank's parameters and stop with an error when "
             "they differ"),
    cl::init(false), cl::cat(cat));

/// Sets the CPU step's team of threads from --cpu-threads (checked by
/// run()), or its default. Returns the exit status of a team that
/// --cpu-threads asked for and that cannot be made (0 when all is well).
/// Without --cpu-threads a missing libomp leaves one thread, with a note.
static int configureCpuThreads() {
  bool given = threadsOption.getNumOccurrences() > 0;
  int threads = given ? int(threadsOption)
                      : gaccrt::defaultCpuThreads(
                            collectives::launcherLocalSize());
  std::string problem = gaccrt::setCpuThreads(threads);
  if (problem.empty()) {
    // OMP_THREAD_LIMIT caps the team: said where it lowers what was asked.
    if (given && gaccrt::cpuThreads() < threads &&
        collectives::launcherRank() == 0)
      llvm::errs() << "gacc-run: note: --cpu-threads " << threads
                   << ": OMP_THREAD_LIMIT caps the team at "
                   << gaccrt::cpuThreads() << " thread"
                   << (gaccrt::cpuThreads() == 1 ? "" : "s") << "\n";
    return 0;
  }
  if (given) {
    reportError("--cpu-threads " + llvm::Twine(threads) + ": " + problem);
    return kExitBadInput;
  }
  if (collectives::launcherRank() == 0)
    llvm::errs() << "gacc-run: note: " << problem
                 << "; the CPU step runs on one thread\n";
  return 0;
}

/// Applies --micro-batch, --accum-steps and data parallelism to the model
/// with gacc-set-accumulation-schedule (what gacc-opt reproduces). Returns
/// false after reporting an error.
static bool applySchedule(ModuleOp model, bool distributed) {
  bool haveM = microBatch.getNumOccurrences() > 0;
  bool haveN = accumSteps.getNumOccurrences() > 0;
  if ((haveM && microBatch <= 0) || (haveN && accumSteps <= 0)) {
    reportError(haveM && microBatch <= 0
                    ? "--micro-batch must be positive, got " +
                          llvm::Twine(int64_t(microBatch))
                    : "--accum-steps must be positive, got " +
                          llvm::Twine(int64_t(accumSteps)));
    return false;
  }
  PassManager pm(model.getContext());
  GAccSetAccumulationSchedulePassOptions options;
  options.microBatch = haveM ? int64_t(microBatch) : 0;
  options.accumSteps = haveN ? int64_t(accumSteps) : 0;
  options.dataParallel = distributed;
  pm.addPass(createGAccSetAccumulationSchedulePass(options));
  return succeeded(pm.run(model));
}

/// --arena-update, or its default: on for the cuda target, unless the step
/// keeps a moving average of its weights (the arena kernels do not update
/// one yet; an explicit --arena-update is refused by the compiler).
static bool useArenaUpdate(TrainStepOp step, StringRef target) {
  if (arenaUpdate.getNumOccurrences())
    return arenaUpdate;
  return target == "cuda" && !step.getEmaDecay() && !cudaGraph;
}

/// --recompute: `none` drops the model's gacc.recompute marks, `cheap`
/// marks every op cheap to recompute, `marked` keeps the model's.
static void applyRecomputePolicy(ModuleOp model, TrainStepOp step,
                                 RecomputePolicy policy) {
  if (policy == RecomputePolicy::None)
    model->walk([](Operation *op) { op->removeAttr(kRecomputeAttrName); });
  else if (policy == RecomputePolicy::Cheap)
    markCheapRecomputation(step);
}

/// The to-buffers pipeline's options of the step that runs on `target`:
/// its deferred weight gradients, --fp32-storage, and on the cuda target
/// --cuda-attention=cudnn's fused attention.
static StepToBuffersOptions toBuffersOptions(StringRef target,
                                             int64_t deferWindowBytes) {
  StepToBuffersOptions options;
  options.deferWindowBytes = deferWindowBytes;
  options.launchElements = target == "cuda" ? kGpuLaunchElements : 0;
  options.fp32Storage = fp32Storage;
  options.fusedAttention =
      target == "cuda" && cudaAttention == CudaAttention::Cudnn;
  return options;
}

/// What a file or directory flag names: a file the run reads, a file it
/// writes, or a checkpoint directory (--checkpoint-dir, --resume).
enum class PathRole { Input, Output, CheckpointDir, ResumeDir };

/// Every flag that names a file or directory, once: the empty-name check
/// and the output checks read this table.
struct PathOption {
  const char *flag;
  cl::opt<std::string> *option;
  PathRole role;
};
static const PathOption pathOptions[] = {
    {"-o", &outFile, PathRole::Output},
    {"--metrics", &metrics, PathRole::Output},
    {"--save-params", &saveParams, PathRole::Output},
    {"--save-ema", &saveEma, PathRole::Output},
    {"--save-gradients", &saveGradients, PathRole::Output},
    {"--memory-plan-svg", &memoryPlanSvg, PathRole::Output},
    {"--checkpoint-dir", &checkpointDir, PathRole::CheckpointDir},
    {"--resume", &resumeDir, PathRole::ResumeDir},
    {"--load-params", &loadParams, PathRole::Input},
    {"--order-file", &orderFile, PathRole::Input},
    {"--data", &dataDir, PathRole::Input}};

/// A file or directory flag given an empty name is an error (it would
/// mean "none" and silently drop the output or the input).
static bool checkPathsNotEmpty() {
  for (const PathOption &p : pathOptions)
    if (p.option->getNumOccurrences() && p.option->empty()) {
      reportError(llvm::Twine(p.flag) + " needs " +
                  (p.role == PathRole::Output ? "a file name" : "a path") +
                  ", got an empty one");
      return false;
    }
  return true;
}

/// The output files, each with its flag (-o -: standard output).
static SmallVector<PathFlag> outputPaths() {
  SmallVector<PathFlag> outputs;
  for (const PathOption &p : pathOptions)
    if (p.role == PathRole::Output)
      outputs.push_back(
          {p.flag, *p.option, p.option == &outFile && outFile == "-"});
  return outputs;
}

/// Every output file, checked before any work (checkOutputPaths).
static bool checkOutputs() {
  SmallVector<PathFlag> inputs;
  for (const PathOption &p : pathOptions)
    if (p.role == PathRole::Input)
      inputs.push_back({p.flag, *p.option});
  return checkOutputPaths(
      {inputFile, inputs, outputPaths(), checkpointDir, resumeDir});
}

/// Whether an output is written to standard output (--metrics /dev/stdout,
/// -o -): it then gets standard output alone, and the log goes to
/// standard error.
static bool writesStandardOutput() {
  return llvm::any_of(outputPaths(), [](const PathFlag &output) {
    return isStandardOutput(output);
  });
}

/// What a gacc-run command does: train (the default), --emit or
/// --check-equivalence.
enum Mode : unsigned { kTrain = 1, kEmit = 2, kCheck = 4 };

static const char *modeName(unsigned mode) {
  return mode == kEmit    ? "--emit"
         : mode == kCheck ? "--check-equivalence"
                          : "a training run";
}

/// Every flag that does not apply to every mode, with the modes it applies
/// to: a flag given for another mode is an error, not silently ignored.
static bool checkFlagScopes() {
  if (!emitKind.empty() && checkEquiv) {
    reportError("--emit and --check-equivalence are two different modes; "
                "give one");
    return false;
  }
  unsigned mode = !emitKind.empty() ? kEmit : checkEquiv ? kCheck : kTrain;
  const std::pair<const cl::Option *, unsigned> scopes[] = {
      {&dataset, kTrain | kCheck},
      {&dataDir, kTrain | kCheck},
      {&dropLast, kTrain},
      {&noEval, kTrain},
      {&epochs, kTrain},
      {&maxSteps, kTrain},
      {&logEvery, kTrain},
      {&lr, kTrain | kCheck},
      {&seed, kTrain | kCheck},
      {&orderFile, kTrain | kCheck},
      {&tolerance, kCheck},
      {&outFile, kEmit},
      {&chip, kEmit},
      {&target, kTrain | kCheck},
      {&arenaUpdate, kTrain},
      {&dataParallel, kTrain | kEmit | kCheck},
      {&cudaGraph, kTrain},
      {&cudaGemm, kTrain},
      {&cudaAttention, kTrain},
      {&checkReplicas, kTrain},
      {&metrics, kTrain},
      {&saveParams, kTrain},
      {&saveGradients, kTrain},
      {&evalEma, kTrain},
      {&saveEma, kTrain},
      {&loadParams, kTrain | kCheck},
      {&paramsLayout, kTrain | kCheck},
      {&checkpointDir, kTrain},
      {&checkpointEvery, kTrain},
      {&resumeDir, kTrain},
      {&pauseAfterMicroBatch, kTrain},
      {&memoryPlanFlag, kTrain},
      {&memoryPlanSvg, kTrain},
      {&memoryBudget, kTrain | kCheck},
      {&accumSchedule, kTrain},
      {&recompute, kTrain | kCheck | kEmit},
      {&threadsOption, kTrain | kCheck},
      {&noStepArena, kTrain | kCheck},
      {&cudaGeluEpilogue, kTrain},
      {&fp32Storage, kTrain | kCheck | kEmit}};
  for (auto [option, modes] : scopes) {
    if (!option->getNumOccurrences() || (modes & mode))
      continue;
    std::string where;
    for (unsigned m : {kTrain, kEmit, kCheck})
      if (modes & m)
        where += std::string(where.empty() ? "" : " and ") + modeName(m);
    reportError(llvm::Twine(option->ArgStr.size() == 1 ? "-" : "--") +
                option->ArgStr + " does not apply to " + modeName(mode) +
                " (it applies to " + where + ")");
    return false;
  }
  if (chip.getNumOccurrences() && emitKind == "llvm") {
    reportError("--chip does not apply to --emit llvm (the CPU's LLVM IR); "
                "it applies to --emit ptx and cubin");
    return false;
  }
  // The kernels written always hold the GEMMs (cuBLAS, which a training
  // run calls instead, is called from host code, not from a kernel).
  if (noBlas && (emitKind == "ptx" || emitKind == "cubin")) {
    reportError("--no-blas does not apply to --emit " + emitKind +
                ": its kernels always compute the matrix products (it applies "
                "to --emit llvm and to training)");
    return false;
  }
  return true;
}

/// --checkpoint-dir, --checkpoint-every, --resume and the pause: what
/// goes together. Returns false after reporting an error.
static bool checkCheckpointFlags() {
  if (!isKnownParamsLayout(paramsLayout)) {
    reportError("--params-layout must be gacc or gpt2, got '" +
                paramsLayout + "'");
    return false;
  }
  if (paramsLayout.getNumOccurrences() && loadParams.empty()) {
    reportError("--params-layout says how to read --load-params; give "
                "--load-params too");
    return false;
  }
  if (!resumeDir.empty() && !loadParams.empty()) {
    reportError("--resume continues from the checkpoint's parameters; "
                "--load-params does not go with it");
    return false;
  }
  if (checkpointEvery.getNumOccurrences() && checkpointEvery <= 0) {
    reportError("--checkpoint-every must be positive");
    return false;
  }
  bool dir = !checkpointDir.empty() || !resumeDir.empty();
  if (!dir && (checkpointEvery.getNumOccurrences() ||
               !pauseAfterMicroBatch.empty())) {
    reportError(llvm::Twine(checkpointEvery.getNumOccurrences()
                                ? "--checkpoint-every"
                                : "--pause-after-micro-batch") +
                " needs --checkpoint-dir (or --resume)");
    return false;
  }
  if (!pauseAfterMicroBatch.empty()) {
    auto [stepText, kText] = llvm::StringRef(pauseAfterMicroBatch).split(':');
    int64_t stepNumber = 0, k = 0;
    if (stepText.getAsInteger(10, stepNumber) || kText.getAsInteger(10, k) ||
        stepNumber <= 0 || k <= 0) {
      reportError("--pause-after-micro-batch needs STEP:K (two positive "
                  "integers), got '" +
                  pauseAfterMicroBatch + "'");
      return false;
    }
  }
  if (!resumeDir.empty() && !llvm::sys::fs::is_directory(resumeDir)) {
    reportError("--resume " + resumeDir +
                (llvm::sys::fs::exists(resumeDir)
                     ? ": not a directory (a checkpoint is the directory "
                       "--checkpoint-dir named)"
                     : ": no such directory"));
    return false;
  }
  return true;
}

/// The flags' values that need no model: ranges, and an input to read.
static bool checkFlagValues() {
  if (inputFile.empty()) {
    reportError("no model given (usage: gacc-run MODEL.mlir [options]; see "
                "--help)");
    return false;
  }
  // An empty kind would read as no --emit at all: a training run.
  if (emitKind.getNumOccurrences() && emitKind.empty()) {
    reportError("--emit needs ptx, cubin or llvm, got an empty one");
    return false;
  }
  if (epochs <= 0 || logEvery <= 0) {
    reportError(epochs <= 0 ? "--epochs must be positive, got " +
                                  llvm::Twine(int64_t(epochs))
                            : "--log-every must be positive, got " +
                                  llvm::Twine(int64_t(logEvery)));
    return false;
  }
  if (maxSteps.getNumOccurrences() && maxSteps < 0) {
    reportError("--max-steps must be >= 0");
    return false;
  }
  // The step computes in f32: 1e39 would be infinite there.
  if (lr.getNumOccurrences() && !(lr >= 0.0 && std::isfinite(float(lr)))) {
    std::string given;
    llvm::raw_string_ostream(given) << llvm::format("%g", double(lr));
    reportError("--lr must be a number >= 0, finite in f32 (at most "
                "3.4e38), got " +
                given);
    return false;
  }
  if (seed.getNumOccurrences() && seed < 0) {
    reportError("--seed must be >= 0");
    return false;
  }
  // An empty size would mean "no budget" and silently drop the flag.
  if (memoryBudget.getNumOccurrences() && memoryBudget.empty()) {
    reportError("--memory-budget needs a size (512MiB, 2GiB, 1.5GB or "
                "bytes), got an empty one");
    return false;
  }
  if (!memoryBudget.empty()) {
    auto bytes = parseByteSize(memoryBudget);
    if (!bytes) {
      reportError("--memory-budget " + llvm::toString(bytes.takeError()));
      return false;
    }
    memoryBudgetBytes = *bytes;
  }
  return true;
}

/// The flags of --target and its libraries, and the pairs of flags that
/// cannot go together.
static bool checkTargetFlags() {
  if (!saveGradients.empty() && maxSteps.getNumOccurrences() &&
      maxSteps == 0) {
    reportError("--save-gradients with --max-steps 0: no optimizer step "
                "runs, so no gradient is applied");
    return false;
  }
  if (target != "cpu" && target != "cuda" && target != "auto") {
    reportError("--target must be cpu, cuda or auto, got '" + target + "'");
    return false;
  }
  if (cudaGemm.getNumOccurrences() && target == "cpu") {
    reportError("--cuda-gemm chooses the GEMM library of --target cuda; the "
                "CPU's GEMMs are OpenBLAS's");
    return false;
  }
  if (cudaAttention.getNumOccurrences() && target == "cpu") {
    reportError("--cuda-attention chooses how --target cuda runs attention; "
                "the CPU's is decomposed");
    return false;
  }
  if (cudaGraph && target == "cpu") {
    reportError("--cuda-graph captures the cuda target's step; give "
                "--target cuda");
    return false;
  }
  if (cudaGraph && arenaUpdate.getNumOccurrences() && arenaUpdate) {
    reportError("--cuda-graph with --arena-update: the graph holds the "
                "update inside the step; the arena kernels' calls are not "
                "captured yet");
    return false;
  }
  if (threadsOption.getNumOccurrences() &&
      (threadsOption < 1 || threadsOption > kMaxCpuThreads)) {
    reportError(llvm::formatv("--cpu-threads must be in [1, {0}], got {1}",
                              kMaxCpuThreads, int(threadsOption)));
    return false;
  }
  if (threadsOption.getNumOccurrences() && target == "cuda") {
    reportError("--cpu-threads sets the CPU step's threads; not with "
                "--target cuda");
    return false;
  }
  if (cudaGeluEpilogue.getNumOccurrences() && cudaGemm != CudaGemm::CublasLt) {
    reportError("--cuda-gelu-epilogue chooses cuBLASLt's GELU epilogues; it "
                "needs --cuda-gemm=cublaslt");
    return false;
  }
  if (cudaGemm == CudaGemm::CublasLt && noBlas) {
    reportError("--cuda-gemm=cublaslt with --no-blas: the GEMMs are "
                "compiled to kernels, not library calls");
    return false;
  }
  return true;
}

/// Where the step runs: the cuda target needs the driver and a device;
/// --target auto falls back to the CPU without them. Sets
/// `resolvedTarget` ("cpu" or "cuda") and the device's compute capability.
static bool resolveTarget(std::string &resolvedTarget, int &computeCapability) {
  resolvedTarget = "cpu";
  computeCapability = 0;
  if (target != "cpu" && emitKind.empty()) {
    std::string reason;
    const cuda::Driver *driver = cuda::load(reason);
    if (!driver && target == "cuda") {
      reportError("--target cuda: " + reason);
      return false;
    }
    if (driver) {
      cuda::DeviceInfo info = cuda::deviceInfo();
      if (collectives::launcherRank() == 0)
        logStream() << llvm::format("gacc-run: cuda device %d: %s, %.1f "
                                    "GiB, sm_%d\n",
                                    info.ordinal, info.name.c_str(),
                                    info.memoryBytes / double(1ull << 30),
                                    info.computeCapability);
      resolvedTarget = "cuda";
      computeCapability = info.computeCapability;
    }
    // Choices of how the cuda target runs do not apply to the CPU it fell
    // back to: said, not silently dropped.
    if (resolvedTarget == "cpu" && collectives::launcherRank() == 0)
      for (const cl::Option *o :
           {static_cast<const cl::Option *>(&cudaGemm),
            static_cast<const cl::Option *>(&cudaAttention)})
        if (o->getNumOccurrences())
          llvm::errs() << "gacc-run: warning: --target auto found no CUDA "
                          "device ("
                       << reason << "): training on the CPU, where --"
                       << o->ArgStr << " does not apply\n";
    if (resolvedTarget == "cuda" && checkEquiv) {
      reportError("--check-equivalence runs on the CPU (--target cpu)");
      return false;
    }
    if (resolvedTarget == "cuda" && threadsOption.getNumOccurrences()) {
      reportError("--cpu-threads sets the CPU step's threads; --target auto "
                  "found a CUDA device (give --target cpu)");
      return false;
    }
  }
  return true;
}

/// Under mpirun: whether every rank agrees on data parallelism, checked
/// with one all-gather (MPI is started for it on a rank that trains alone,
/// and stopped again when every rank does). A rank of a data-parallel job
/// would otherwise wait for the others' MPI_Init for the whole run. A
/// rank's `flagProblem` (a flag that does not fit how it trains) is
/// reported here, after the all-gather, so that every rank stops with it
/// instead of leaving the others waiting. False after the first rank that
/// differs, or the problem, was reported.
static bool ranksAgreeOnDataParallelism(bool distributed,
                                        StringRef flagProblem) {
  if (collectives::launcherSize() <= 1 ||
      // MPI that cannot start leaves a rank that trains alone as it was.
      (!distributed && !collectives::initialize().empty())) {
    if (!flagProblem.empty())
      reportError(flagProblem);
    return flagProblem.empty();
  }
  std::optional<collectives::RankDifference> differs =
      collectives::firstDifference(
          {uint64_t(distributed), uint64_t(flagProblem.empty())});
  bool rank0 = collectives::rank() == 0;
  if (differs && differs->index == 0) {
    // Only rank 0 reports: the rank that differs holds the other value.
    if (rank0)
      reportError(llvm::formatv(
          "the ranks disagree: rank {0} {1} and rank 0 {2}; give every rank "
          "the same --data-parallel",
          differs->rank,
          distributed ? "trains alone (--data-parallel=false)"
                      : "trains data-parallel",
          distributed ? "data-parallel" : "alone (--data-parallel=false)"));
  } else if (!flagProblem.empty()) {
    // Every rank that has it, or rank 0 alone where all do.
    if (differs || rank0)
      reportError(flagProblem);
  } else if (!differs) {
    if (!distributed)
      collectives::finalize();
    return true;
  }
  collectives::barrier();
  return false;
}

/// Data parallelism: on by default under mpirun (`distributed`), and then
/// started. Returns the exit status (0 to go on).
static int startDataParallelism(bool &distributed) {
  distributed = dataParallel.getNumOccurrences()
                    ? bool(dataParallel)
                    : collectives::launchedByMpirun();
  std::string flagProblem;
  if (distributed && checkEquiv)
    flagProblem = "--check-equivalence compares two single-process steps: "
                  "run it without --data-parallel (under mpirun, with "
                  "--data-parallel=false)";
  else if (!distributed && checkReplicas)
    flagProblem = "--check-replicas needs a data-parallel run (mpirun, "
                  "without --data-parallel=false)";
  if (distributed) {
    std::string problem = collectives::initialize();
    if (!problem.empty()) {
      reportError("--data-parallel: " + problem);
      return 1;
    }
  }
  if (!ranksAgreeOnDataParallelism(distributed, flagProblem))
    return kExitBadInput;
  if (!distributed && collectives::launcherSize() > 1 &&
      collectives::launcherRank() == 0)
    llvm::errs() << "gacc-run: warning: launched by mpirun with "
                    "--data-parallel=false: every rank trains alone and "
                    "writes the same output files\n";
  return 0;
}

/// What the model-level flags resolve to (applyModelFlags).
struct ModelChoices {
  /// --accum-schedule, parsed.
  std::optional<AccumulationSchedule> rampSchedule;
  /// Whether windows span calls (checkpoints, --resume, a schedule).
  bool resumable = false;
  /// gacc-defer-weight-gradients' max-window-bytes (0: off).
  int64_t deferWindowBytes = 0;
};

/// The flags that change the model (--micro-batch, --accum-steps,
/// --memory-budget's conflicts, --recompute, --seed) applied to it, the
/// model verified again, and the flags that depend on it checked; false
/// after an error.
static bool applyModelFlags(ModuleOp model, TrainStepOp step, bool distributed,
                            ModelChoices &choices) {
  if (!memoryBudget.empty() &&
      (microBatch.getNumOccurrences() || accumSteps.getNumOccurrences())) {
    reportError("--memory-budget chooses the micro-batch and the "
                "accumulation steps; give it without --micro-batch and "
                "--accum-steps");
    return false;
  }
  {
    // An error the new schedule causes lies at the model's ops: a note says
    // which flags set it.
    std::string given;
    if (microBatch.getNumOccurrences())
      given += " --micro-batch " + std::to_string(int64_t(microBatch));
    if (accumSteps.getNumOccurrences())
      given += " --accum-steps " + std::to_string(int64_t(accumSteps));
    ScopedDiagnosticHandler note(model.getContext(), [&](Diagnostic &d) {
      if (!given.empty() && d.getSeverity() == DiagnosticSeverity::Error)
        d.attachNote() << "the step's micro-batch and accumulation steps "
                          "come from the command line:"
                       << given;
      return failure(); // printed by the handler below
    });
    if (!applySchedule(model, distributed) || failed(verify(model)))
      return false;
  }
  std::optional<RecomputePolicy> recomputePolicy =
      parseRecomputePolicy(recompute);
  if (!recomputePolicy) {
    reportError("--recompute must be none, marked or cheap, got '" +
                recompute + "'");
    return false;
  }
  applyRecomputePolicy(model, step, *recomputePolicy);
  // --seed is the step's seed: the initializers and the order read it, and
  // random ops (dropout) compile it into their key.
  if (seed.getNumOccurrences())
    step.setSeed(uint64_t(seed));
  if (accumSchedule.getNumOccurrences()) {
    auto parsed = AccumulationSchedule::parse(accumSchedule);
    if (!parsed) {
      reportError(llvm::toString(parsed.takeError()));
      return false;
    }
    choices.rampSchedule = std::move(*parsed);
  }
  bool resumable = !checkpointDir.empty() || !resumeDir.empty() ||
                   choices.rampSchedule.has_value();
  choices.resumable = resumable;
  // Asked for in so many words where it cannot apply: an error, not a
  // choice silently undone (in every mode).
  if (fp32Storage &&
      step.getPrecision().value_or(Precision::fp32) == Precision::fp32) {
    reportError("--fp32-storage keeps a bf16/fp16 step's rounded values in "
                "fp32; @" +
                step.getSymName() + " computes in fp32");
    return false;
  }
  if (deferWeightGradients.getNumOccurrences() && deferWeightGradients &&
      (resumable || !memoryBudget.empty() || unroll)) {
    reportError(llvm::Twine("--defer-weight-gradients=true does not apply "
                            "with ") +
                (!memoryBudget.empty() ? "--memory-budget (which keeps "
                                         "memory smallest)"
                 : unroll ? "--unroll (deferring needs the micro-batch loop)"
                 : choices.rampSchedule
                     ? "--accum-schedule (whose windows span "
                       "calls)"
                     : "checkpoints or --resume (whose "
                       "windows span calls)"));
    return false;
  }
  // Weight gradients deferred to the end of the window, where the whole
  // window runs in one call, and not where memory comes first.
  choices.deferWindowBytes =
      deferWeightGradients && !resumable && memoryBudget.empty() && !unroll
          ? kDeferWindowBytes
          : 0;
  return true;
}

/// The run's settings from the flags, the step and what was resolved
/// before; false after an error (the pairs of settings that cannot go
/// together).
static bool makeSettings(TrainStepOp step, const StepSignature &sig,
                         const std::string &resolvedTarget,
                         int computeCapability, ModelChoices choices,
                         std::optional<MemoryPlan> plan,
                         RunSettings &settings) {
  settings.dataset = dataset;
  settings.dataDir = dataDir;
  settings.dropLast = dropLast;
  settings.noEval = noEval;
  settings.epochs = epochs;
  settings.maxSteps = maxSteps;
  settings.logEvery = logEvery;
  settings.lr = lr.getNumOccurrences() ? double(lr)
                        : cast<OptimizerAttrInterface>(step.getOptimizer())
                              .getDefaultLearningRate();
  // The rule the verifier applies to the model's own lr.
  if (LRScheduleAttr schedule = step.getLrScheduleAttr();
      schedule && lr.getNumOccurrences() &&
      schedule.getMinLr().convertToDouble() > settings.lr) {
    reportError(llvm::formatv(
        "--lr {0} is below the lr_schedule's min_lr {1}: its decay would "
        "raise the rate",
        llvm::format("%g", settings.lr),
        llvm::format("%g", schedule.getMinLr().convertToDouble())));
    return false;
  }
  settings.seed = step.getSeed();
  settings.unroll = unroll;
  if (step.hasLossScaling()) {
    LossScalingAttr scaling = step.getLossScalingOrDefault();
    settings.initialLossScale = scaling.getInitScale().convertToDouble();
    settings.growthFactor = scaling.getGrowthFactor().convertToDouble();
    settings.backoffFactor = scaling.getBackoffFactor().convertToDouble();
    settings.growthInterval = scaling.getGrowthInterval();
  }
  settings.blas = !noBlas;
  settings.cublasLt = cudaGemm == CudaGemm::CublasLt;
  settings.cublasLtGelu = cudaGeluEpilogue;
  settings.cudnnAttention = cudaAttention == CudaAttention::Cudnn;
  settings.stepArena = !noStepArena;
  if (resolvedTarget == "cpu") {
    if (configureCpuThreads())
      return false;
    settings.threads = gaccrt::cpuThreads();
  }
  settings.deferWindowBytes = choices.deferWindowBytes;
  settings.fp32Storage = fp32Storage;
  settings.metricsPath = metrics;
  settings.saveParams = saveParams;
  settings.evalEma = evalEma;
  settings.saveEma = saveEma;
  if (evalEma && noEval) {
    reportError("--eval-ema chooses the weights to evaluate; not with "
                "--no-eval");
    return false;
  }
  if (evalEma && !datasetEvaluates(dataset)) {
    reportError("--eval-ema chooses the weights to evaluate; --dataset " +
                dataset +
                " evaluates nothing (its samples are all "
                "training samples)");
    return false;
  }
  if ((evalEma || !saveEma.empty()) && !sig.ema) {
    reportError(llvm::Twine(evalEma ? "--eval-ema" : "--save-ema") + ": @" +
                sig.name +
                " keeps no moving average of its weights (give the step "
                "ema_decay)");
    return false;
  }
  settings.saveGradients = saveGradients;
  settings.loadParams = loadParams;
  settings.paramsLayout = paramsLayout;
  settings.orderFile = orderFile;
  settings.rank = collectives::rank();
  settings.ranks = collectives::size();
  settings.checkReplicas = checkReplicas;
  settings.target = resolvedTarget;
  settings.arenaUpdate = useArenaUpdate(step, resolvedTarget);
  settings.computeCapability = computeCapability;
  settings.resumeDir = resumeDir;
  settings.checkpointDir = !checkpointDir.empty() ? checkpointDir : resumeDir;
  settings.checkpointEvery = checkpointEvery;
  settings.memoryPlan = std::move(plan);
  // A schedule of the step's own N at every step is no schedule.
  if (choices.rampSchedule &&
      choices.rampSchedule->isConstantAt(sig.accumSteps))
    choices.rampSchedule.reset();
  settings.accumSchedule = std::move(choices.rampSchedule);
  settings.memoryBudgetBytes = memoryBudgetBytes;
  if (cudaGraph) {
    const char *trace = std::getenv("GACC_CUDA_TRACE");
    const char *conflict =
        resolvedTarget != "cuda"
            ? "the CPU (--target auto found no CUDA device)"
        : settings.resumable()
            ? "checkpoints, --resume or --accum-schedule (the step then runs "
              "in pieces)"
        : settings.ranks > 1 ? "data parallelism (the all-reduce is not "
                               "captured yet)"
        : trace && *trace && llvm::StringRef(trace) != "0"
            ? "GACC_CUDA_TRACE (it waits after every launch)"
            : nullptr;
    if (conflict) {
      reportError(llvm::Twine("--cuda-graph: not with ") + conflict);
      return false;
    }
    settings.cudaGraph = true;
  }
  if (!pauseAfterMicroBatch.empty()) {
    auto [stepText, kText] = llvm::StringRef(pauseAfterMicroBatch).split(':');
    stepText.getAsInteger(10, settings.pauseStep);
    kText.getAsInteger(10, settings.pauseMicroBatch);
  }
  return true;
}

/// False, after an error, when the command line set an option --help does
/// not list: one that LLVM's or MLIR's libraries register (--threads,
/// --time-passes), which cl::HideUnrelatedOptions hides but still parses.
static bool checkOnlyOwnOptions() {
  for (auto &[name, option] : cl::getRegisteredOptions()) {
    // --help and --version (LLVM's generic options) exit while parsing.
    if (!option->getNumOccurrences() ||
        llvm::is_contained(option->Categories, &cat))
      continue;
    reportError("--" + name.str() +
                " is not a gacc-run option (it belongs to a library gacc-run "
                "links; --help lists gacc-run's own" +
                (name == "threads" ? ", and --cpu-threads sets the CPU step's "
                                     "threads)"
                                   : ")"));
    return false;
  }
  return true;
}

/// Everything gacc-run does; returns the exit status.
static int run(int argc, char **argv) {
  cl::HideUnrelatedOptions(cat);
  cl::AddExtraVersionPrinter(::gacc::printVersion);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "gacc-run: compile a gacc training step and train it with gradient "
          "accumulation on the CPU or a CUDA device, over the ranks of an MPI "
          "job when launched by mpirun, or emit its PTX, cubin or LLVM IR\n\n"
          "  gacc-run MODEL.mlir [--epochs E] [--micro-batch M] "
          "[--accum-steps N] ...\n"
          "  gacc-run MODEL.mlir --emit ptx|cubin|llvm -o FILE\n",
          &llvm::errs()))
    return kExitBadInput;
  if (!checkOnlyOwnOptions() || !checkFlagValues() || !checkPathsNotEmpty() ||
      !checkOutputs() || !checkFlagScopes() || !checkCheckpointFlags() ||
      !checkTargetFlags())
    return kExitBadInput;
  if (writesStandardOutput())
    logToStandardError();
  std::string resolvedTarget;
  int computeCapability;
  if (!resolveTarget(resolvedTarget, computeCapability))
    return kExitBadInput;
  bool distributed;
  if (int status = startDataParallelism(distributed))
    return status;
  // With checkpoints (--checkpoint-dir, or --resume's directory), SIGTERM
  // and SIGINT stop the run at the first micro-batch boundary, also when
  // they come while it compiles.
  if (!checkpointDir.empty() || !resumeDir.empty())
    installStopSignalHandlers();
  mlir::gacc::configureCUDAToolkit();
  DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // One line per diagnostic: no dump of the operation after the message.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  RankDiagnostics rankDiagnostics(sourceMgr, context);
  OwningOpRef<ModuleOp> model = parseModel(inputFile, sourceMgr, context);
  if (!model)
    return kExitBadInput;
  TrainStepOp step = findStep(*model, inputFile);
  if (!step)
    return kExitBadInput;
  ModelChoices choices;
  if (!applyModelFlags(*model, step, distributed, choices))
    return kExitBadInput;
  std::optional<MemoryPlan> plan;
  if (emitKind.empty()) {
    bool arena = useArenaUpdate(step, resolvedTarget);
    MemoryPlanRequest request;
    request.budget = memoryBudgetBytes;
    request.print = memoryPlanFlag;
    request.svgPath = memoryPlanSvg;
    request.recomputeGiven = recompute.getNumOccurrences() > 0;
    request.stepArena = !noStepArena;
    request.toBuffers =
        toBuffersOptions(resolvedTarget, choices.deferWindowBytes);
    if (int status =
            planMemory(*model, step, resolvedTarget,
                       {unroll, arena, choices.resumable}, request, plan))
      return status;
  }

  if (!emitKind.empty())
    return collectives::rank() == 0
               ? emit(*model, emitKind, outFile, chip, unroll, !noBlas,
                      choices.deferWindowBytes, fp32Storage)
               : 0;

  FailureOr<StepSignature> sig = getStepSignature(step);
  if (failed(sig))
    return kExitBadInput;
  RunSettings settings;
  if (!makeSettings(step, *sig, resolvedTarget, computeCapability,
                    std::move(choices), std::move(plan), settings))
    return kExitBadInput;
  if (checkEquiv) {
    if (!(tolerance > 0) || std::isinf(tolerance)) {
      reportError("--tolerance must be positive and finite");
      return kExitBadInput;
    }
    return checkEquivalence(*model, step, *sig, settings, tolerance);
  }
  return train(*model, step, *sig, settings);
}

/// Memory that cannot be allocated: one line, exit status 2 (the whole job
/// under mpirun).
static void reportOutOfMemory(uint64_t bytes, AllocationSite site) {
  // A limit of the address space is a likelier cause than the machine.
  std::string cause = site == AllocationSite::DeviceStepBuffer
                          ? "out of memory"
                          : hostOutOfMemoryCause();
  if (site == AllocationSite::HostTensor)
    reportError(llvm::formatv("cannot allocate {0:F2} GB of host memory for "
                              "the parameters, their state or the data: {1}",
                              bytes / 1e9, cause));
  else
    reportError(llvm::formatv(
        "the compiled step cannot allocate {0:F2} GB of {1} memory for its "
        "buffers (the step arena or one buffer; their sizes grow with the "
        "micro-batch): {2}; lower --micro-batch",
        bytes / 1e9,
        site == AllocationSite::DeviceStepBuffer ? "device" : "host", cause));
  if (collectives::size() > 1)
    collectives::abortJob(kExitBadInput);
  std::_Exit(kExitBadInput);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  setAllocationFailureHandler(reportOutOfMemory);
  int status = run(argc, argv);
  // In a data-parallel job a failing rank ends every rank (MPI_Abort), so
  // no rank waits forever in a collective for it.
  if (status != 0 && collectives::size() > 1) {
    llvm::outs().flush();
    llvm::errs().flush();
    collectives::abortJob(status);
  }
  collectives::finalize();
  return status;
}
