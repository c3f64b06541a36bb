//===- gacc-run.cpp - compile and train a gacc model ----------------------===//
//
// gacc-run MODEL.mlir: parses and verifies the model, applies the command
// line's overrides of its schedule, then either trains it on the CPU through
// the JIT (Training.cpp) or writes the compiled artifact (Emit.cpp).
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/Options.h"

#include "passes/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;
namespace cl = llvm::cl;

void gaccrt::reportError(const llvm::Twine &msg) {
  llvm::errs() << "gacc-run: error: " << msg << "\n";
}

static cl::OptionCategory cat("gacc-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::cat(cat));
static cl::opt<std::string>
    dataDir("data", cl::desc("Fashion-MNIST directory with the gzip IDX files"),
            cl::init("/usr/share/datasets/fashion-mnist"), cl::cat(cat));
static cl::opt<int64_t> microBatch(
    "micro-batch",
    cl::desc("Micro-batch size m (overrides the model's micro_batch; the "
             "effective batch is kept unless --accum-steps is also given)"),
    cl::init(0), cl::cat(cat));
static cl::opt<int64_t> accumSteps(
    "accum-steps",
    cl::desc("Accumulation steps N per optimizer step (overrides the "
             "model's accum_steps)"),
    cl::init(0), cl::cat(cat));
static cl::opt<int64_t> epochs("epochs", cl::desc("Epochs to train"),
                               cl::init(1), cl::cat(cat));
static cl::opt<int64_t>
    maxSteps("max-steps",
             cl::desc("Stop after this many optimizer steps (-1: no limit)"),
             cl::init(-1), cl::cat(cat));
static cl::opt<double> lr("lr",
                          cl::desc("Learning rate (overrides the optimizer's)"),
                          cl::init(-1.0), cl::cat(cat));
static cl::opt<int64_t> seed(
    "seed",
    cl::desc("Seed of initialization and data order (overrides the model's)"),
    cl::init(-1), cl::cat(cat));
static cl::opt<int64_t> logEvery(
    "log-every", cl::desc("Print a progress line every K optimizer steps"),
    cl::init(20), cl::cat(cat));
static cl::opt<std::string>
    metrics("metrics",
            cl::desc("Write metrics as JSON lines (one per logged step, one "
                     "per epoch, a final summary)"),
            cl::cat(cat));
static cl::opt<std::string>
    saveParams("save-params",
               cl::desc("Write the trained parameters (safetensors)"),
               cl::cat(cat));
static cl::opt<std::string>
    loadParams("load-params",
               cl::desc("Start from these parameters (safetensors) instead "
                        "of the initializers"),
               cl::cat(cat));
static cl::opt<std::string> orderFile(
    "order-file",
    cl::desc("Training-sample indices, one per line, in the order they are "
             "consumed each epoch (default: a Fisher-Yates shuffle seeded "
             "by --seed)"),
    cl::cat(cat));
static cl::opt<bool> unroll("unroll",
                            cl::desc("Fully unroll the micro-batch loop"),
                            cl::init(false), cl::cat(cat));
static cl::opt<bool>
    noBlas("no-blas",
           cl::desc("Compile matrix products to loops instead of OpenBLAS"),
           cl::init(false), cl::cat(cat));
static cl::opt<std::string>
    emitKind("emit",
             cl::desc("Write the compiled artifact instead of training: ptx "
                      "or cubin (GPU kernels), llvm (CPU LLVM IR)"),
             cl::cat(cat));
static cl::opt<std::string> outFile("o", cl::desc("Output file for --emit"),
                                    cl::value_desc("file"), cl::cat(cat));
static cl::opt<std::string> chip("chip",
                                 cl::desc("GPU architecture for --emit "
                                          "ptx/cubin"),
                                 cl::init("sm_90"), cl::cat(cat));

/// Applies --micro-batch / --accum-steps to the step. Returns false after
/// reporting an error.
static bool applySchedule(TrainStepOp step) {
  int64_t n = step.getAccumSteps(), m = step.getMicroBatch();
  int64_t eff = step.getEffectiveBatch().value_or(n * m);
  if (microBatch < 0 || accumSteps < 0) {
    reportError("--micro-batch and --accum-steps must be positive");
    return false;
  }
  if (microBatch && accumSteps) {
    m = microBatch;
    n = accumSteps;
  } else if (microBatch) {
    if (eff % microBatch != 0) {
      reportError("--micro-batch " + llvm::Twine(int64_t(microBatch)) +
                  " does not divide the effective batch " + llvm::Twine(eff) +
                  " declared by @" + step.getSymName() +
                  " (give --accum-steps too to change the effective batch)");
      return false;
    }
    m = microBatch;
    n = eff / m;
  } else if (accumSteps) {
    if (eff % accumSteps != 0) {
      reportError("--accum-steps " + llvm::Twine(int64_t(accumSteps)) +
                  " does not divide the effective batch " + llvm::Twine(eff) +
                  " declared by @" + step.getSymName());
      return false;
    }
    n = accumSteps;
    m = eff / n;
  }
  step.setAccumSteps(n);
  if (step.getEffectiveBatch())
    step.setEffectiveBatch(n * m);
  if (m != step.getMicroBatch() && failed(step.setMicroBatchSize(m)))
    return false;
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(cat);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "gacc-run: compile a gacc training step and train it with gradient "
          "accumulation on the CPU, or emit its PTX, cubin or LLVM IR\n\n"
          "  gacc-run MODEL.mlir [--epochs E] [--micro-batch M] "
          "[--accum-steps N] ...\n"
          "  gacc-run MODEL.mlir --emit ptx|cubin|llvm -o FILE\n",
          &llvm::errs()))
    return kExitBadInput;
  if (inputFile.empty()) {
    reportError("no model given (usage: gacc-run MODEL.mlir [options]; see "
                "--help)");
    return kExitBadInput;
  }
  if (epochs <= 0 || logEvery <= 0) {
    reportError("--epochs and --log-every must be positive");
    return kExitBadInput;
  }

  mlir::gacc::configureCUDAToolkit();
  DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file) {
    reportError(errorMessage);
    return kExitBadInput;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> model = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!model)
    return kExitBadInput; // the diagnostic handler printed the location

  SmallVector<TrainStepOp> steps(model->getOps<TrainStepOp>());
  if (steps.size() != 1) {
    reportError(inputFile + " must hold exactly one gacc.train_step, found " +
                llvm::Twine(steps.size()));
    return kExitBadInput;
  }
  TrainStepOp step = steps.front();
  if (step.isDifferentiated()) {
    reportError("@" + step.getSymName() +
                " is already differentiated; gacc-run compiles model-level IR");
    return kExitBadInput;
  }
  if (!applySchedule(step) || failed(verify(*model)))
    return kExitBadInput;

  if (!emitKind.empty())
    return emit(*model, emitKind, outFile, chip, unroll);

  FailureOr<StepSignature> sig = getStepSignature(step);
  if (failed(sig))
    return kExitBadInput;
  RunSettings settings;
  settings.dataDir = dataDir;
  settings.epochs = epochs;
  settings.maxSteps = maxSteps;
  settings.logEvery = logEvery;
  settings.lr = lr >= 0 ? double(lr)
                        : cast<SGDAttr>(step.getOptimizer()).getLr().convertToDouble();
  settings.seed = seed >= 0 ? uint64_t(seed) : uint64_t(step.getSeed());
  settings.unroll = unroll;
  settings.blas = !noBlas;
  settings.metricsPath = metrics;
  settings.saveParams = saveParams;
  settings.loadParams = loadParams;
  settings.orderFile = orderFile;
  return train(*model, step, *sig, settings);
}
