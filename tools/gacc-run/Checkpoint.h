//===- Checkpoint.h - stopping and resuming a training run ------*- C++ -*-===//
//
// A checkpoint directory holds everything the next micro-batch of a run
// depends on: per rank, one safetensors state file (parameters, optimizer
// state, the epoch's sample order and, when the run stopped in the middle
// of a window, the accumulators and the window's loss sum and count), and
// manifest.json, written last, naming the state files with their sizes and
// checksums, the run's identity (model fingerprint, schedule, data set,
// ranks, order) and its position (epoch, window, next micro-batch,
// optimizer step count, loss-scaling state). A new checkpoint's files take
// new names; the manifest is replaced atomically once they are complete,
// then the previous files are removed, so the previous checkpoint stays
// readable until the new one is.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_CHECKPOINT_H
#define GACC_TOOLS_GACCRUN_CHECKPOINT_H

#include "tools/gacc-run/DataSources.h"
#include "tools/gacc-run/StepRuntime.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace gaccrt {

/// Where a run stands: the next micro-batch it runs and the counters the
/// next optimizer step reads.
struct TrainingPosition {
  /// The next micro-batch: micro-batch `microBatch` (0 at a window
  /// boundary) of window `window` of epoch `epoch` (all 0-based).
  int64_t epoch = 0, window = 0, microBatch = 0;
  /// Optimizer steps run (skipped fp16 windows included), updates applied
  /// (the optimizer's and the learning-rate schedule's step count), skipped
  /// windows, clean steps since the loss scale last changed, samples seen.
  int64_t globalStep = 0, optimizerSteps = 0, skippedSteps = 0,
          cleanSteps = 0, samplesSeen = 0;
  float lossScale = 1;
  /// This rank's loss sum and count over micro-batches [0, microBatch).
  float windowLossSum = 0, windowCount = 0;
};

/// What a checkpoint must agree on with the run that resumes it.
struct RunIdentity {
  std::string step;
  uint64_t model = 0; // xxh3 of the model after the schedule
  int64_t microBatch = 0, accumSteps = 0, effectiveBatch = 0, ranks = 1;
  /// --accum-schedule's canonical form (empty: N every step).
  std::string accumSchedule;
  std::string dataset;
  int64_t trainSamples = 0;
  uint64_t data = 0;  // xxh3 of every training sample
  uint64_t order = 0; // xxh3 of --order-file's indices (0 without)
  uint64_t seed = 0;
  bool dropLast = false;
  double lr = 0;
  /// How the step's arithmetic runs (stepArithmetic): a run resumed with
  /// other arithmetic continues, rounding differently.
  std::string arithmetic;
};

/// One setting that decides how the compiled step rounds: the flag that
/// sets it and its value in words ("" where it does not apply or is off).
struct ArithmeticSetting {
  const char *flag;
  std::string words;
};

/// The settings that decide how the step rounds, in the order they are
/// reported: the target, the CPU's threads, the GEMMs' library and kernel
/// set, and the flags that change the step's arithmetic (--fp32-storage,
/// --cuda-attention, --cuda-gelu-epilogue, --defer-weight-gradients). The
/// one list behind a checkpoint's arithmetic (stepArithmetic) and the
/// facts every rank of a data-parallel job must share.
std::vector<ArithmeticSetting> arithmeticSettings(const RunSettings &settings);

/// How the step's arithmetic runs, in words: arithmeticSettings' values
/// joined ("cpu, 2 threads, OpenBLAS Haswell kernels"). Two runs alike in
/// this round alike.
std::string stepArithmetic(const RunSettings &settings);

/// The identity of this run: fingerprints of `model` and of `data`'s
/// training samples (every sample, as it fills a window).
RunIdentity identifyRun(mlir::ModuleOp model,
                        const mlir::gacc::StepSignature &sig,
                        const RunSettings &settings, const DataSource &data,
                        const std::vector<int64_t> &fixedOrder);

/// xxh3 over every training sample of `data` as it fills a window of
/// `sig` (window-sized chunks in index order): what tells two data sets of
/// one size apart, for a checkpoint and for the ranks of one job.
uint64_t fingerprintTrainingData(const mlir::gacc::StepSignature &sig,
                                 const DataSource &data);

/// A checkpoint as read back for this rank.
struct LoadedCheckpoint {
  TrainingPosition position;
  std::vector<int64_t> order;
  uint64_t generation = 0;
  double lr = 0;
  /// RunIdentity::arithmetic as written ("" in older checkpoints).
  std::string arithmetic;
};

/// Writes checkpoints into one directory.
class CheckpointWriter {
public:
  /// `flag` names the directory in messages (--checkpoint-dir, or --resume
  /// for a run that continues where it resumes from).
  CheckpointWriter(std::string dir, std::string flag, int rank, int ranks)
      : dir(std::move(dir)), flag(std::move(flag)), rank(rank), ranks(ranks) {}
  /// Removes the directory open created if no checkpoint went into it (a
  /// run that stopped before its first one leaves nothing behind), and
  /// releases its lock.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter &) = delete;
  CheckpointWriter &operator=(const CheckpointWriter &) = delete;
  /// Before the run: creates the directory and locks it for this run (rank
  /// 0 holds an flock on the directory until the process ends; a
  /// collective under a data-parallel run). Errors: a directory that cannot
  /// be created or written, one another gacc-run holds, one holding a
  /// checkpoint unless this run resumes it (`resumedGeneration` > 0, the
  /// generation read from it). Then removes what a write that a crash cut
  /// short left there (removeLeftovers).
  llvm::Error open(uint64_t resumedGeneration);
  /// Writes a checkpoint of `st` at `position` (the accumulators and the
  /// window's sums when it is in the middle of a window). Collective under
  /// a data-parallel run: every rank calls it at the same position.
  llvm::Error write(const RunIdentity &identity,
                    const TrainingPosition &position,
                    const mlir::gacc::StepSignature &sig, StepState &st,
                    const std::vector<int64_t> &order);
  const std::string &directory() const { return dir; }

private:
  /// Removes this rank's state files of other generations than
  /// `generation` (none when 0) and its temporary ones, and, on rank 0,
  /// temporary manifests: what a checkpoint write killed before its
  /// manifest was replaced leaves (the manifest names none of them).
  void removeLeftovers();

  /// Creates the directory where needed and checks that it is a writable
  /// directory.
  llvm::Error checkDirectory();
  /// Rank 0's lock of the directory (an flock, held until the process
  /// ends): taken, held by another process, or not available there (a file
  /// system without locks, or a directory that cannot be opened; why in
  /// `lockProblem`).
  enum class LockResult { Locked, Held, Unsupported };
  LockResult lock();
  std::string lockProblem;

  std::string dir, flag;
  int rank, ranks;
  /// The directory, open for its lock (rank 0; -1 otherwise).
  int lockFd = -1;
  uint64_t generation = 0;
  bool createdDirectory = false, wrote = false;
};

/// Reads the checkpoint in `dir` for `rank`, checks it against `identity`
/// and restores the parameters, optimizer state and (in the middle of a
/// window) accumulators into `st`. Errors (one line each, naming the
/// directory): no checkpoint, a corrupt or truncated manifest or state
/// file, and whatever differs from this run (model, micro-batch,
/// accumulation steps, effective batch, ranks, data set, order).
llvm::Expected<LoadedCheckpoint>
readCheckpoint(const std::string &dir, int rank, const RunIdentity &identity,
               const mlir::gacc::StepSignature &sig, StepState &st);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_CHECKPOINT_H
