//===- MemoryPlanning.cpp - gacc-run's memory plan, before the run --------===//
//
// --memory-budget's choice of the micro-batch (with and without activation
// recomputation), the plan printed and drawn, and the checks of the
// planned peak against this machine's memory or the device's.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/MemoryPlanning.h"
#include "tools/gacc-run/MemoryBudget.h"
#include "tools/gacc-run/Options.h"
#include "tools/gacc-run/OutputPaths.h"

#include "passes/Passes.h"
#include "runtime/Collectives.h"
#include "runtime/CudaDriver.h"
#include "runtime/HostMemory.h"
#include "runtime/OutputFile.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

/// A note where --memory-budget chose micro-batch `chosen` instead of the
/// model's `declared` and an op normalizes by each micro-batch's own
/// statistics: the step then computes something else than the model's.
static void noteBatchStatistics(TrainStepOp step, int64_t declared,
                                int64_t chosen) {
  SmallVector<BatchStatisticsOpInterface> ops = step.getBatchStatisticsOps();
  if (ops.empty())
    return;
  logStream().flush(); // after the line that says what was chosen
  llvm::errs() << "gacc-run: note: '" << ops.front()->getName() << "' at "
               << describeLocation(ops.front()->getLoc());
  if (ops.size() > 1)
    llvm::errs() << " (and " << ops.size() - 1 << " more)";
  llvm::errs()
      << " normalizes by each micro-batch's own statistics: with "
         "micro-batch "
      << chosen << " instead of the model's " << declared
      << " it computes something else (without --memory-budget it runs the "
         "model's)\n";
}

/// How --memory-budget's choice used activation recomputation.
enum class CheapRecompute {
  Unused,
  LargerMicroBatch, // a larger micro-batch fits with it than without
  OnlyFit,          // nothing fits without it
};

/// --memory-budget's choice: the fewest micro-batches that fit
/// (chooseMicroBatch) with the model's recomputation; without --recompute
/// also with the cheap policy, which is kept (the model marked, `cheap`
/// set) when it lets a larger micro-batch fit. Error: a plan failed, or
/// nothing fits (naming the smaller of the two minimums).
static llvm::Expected<MemoryPlan>
chooseWithinBudget(ModuleOp model, TrainStepOp step, int64_t eff,
                   uint64_t budget, StringRef target,
                   const GAccExpandAccumulationPassOptions &expand,
                   const MemoryPlanRequest &request, CheapRecompute &cheap) {
  // Memory comes first: no weight gradient deferred to the window's end.
  StepToBuffersOptions toBuffers = request.toBuffers;
  toBuffers.deferWindowBytes = 0;
  auto fits = [&](const MemoryPlan &p) { return p.heldPeakBytes <= budget; };
  auto chosen = chooseMicroBatch(model, step.getSymName(), eff, budget, target,
                                 expand, toBuffers);
  if (!chosen)
    return chosen;
  OwningOpRef<ModuleOp> marked(model.clone());
  TrainStepOp markedStep = *marked->getOps<TrainStepOp>().begin();
  if (request.recomputeGiven || markCheapRecomputation(markedStep) == 0) {
    if (!fits(*chosen))
      return budgetTooSmall(budget, *chosen);
    return chosen;
  }
  auto withRecompute = chooseMicroBatch(*marked, step.getSymName(), eff, budget,
                                        target, expand, toBuffers);
  if (!withRecompute) {
    // The plain plan stands (as --recompute marked would): the choice where
    // it fits, else the minimum the error names.
    llvm::consumeError(withRecompute.takeError());
    if (!fits(*chosen))
      return budgetTooSmall(budget, *chosen);
    return chosen;
  }
  if (!fits(*withRecompute)) {
    if (fits(*chosen))
      return chosen;
    bool recomputedLess = withRecompute->heldPeakBytes < chosen->heldPeakBytes;
    return budgetTooSmall(budget, recomputedLess ? *withRecompute : *chosen,
                          recomputedLess);
  }
  if (fits(*chosen) && chosen->microBatch >= withRecompute->microBatch)
    return chosen;
  cheap = fits(*chosen) ? CheapRecompute::LargerMicroBatch
                        : CheapRecompute::OnlyFit;
  markCheapRecomputation(step);
  return withRecompute;
}

