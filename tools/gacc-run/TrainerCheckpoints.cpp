//===- TrainerCheckpoints.cpp - stopping and resuming a training run ------===//
//
// What --checkpoint-dir and --resume add to the Trainer (Trainer.h): the
// state restored from a checkpoint before compilation, the window run one
// micro-batch at a time through the step's resumable form, stop requests
// (SIGTERM, SIGINT) agreed by every rank at each micro-batch boundary,
// periodic checkpoints at window boundaries, and the state copied back from
// the arenas or the device for a checkpoint.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/OutputPaths.h"
#include "tools/gacc-run/StopSignals.h"
#include "tools/gacc-run/Trainer.h"

#include "runtime/Collectives.h"
#include "runtime/CudaRuntime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

int Trainer::resume() {
  if (!checkpointing())
    return 0;
  // SIGTERM and SIGINT stop the run at the next micro-batch boundary, with
  // a checkpoint (their handlers are installed at start-up, run()).
  identity = identifyRun(model, sig, settings, *data, fixedOrder);
  if (!settings.resumeDir.empty()) {
    auto loaded = readCheckpoint(settings.resumeDir, settings.rank, identity,
                                 sig, st);
    if (!loaded)
      return reportFailure(loaded.takeError(), kExitBadInput);
    const TrainingPosition &p = loaded->position;
    pos = p;
    if (int status = planWindows())
      return status;
    if (int64_t(loaded->order.size()) != perEpoch ||
        (p.epoch < settings.epochs && p.window >= windows.size()) ||
        p.microBatch >= schedule.accumStepsAt(p.globalStep)) {
      reportError("--resume " + settings.resumeDir +
                  ": corrupt: its sample order or position does not fit "
                  "this run's epoch");
      return kExitBadInput;
    }
    resumedOrder = std::move(loaded->order);
    resumedEpoch = p.epoch;
    if (p.microBatch == 0)
      lastCheckpointStep = p.globalStep;
    if (lead && loaded->lr != settings.lr)
      llvm::errs() << llvm::formatv(
          "gacc-run: warning: --resume: the checkpoint was trained with lr "
          "{0}, this run continues with lr {1}\n",
          llvm::format("%g", loaded->lr), llvm::format("%g", settings.lr));
    if (lead && !loaded->arithmetic.empty() &&
        loaded->arithmetic != identity.arithmetic)
      llvm::errs() << "gacc-run: warning: --resume: the checkpoint was "
                      "trained with "
                   << loaded->arithmetic << ", this run continues with "
                   << identity.arithmetic
                   << ": it rounds differently, so the result is not bit "
                      "for bit an uninterrupted run's\n";
    // Checkpoints continue in the same directory with the next generation.
    if (samePath(settings.resumeDir, settings.checkpointDir))
      resumedGeneration = loaded->generation;
  }
  return 0;
}

/// Opens (and locks) the checkpoint directory: a collective under a
/// data-parallel run, so after the ranks agreed that every one of them
/// writes checkpoints there.
int Trainer::openCheckpoints() {
  if (!checkpointing())
    return 0;
  checkpoints = std::make_unique<CheckpointWriter>(
      settings.checkpointDir,
      samePath(settings.checkpointDir, settings.resumeDir) ? "--resume"
                                                           : "--checkpoint-dir",
      settings.rank, settings.ranks);
  if (llvm::Error e = checkpoints->open(resumedGeneration))
    return reportFailure(std::move(e), kExitBadInput);
  return 0;
}

/// The line saying where a resumed run continues; an error when nothing
/// is left to run and --save-gradients asks for the gradient of a step.
int Trainer::printResumed() {
  if (settings.resumeDir.empty())
    return 0;
  out << "gacc-run: resumed from " << settings.resumeDir << " after "
      << pos.globalStep << " optimizer steps";
  if (pos.microBatch > 0)
    out << " and micro-batch " << pos.microBatch << " of "
        << schedule.accumStepsAt(pos.globalStep)
        << " of the next";
  out << " (epoch " << pos.epoch + 1 << ", window " << pos.window + 1 << ")\n";
  // Said, so that a run that trains nothing does not look like one that
  // trained.
  std::string done;
  if (settings.maxSteps >= 0 && pos.globalStep >= settings.maxSteps)
    done = llvm::formatv("the checkpoint is at optimizer step {0}, "
                         "--max-steps {1}",
                         pos.globalStep, settings.maxSteps);
  else if (pos.epoch >= settings.epochs)
    done = llvm::formatv("the checkpoint is past the last epoch of "
                         "--epochs {0}",
                         settings.epochs);
  if (!done.empty() && !settings.saveGradients.empty()) {
    reportError("--save-gradients " + settings.saveGradients + ": " + done +
                ": no optimizer step runs, so no gradient is applied");
    return kExitBadInput;
  }
  if (!done.empty())
    out << "gacc-run: note: " << done << ": no optimizer step runs\n";
  out.flush();
  // The appended metrics say where the run continues: rows of later steps
  // above this one are the interrupted run's, past its last checkpoint.
  llvm::SmallString<256> from(settings.resumeDir);
  llvm::sys::fs::make_absolute(from);
  return writeMetric("resumed",
                     llvm::json::Object{{"resumed_at_step", pos.globalStep},
                                        {"resumed_from", from.str()}});
}

