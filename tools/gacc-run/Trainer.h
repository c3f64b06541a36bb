//===- Trainer.h - gacc-run's training driver -------------------*- C++ -*-===//
//
// The Trainer feeds the compiled step one window per optimizer step (this
// rank's slice of the global effective batch), evaluates after each epoch,
// reports progress and metrics, and with a checkpoint directory runs the
// step one micro-batch at a time so that it can stop, and resume, at any
// micro-batch boundary. Training.cpp holds the loop, TrainerReports.cpp
// its reports, TrainerCheckpoints.cpp what checkpoints add.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_TRAINER_H
#define GACC_TOOLS_GACCRUN_TRAINER_H

#include "tools/gacc-run/Checkpoint.h"
#include "tools/gacc-run/GraphStep.h"
#include "tools/gacc-run/OutputPaths.h"
#include "tools/gacc-run/StepRuntime.h"

#include "runtime/OutputFile.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <vector>

namespace gaccrt {

/// One fact of a data-parallel job every rank must share: what it is in
/// the error ("a different --max-steps") and its fingerprint on this rank.
struct RankFact {
  std::string what;
  uint64_t hash;
};

/// What one optimizer step returned.
struct StepOutcome {
  float objective = 0, count = 0, lr = 0, gradNorm = 0, lossScale = 1;
  bool skipped = false;
  int64_t collectives = 0;
  /// The micro-batches this rank accumulated and the samples of the
  /// global window (its effective batch; fewer in an epoch's short last
  /// window).
  int64_t accumSteps = 0, samples = 0;
  double ms = 0;
};

class Trainer {
public:
  Trainer(mlir::ModuleOp model, mlir::gacc::TrainStepOp step,
          const mlir::gacc::StepSignature &sig, const RunSettings &settings)
      : model(model), step(step), sig(sig), settings(settings),
        onDevice(settings.target == "cuda"), lead(settings.rank == 0),
        out(lead ? logStream() : llvm::nulls()),
        schedule(settings.accumSchedule.value_or(
            AccumulationSchedule::constant(sig.accumSteps))),
        ramp(settings.accumSchedule.has_value()) {}

  /// Trains; returns the exit status.
  int run();

private:
  /// runWindow's status when a stop request ended the run with a
  /// checkpoint (the process exits 0).
  static constexpr int kStopped = -1;

  // Training.cpp: set-up, the loop, one window.
  int prepare();
  int openOutputs();
  int planEpoch();
  /// The windows of epoch pos.epoch, which pos.window windows into
  /// optimizer step pos.globalStep has reached. Returns the exit status
  /// (an epoch without a window under --drop-last is bad input).
  int planWindows();
  /// Refuses (one error, kExitBadInput) a window of this epoch, up to
  /// --max-steps, with a micro-batch of one real sample where the step
  /// keeps statistics of one value per sample.
  int checkSingleSampleMicroBatches(int64_t firstStep);
  /// Reports that epoch `epoch`, starting at optimizer step `firstStep`
  /// (0-based), holds no window; returns the exit status.
  int reportEmptyEpoch(int64_t epoch, int64_t firstStep);
  int prepareDevice();
  int compile();
  int bindArenas();
  /// The facts every rank of a data-parallel job must share (model,
  /// flags, data, checkpoint directories, starting parameters).
  std::vector<RankFact> rankFacts();
  /// Whether every rank runs the same job; false after rank 0 named the
  /// first difference.
  bool ranksAgree();
  const std::vector<int64_t> &orderOf(int64_t epoch);
  int runWindow(const std::vector<int64_t> &order, int64_t w,
                StepOutcome &o);
  int applyArenaUpdate(int64_t stepIndex, StepOutcome &o);
  int afterStep(const StepOutcome &o);
  int checkReplicas();
  void advanceLossScale(const StepOutcome &o);
  int evaluate(int64_t epoch);
  void syncParamsToHost();
  /// The gradient the last optimizer step applied (the accumulators summed
  /// over the ranks, divided by the window's `count` and `lossScale`), in
  /// the order of sig.trainable. A collective in a data-parallel job.
  std::vector<HostTensor> appliedGradients(float count, float lossScale);