int gaccrt::planMemory(ModuleOp model, TrainStepOp step, StringRef target,
                       const GAccExpandAccumulationPassOptions &expand,
                       const MemoryPlanRequest &request,
                       std::optional<MemoryPlan> &plan) {
  bool lead = collectives::launcherRank() == 0;
  bool onDevice = target == "cuda";
  // On the CPU, a step that cannot fit this machine stops here, not in
  // the system's out-of-memory killer (the cuda target checks its plan
  // against the device below).
  // A step whose state alone takes more than half of that memory is
  // planned, and refused below when its plan does not fit.
  uint64_t hostMemory = onDevice ? 0 : hostMemoryBytes();
  uint64_t persistent = 0;
  if (hostMemory) {
    FailureOr<StepSignature> sig = getStepSignature(step);
    if (failed(sig))
      return kExitBadInput;
    llvm::Error e = checkLargestTensor(step, hostMemory);
    if (!e)
      e = checkPersistentState(*sig, hostMemory);
    if (e) {
      reportError(llvm::toString(std::move(e)));
      return kExitBadInput;
    }
    persistent = persistentState(*sig).total();
  }
  if (const std::optional<uint64_t> &budget = request.budget) {
    int64_t eff = step.getEffectiveBatch()
                      ? step.getEffectiveBatchAttr().getInt()
                      : int64_t(step.getAccumSteps() * step.getMicroBatch());
    // A budget beyond this machine's memory is that memory.
    uint64_t usable = hostMemory ? std::min(*budget, hostMemory) : *budget;
    CheapRecompute cheap = CheapRecompute::Unused;
    auto chosen = chooseWithinBudget(model, step, eff, usable, target, expand,
                                     request, cheap);
    if (!chosen) {
      reportError(llvm::toString(chosen.takeError()));
      return kExitBadInput;
    }
    int64_t declared = step.getMicroBatch();
    PassManager pm(model.getContext());
    GAccSetAccumulationSchedulePassOptions options;
    options.microBatch = uint64_t(chosen->microBatch);
    options.ragged = true;
    pm.addPass(createGAccSetAccumulationSchedulePass(options));
    if (failed(pm.run(model)) || failed(verify(model)))
      return kExitBadInput;
    int64_t n = chosen->accumSteps, m = chosen->microBatch;
    if (lead) {
      logStream() << "gacc-run: --memory-budget " << formatBytes(*budget);
      if (usable < *budget)
        logStream() << " (capped at the " << formatBytes(usable)
                    << " of memory this process may use)";
      logStream() << ": micro-batch " << m << " × " << n
                  << " accumulation steps (effective batch " << eff
                  << (step.getDataParallel() ? " per rank" : "");
      if (int64_t last = eff - (n - 1) * m; n * m != eff)
        logStream() << ", last micro-batch ragged: " << last
                    << (last == 1 ? " sample" : " samples");
      logStream() << "), planned peak " << formatBytes(chosen->heldPeakBytes);
      if (cheap != CheapRecompute::Unused)
        logStream() << ", with activation recomputation (--recompute cheap: "
                    << (cheap == CheapRecompute::OnlyFit
                            ? "nothing fits without it"
                            : "a larger micro-batch fits than without")
                    << ")";
      logStream() << "\n";
      if (m != declared)
        noteBatchStatistics(step, declared, m);
    }
    plan = std::move(*chosen);
  }
  bool wanted = request.print || !request.svgPath.empty() || onDevice ||
                persistent > hostMemory / 2;
  if (!plan && wanted) {
    FailureOr<MemoryPlan> p = planTrainingStepMemory(
        model, step.getSymName(), 0, target, expand, request.toBuffers);
    if (failed(p))
      return kExitBadInput;
    plan = std::move(*p);
  }
  if (!plan)
    return 0;
  // Without the step arena each transient buffer is its own allocation:
  // what the step holds is the plan's peak.
  if (!onDevice && !request.stepArena) {
    plan->arenaBytes = 0;
    plan->heldPeakBytes = plan->peakBytes();
  }
  uint64_t plannedPeak = std::max(plan->peakBytes(), plan->heldPeakBytes);
  if (hostMemory && !request.budget && plannedPeak > hostMemory) {
    reportError(llvm::formatv(
        "the planned peak of micro-batch {0}, {1} ({2} of it parameters, "
        "gradient accumulators, optimizer state, running statistics and "
        "window inputs), is more "
        "than the {3} of memory this process may use (the machine's, or its "
        "container's limit): the step cannot run; lower --micro-batch or "
        "give --memory-budget to choose one that fits",
        plan->microBatch, formatBytes(plannedPeak), formatBytes(persistent),
        formatBytes(hostMemory)));
    return kExitBadInput;
  }
  if (onDevice && !request.budget) {
    uint64_t arena = cuda::stepMemoryBytes();
    if (plan->peakBytes() > arena) {
      reportError(llvm::formatv(
          "the planned peak of micro-batch {0}, {1}, does not fit the {2} "
          "gacc reserves on the device (its free memory, {3}, less a {4} "
          "margin); give --memory-budget to choose a micro-batch that fits",
          plan->microBatch, formatBytes(plan->peakBytes()), formatBytes(arena),
          formatBytes(cuda::deviceInfo().freeMemoryBytes),
          formatBytes(cuda::kDeviceMemoryMargin)));
      return kExitBadInput;
    }
  }
  if (lead && (request.print || request.budget))
    printMemoryPlan(*plan, logStream());
  if (lead && !request.svgPath.empty()) {
    std::string svg;
    llvm::raw_string_ostream os(svg);
    drawMemoryPlanSvg(*plan, os);
    if (llvm::Error e = writeOutputFile(request.svgPath, svg)) {
      reportError("--memory-plan-svg " + llvm::toString(std::move(e)));
      return 1;
    }
  }
  return 0;
}