/// The window's first `accumSteps` micro-batches through @S_accumulate from
/// pos.microBatch with the window's sums so far (one micro-batch a call
/// with checkpoints, else all in one call), then @S_update. Returns
/// the stop signal that ended it early (pos then names the next
/// micro-batch and holds the sums), or 0 after the update.
llvm::Expected<int>
Trainer::runMicroBatches(CpuJit &jit, const std::vector<JitArg> &args,
                         int64_t accumSteps,
                         llvm::MutableArrayRef<float> results) {
  std::vector<JitArg> a(args);
  a.resize(sig.numArgs() + 4, JitArg::i64(0));
  float sums[2] = {pos.windowLossSum, pos.windowCount};
  // Without checkpoints, all of them in one call.
  int64_t stride = checkpointing() ? 1 : accumSteps;
  for (int64_t k = pos.microBatch; k < accumSteps; k += stride) {
    a[sig.beginArg()] = JitArg::i64(k);
    a[sig.endArg()] = JitArg::i64(std::min(k + stride, accumSteps));
    a[sig.accumulateLossSumArg()] = JitArg::f32(sums[0]);
    a[sig.accumulateCountArg()] = JitArg::f32(sums[1]);
    if (llvm::Error e = jit.call(sig.accumulateName(), a, sums))
      return std::move(e);
    if (k + stride >= accumSteps)
      break;
    pauseIfAsked(k + 1);
    if (int signal = stopRequested()) {
      pos.microBatch = k + 1;
      pos.windowLossSum = sums[0];
      pos.windowCount = sums[1];
      return signal;
    }
  }
  pos.microBatch = 0;
  pos.windowLossSum = pos.windowCount = 0;
  a.resize(sig.numArgs());
  a.push_back(JitArg::f32(sums[0]));
  a.push_back(JitArg::f32(sums[1]));
  if (llvm::Error e = jit.call(sig.updateName(), a, results))
    return std::move(e);
  return 0;
}

/// A stop request, agreed by every rank (each calls this at the same
/// boundaries): the signal one of them received, or 0.
int Trainer::stopRequested() {
  int local = stopSignalReceived();
  if (settings.ranks == 1)
    return local;
  int agreed = 0;
  for (uint64_t s : collectives::allGather(uint64_t(local)))
    agreed = std::max(agreed, int(s));
  return agreed;
}

/// --pause-after-micro-batch STEP:K: rank 0 waits there for a stop signal.
void Trainer::pauseIfAsked(int64_t microBatchesDone) {
  if (!lead || settings.pauseStep != pos.globalStep + 1 ||
      settings.pauseMicroBatch != microBatchesDone)
    return;
  out.flush();
  llvm::errs() << llvm::formatv(
      "gacc-run: paused after micro-batch {0} of {1} of optimizer step {2} "
      "(pid {3}); waiting for SIGTERM or SIGINT\n",
      microBatchesDone, schedule.accumStepsAt(pos.globalStep), pos.globalStep + 1,
      ::getpid());
  llvm::errs().flush();
  waitForStopSignal();
}

/// Before each window: a stop request ends the run here, and every
/// --checkpoint-every optimizer steps a checkpoint is written.
int Trainer::atWindowBoundary() {
  if (!checkpointing())
    return 0;
  if (int signal = stopRequested())
    return stopWithCheckpoint(signal);
  if (settings.checkpointEvery > 0 && pos.globalStep > 0 &&
      pos.globalStep % settings.checkpointEvery == 0 &&
      pos.globalStep != lastCheckpointStep)
    return writeCheckpoint();
  return 0;
}

/// Writes the checkpoint of `pos` and says where; the run ends (exit 0).
int Trainer::stopWithCheckpoint(int signal) {
  if (int status = writeCheckpoint())
    return status;
  out << "gacc-run: stopped by " << stopSignalName(signal);
  if (pos.microBatch > 0)
    out << " after micro-batch " << pos.microBatch << " of "
        << schedule.accumStepsAt(pos.globalStep) << " of optimizer step "
        << pos.globalStep + 1;
  else
    out << " before optimizer step " << pos.globalStep + 1;
  out << "; checkpoint written to " << settings.checkpointDir
      << " (continue with --resume " << settings.checkpointDir << ")\n";
  // The outputs of a finished run: said, not silently missing.
  std::string unwritten;
  for (auto [flag, path] : {std::pair{"--save-params", &settings.saveParams},
                            {"--save-ema", &settings.saveEma},
                            {"--save-gradients", &settings.saveGradients}})
    if (!path->empty())
      unwritten +=
          (unwritten.empty() ? "" : ", ") + std::string(flag) + " " + *path;
  if (lead && !unwritten.empty())
    out << "gacc-run: note: " << unwritten
        << " not written: a stopped run writes no final outputs (the "
           "resumed run writes them)\n";
  out.flush();
  return kStopped;
}

int Trainer::writeCheckpoint() {
  syncStateToHost();
  // The order of the epoch `pos` names: at the end of the last epoch the
  // next one's, which a --resume with more epochs trains.
  const std::vector<int64_t> &order = orderOf(pos.epoch);
  if (llvm::Error e = checkpoints->write(identity, pos, sig, st, order))
    return reportFailure(std::move(e));
  if (pos.microBatch == 0)
    lastCheckpointStep = pos.globalStep;
  return 0;
}

/// Parameters, accumulators, optimizer state and running statistics into
/// the host tensors, from the arenas or the device when they live there.
void Trainer::syncStateToHost() {
  if (onDevice) {
    gacc_cuda_synchronize();
    for (unsigned q = 0; q < sig.numStatistics; ++q)
      mirror.toHost(sig.statisticArg(q));
  }
  if (settings.arenaUpdate) {
    arenas.stateToHost(st);
    return;
  }
  if (!onDevice)
    return;
  for (unsigned i = 0; i < sig.numParams; ++i)
    mirror.toHost(sig.paramArg(i));
  for (unsigned k = 0; k < sig.numTrainable; ++k) {
    mirror.toHost(sig.accArg(k));
    for (unsigned s = 0; s < sig.statePerParam; ++s)
      mirror.toHost(sig.stateArg(k, s));
  }
}