  // TrainerReports.cpp: the header, progress, metrics and the summary.
  void printHeader(double compileMs);
  /// The planned peak beside the measured one (summary line and row).
  void reportMemory(llvm::json::Object &summary);
  int logStep(int64_t epoch, int64_t w, const StepOutcome &o,
              bool force = false);
  int writeMetric(llvm::StringRef kind, llvm::json::Object row);
  int reportDivergence(int64_t epoch, int64_t w, const StepOutcome &o);
  int saveOutputs();
  int finish();

  // TrainerCheckpoints.cpp: resuming, stopping, checkpoints.
  bool checkpointing() const { return !settings.checkpointDir.empty(); }
  /// Restores the checkpoint of --resume into the host state (before
  /// compilation binds it) and installs the stop signals' handlers.
  int resume();
  int openCheckpoints();
  int printResumed();
  llvm::Expected<int> runMicroBatches(CpuJit &jit,
                                      const std::vector<JitArg> &args,
                                      int64_t accumSteps,
                                      llvm::MutableArrayRef<float> results);
  int stopRequested();
  void pauseIfAsked(int64_t microBatchesDone);
  int atWindowBoundary();
  int stopWithCheckpoint(int signal);
  int writeCheckpoint();
  void syncStateToHost();

  mlir::ModuleOp model;
  mlir::gacc::TrainStepOp step;
  const mlir::gacc::StepSignature &sig;
  const RunSettings &settings;
  bool onDevice, lead;
  llvm::raw_ostream &out;
  AccumulationSchedule schedule;
  /// --accum-schedule changes N (gacc-run drops a schedule of the step's
  /// own N): progress lines and the header say so.
  bool ramp;

  std::unique_ptr<DataSource> data;
  StepState st;
  std::vector<int64_t> fixedOrder;
  std::unique_ptr<CpuJit> hostJit, deviceJit;
  StepArenas arenas;
  std::vector<std::unique_ptr<void, void (*)(void *)>> hostBlocks;
  DeviceMirror mirror;
  /// --cuda-graph: the step's scalars, results and captured graph.
  GraphStep graph;
  std::unique_ptr<Predictor> predictor;
  /// --eval-ema: the moving averages copied out of the state for
  /// evaluation, and the predictor reading them.
  std::vector<HostTensor> emaWeights;
  /// What --load-params did not hold and kept its initializer.
  std::vector<std::string> notLoaded;
  std::unique_ptr<Predictor> emaPredictor;
  /// Copies each parameter's moving average (its last state) into
  /// `emaWeights`, after syncing the state to the host.
  void copyMovingAverages();

  /// The declared per-rank and global effective batch (the most a window
  /// holds), the samples of an epoch, and the current epoch's windows.
  int64_t perRank = 0, eff = 0, perEpoch = 0;
  EpochWindows windows;
  /// The next micro-batch and the counters, with the dynamic loss scaling
  /// state (GradScaler's), kept by the host. The optimizer's step count
  /// advances only on applied updates.
  TrainingPosition pos;
  /// The current epoch's sample order.
  std::vector<int64_t> epochOrder;
  /// The epoch epochOrder is the order of (-1: none yet).
  int64_t epochOrderEpoch = -1;
  StepOutcome last;
  int64_t samplesAtStart = 0;
  /// The measured memory, set beside the plan (CPU): the resident growth
  /// of allocating the step's state, the RSS after the first optimizer
  /// step (the base of training), the largest RSS while training
  /// (evaluation excluded).
  uint64_t measuredStateBytes = 0, trainingBaseBytes = 0,
           trainingPeakBytes = 0;
  /// --metrics, one row written as it happens.
  OutputStream metrics;
  std::vector<double> stepMs;
  std::vector<Metric> lastEval;

  /// Checkpoints: this run's identity, the writer, the resumed epoch's
  /// order, the optimizer step of the last checkpoint at a window boundary.
  RunIdentity identity;
  std::unique_ptr<CheckpointWriter> checkpoints;
  std::vector<int64_t> resumedOrder;
  int64_t resumedEpoch = -1, lastCheckpointStep = -1;
  /// The generation of the checkpoint this run continues in its own
  /// directory (0: none).
  uint64_t resumedGeneration = 0;
};

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_TRAINER_H
