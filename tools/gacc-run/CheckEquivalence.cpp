//===- CheckEquivalence.cpp - gacc-run --check-equivalence ----------------===//
//
// One optimizer step as given (N × m) and with N = 1 holding the whole
// effective batch, from the same parameters on the same samples: the
// normalized gradients, updated parameters and running statistics
// compared, and a difference that batch statistics make by design
// explained.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/OutputPaths.h"
#include "tools/gacc-run/StepRuntime.h"

#include "passes/analysis/MemoryPlan.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;
using ::gacc::abi::kCount;
using ::gacc::abi::kObjective;
using ::gacc::abi::kSkipped;

namespace {
/// Whether every element of `t` is finite.
bool allFinite(const HostTensor &t) {
  for (int64_t i = 0, e = t.numElements(); i < e; ++i)
    if (!std::isfinite(t.f32()[i]))
      return false;
  return true;
}

/// Whether either tensor holds a value that is not finite: their
/// difference is then infinity (NaN would compare as no difference).
bool anyNonFinite(const HostTensor &a, const HostTensor &b) {
  return !allFinite(a) || !allFinite(b);
}

/// max |a − b| over the elements (infinity where either is not finite).
double absoluteDifference(const HostTensor &a, const HostTensor &b) {
  if (anyNonFinite(a, b))
    return std::numeric_limits<double>::infinity();
  double diff = 0;
  for (int64_t i = 0, e = b.numElements(); i < e; ++i)
    diff = std::max(diff, std::fabs(double(a.f32()[i]) - b.f32()[i]));
  return diff;
}

/// max |x| over the elements of `t`.
double largestMagnitude(const HostTensor &t) {
  double largest = 0;
  for (int64_t i = 0, e = t.numElements(); i < e; ++i)
    largest = std::max(largest, std::fabs(double(t.f32()[i])));
  return largest;
}

/// max |a − b| / max |b| over the elements of two same-shaped tensors
/// (infinity where either is not finite).
double relativeDifference(const HostTensor &a, const HostTensor &b) {
  double diff = absoluteDifference(a, b);
  if (std::isinf(diff))
    return diff;
  double scale = largestMagnitude(b);
  return scale > 0 ? diff / scale : diff;
}

/// The gradients' difference: per tensor max |a − b| / max |b|, except for
/// a tensor whose reference gradient is at most 2^-16 of the largest
/// gradient element of the step (`largest`): f32 sums of terms of the
/// step's size round at about 2^-24 of them, so such a gradient is mostly
/// rounding noise relative to itself (a bias that a normalization cancels:
/// a conv bias before a group norm of one channel per group, 0 up to
/// rounding) and is measured against `largest` instead.
/// Sets `floored` where it measured against `largest`.
double gradientDifference(const HostTensor &a, const HostTensor &b,
                          double largest, bool &floored) {
  floored = !(largestMagnitude(b) > std::ldexp(largest, -16)) && largest > 0 &&
            std::isfinite(largest);
  return floored ? absoluteDifference(a, b) / largest
                 : relativeDifference(a, b);
}

/// How one optimizer step's update follows from its gradient: the
/// optimizer, the learning rate the step used and the clipping
/// coefficient it applied (1 without clipping).
struct FirstStep {
  OptimizerAttrInterface optimizer;
  double lr = 0, clip = 1;
};

/// max |a − b| / max |b| of updated parameters, leaving out the elements
/// whose update the gradients do not determine to `tolerance`: where the
/// reference gradient `g`, known to within `margin` (the two runs' largest
/// gradient difference), could move the update by more than tolerance ·
/// max |b| (OptimizerAttrInterface::getFirstStepSensitivity: an adaptive
/// optimizer's lr·g/(|g| + eps) near g = 0, a sign that may flip). Counts
/// those that differ in `skipped`, the elements compared in `compared`.
double relativeDifferenceWhereDetermined(const HostTensor &a,
                                         const HostTensor &b,
                                         const HostTensor &g, double margin,
                                         const FirstStep &step,
                                         double tolerance, int64_t &skipped,
                                         int64_t &compared) {
  if (anyNonFinite(a, b))
    return std::numeric_limits<double>::infinity();
  double scale = 0;
  for (int64_t i = 0, e = b.numElements(); i < e; ++i)
    scale = std::max(scale, std::fabs(double(b.f32()[i])));
  double diff = 0;
  for (int64_t i = 0, e = b.numElements(); i < e; ++i) {
    double moves = step.lr * step.optimizer.getFirstStepSensitivity(
                                 step.clip * g.f32()[i], step.clip * margin);
    if (moves > tolerance * scale) {
      skipped += a.f32()[i] != b.f32()[i];
      continue;
    }
    ++compared;
    diff = std::max(diff, std::fabs(double(a.f32()[i]) - b.f32()[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

/// Why an accumulated step with batch statistics differs from the large
/// batch, op by op, with the largest relative difference of each op's
/// running statistics (`statDiffs`, by name).
void explainBatchStatistics(ArrayRef<BatchStatisticsOpInterface> ops,
                            const llvm::StringMap<double> &statDiffs, int64_t m,
                            int64_t eff) {
  logStream() << "check-equivalence: DIFFERENT BY DESIGN: "
              << (ops.size() == 1
                      ? "an op normalizes"
                      : llvm::Twine(ops.size()).str() + " ops normalize")
              << " each micro-batch of " << m
              << " samples by that micro-batch's own statistics, where one "
                 "batch of "
              << eff << " normalizes by the statistics of all " << eff
              << "; no accumulation in one pass can normalize by statistics "
                 "of samples it has not yet seen:\n";
  for (BatchStatisticsOpInterface op : ops) {
    bool perWindow =
        op.getDeclaredBatchStatistics() == BatchStatistics::per_window;
    double diff = 0;
    for (FlatSymbolRefAttr name : op.getRunningStatistics())
      diff = std::max(diff, statDiffs.lookup(name.getValue()));
    logStream() << "  '" << op->getName() << "' at "
                << describeLocation(op->getLoc()) << " (batch_statistics "
                << (perWindow ? "per_window" : "per_micro_batch")
                << "): its running statistics "
                << (perWindow ? "are the window's"
                              : "move once per micro-batch (per_window "
                                "makes them the window's)")
                << llvm::format("; they differ by %.3e\n", diff);
  }
  logStream() << "  A model without batch statistics (group_norm, "
                 "layer_norm) is exact.\n";
}

} // namespace

int gaccrt::checkEquivalence(ModuleOp model, TrainStepOp step,
                             const StepSignature &sig,
                             const RunSettings &settings, double tolerance) {
  std::unique_ptr<DataSource> source = sourceForStep(sig, settings);
  if (!source)
    return kExitBadInput;
  // The reference: the same effective batch as one micro-batch (N = 1).
  int64_t m = sig.microBatch, eff = sig.effectiveBatch;
  OwningOpRef<ModuleOp> large(model.clone());
  TrainStepOp largeStep = *large->getOps<TrainStepOp>().begin();
  if (failed(largeStep.setSchedule(1, eff, eff)) || failed(verify(*large)))
    return kExitBadInput;
  FailureOr<StepSignature> largeSig = getStepSignature(largeStep);
  if (failed(largeSig))
    return kExitBadInput;

  std::vector<int64_t> order;
  if (!settings.orderFile.empty()) {
    auto o = readOrderFile(settings.orderFile, source->numTrain());
    if (!o) {
      reportError(llvm::toString(o.takeError()));
      return kExitBadInput;
    }
    order = std::move(*o);
  } else {
    order = shuffledOrder(source->numTrain(), settings.seed, 0);
  }
  int64_t end = std::min<int64_t>(eff, order.size());
  // As training does (Trainer::checkSingleSampleMicroBatches): a last
  // micro-batch of one sample has no variance for such statistics.
  if (sig.endsWithSingleSample(end)) {
    reportError(llvm::formatv(
        "the window's {0} samples end with a micro-batch of 1 sample, and "
        "{1} keeps statistics of one value per sample, which one sample has "
        "no variance for; give a micro-batch size that leaves no single "
        "sample",
        end, sig.oneValuePerSampleStatistics));
    return kExitBadInput;
  }
  if (end <= m)
    logStream() << "check-equivalence: warning: the window holds " << end
                << " samples, at most one micro-batch of " << m
                << ": the accumulation across micro-batches is not "
                   "exercised\n";

  StepState states[2];
  const StepSignature *sigs[2] = {&sig, &*largeSig};
  ModuleOp modules[2] = {model, *large};
  float results[2][::gacc::abi::kMaxStepResults] = {};
  for (int k = 0; k < 2; ++k) {
    if (llvm::Error e = initialParameters(*sigs[k], settings, states[k].params,
                                          states[k].statistics)) {
      reportError(llvm::toString(std::move(e)));
      return kExitBadInput;
    }
    if (llvm::Error e = bindStepState(*sigs[k], settings, states[k])) {
      reportError(llvm::toString(std::move(e)));
      return kExitBadInput;
    }
    // The step as one function (its own update), whatever --arena-update.
    RunSettings own = settings;
    own.arenaUpdate = false;
    auto jit = compileStep(modules[k], *sigs[k], own);
    if (!jit)
      return reportCompileFailure(jit.takeError());
    fillWindow(*source, *sigs[k], order, 0, end, states[k].windows);
    if (llvm::Error e = (*jit)->call(
            sigs[k]->name, states[k].args,
            llvm::MutableArrayRef<float>(results[k], sigs[k]->numResults()))) {
      reportError(llvm::toString(std::move(e)));
      return 1;
    }
  }
  // A window whose scaled gradients were not finite updates nothing (as
  // training skips it): there is no step to compare.
  bool skipped[2] = {sig.lossScaling && results[0][kSkipped] != 0.0f,
                     sig.lossScaling && results[1][kSkipped] != 0.0f};
  if (skipped[0] || skipped[1]) {
    logStream() << llvm::format(
        "check-equivalence: NOT COMPARED: the gradients at loss scale %g "
        "were not finite in %s, whose update was skipped (as training skips "
        "the window and backs the scale off); give #gacc.loss_scaling a "
        "smaller init_scale\n",
        settings.initialLossScale,
        skipped[0] && skipped[1] ? "both runs"
        : skipped[0]             ? "the accumulated run"
                                 : "the run of one micro-batch");
    return 1;
  }
  // Gradients: the accumulated sums divided by each run's count (and the
  // loss scale they were computed at).
  float scale = sig.lossScaling ? settings.initialLossScale : 1.0f;
  double gradDiff = 0, paramDiff = 0;
  std::vector<HostTensor> referenceGrads(sig.numParams);
  std::vector<double> gradMargins(sig.numParams, -1.0);
  std::vector<std::array<HostTensor, 2>> grads(sig.numTrainable);
  double largestGrad = 0;
  // The parameters whose gradient is measured against largestGrad.
  std::vector<std::string> flooredGrads;
  for (unsigned t = 0; t < sig.numTrainable; ++t) {
    for (int k = 0; k < 2; ++k) {
      HostTensor &g = grads[t][k];
      g = states[k].accs[t];
      for (int64_t e = 0; e < g.numElements(); ++e)
        g.f32()[e] /= std::max(results[k][kCount], 1.0f) * scale;
    }
    largestGrad = std::max(largestGrad, largestMagnitude(grads[t][1]));
  }
  for (unsigned t = 0; t < sig.numTrainable; ++t) {
    auto &[g0, g1] = grads[t];
    unsigned i = sig.trainable[t];
    bool floored;
    gradDiff =
        std::max(gradDiff, gradientDifference(g0, g1, largestGrad, floored));
    if (floored)
      flooredGrads.push_back(sig.paramNames[i]);
    gradMargins[i] = absoluteDifference(g0, g1);
    referenceGrads[i] = std::move(g1);
  }
  // Updated parameters where the gradients fix the update (every element
  // of a frozen parameter). The reference's learning rate and clipping
  // (torch.nn.utils.clip_grad_norm_'s coefficient, max_norm/(norm + 1e-6)).
  FirstStep first{cast<OptimizerAttrInterface>(step.getOptimizer()),
                  results[1][::gacc::abi::kLearningRate], 1.0};
  if (std::optional<APFloat> maxNorm = step.getMaxGradNorm())
    first.clip = std::min(1.0, maxNorm->convertToDouble() /
                                   (results[1][::gacc::abi::kGradNorm] + 1e-6));
  int64_t undetermined = 0, compared = 0;
  for (unsigned i = 0; i < sig.numParams; ++i) {
    if (gradMargins[i] < 0) {
      paramDiff = std::max(paramDiff, relativeDifference(states[0].params[i],
                                                         states[1].params[i]));
      compared += states[1].params[i].numElements();
      continue;
    }
    paramDiff =
        std::max(paramDiff, relativeDifferenceWhereDetermined(
                                states[0].params[i], states[1].params[i],
                                referenceGrads[i], gradMargins[i], first,
                                tolerance, undetermined, compared));
  }
  double statDiff = 0;
  llvm::StringMap<double> statDiffs;
  for (unsigned q = 0; q < sig.numStatistics; ++q) {
    double diff =
        relativeDifference(states[0].statistics[q], states[1].statistics[q]);
    statDiffs[sig.statisticNames[q]] = diff;
    statDiff = std::max(statDiff, diff);
  }
  bool finite = std::isfinite(results[0][kObjective]) &&
                std::isfinite(results[1][kObjective]) &&
                std::isfinite(gradDiff) && std::isfinite(paramDiff) &&
                std::isfinite(statDiff);
  bool ok = finite && gradDiff <= tolerance && paramDiff <= tolerance &&
            statDiff <= tolerance && results[0][kCount] == results[1][kCount];
  int64_t paramElements = 0;
  for (const HostTensor &p : states[1].params)
    paramElements += p.numElements();
  // A difference over a few compared elements says little: said with it.
  std::string paramText =
      !compared
          ? std::string(undetermined ? "not compared (every element left out, "
                                       "below)"
                                     : "not compared")
      : undetermined ? llvm::formatv("{0:e3} over {1} of {2} elements",
                                     paramDiff, compared, paramElements)
                           .str()
                     : llvm::formatv("{0:e3}", paramDiff).str();
  logStream() << llvm::format(
      "check-equivalence: @%s, %lld samples: micro-batch %lld × %lld "
      "accumulation steps against one micro-batch of %lld\n"
      "  count %g vs %g, loss %.7g vs %.7g\n"
      "  max relative difference: gradients %.3e, updated parameters %s "
      "(tolerance %g)\n",
      sig.name.c_str(), (long long)end, (long long)m, (long long)sig.accumSteps,
      (long long)eff, results[0][kCount], results[1][kCount],
      results[0][kObjective], results[1][kObjective], gradDiff,
      paramText.c_str(), tolerance);
  if (!flooredGrads.empty())
    logStream() << "  gradients measured against the step's largest "
                   "gradient element (each at most 2^-16 of it, where f32 "
                   "rounding dominates): "
                << llvm::join(flooredGrads, ", ") << "\n";
  if (undetermined)
    logStream() << "  updated parameters left out: " << undetermined
                << " elements whose update the two runs' gradient "
                   "difference could move by more than the tolerance "
                   "through the optimizer's first step (SGD: lr times that "
                   "difference; Adam, AdamW: lr·g/(|g| + eps) near g = 0; "
                   "Lion: a sign that may flip)\n";
  if (sig.numStatistics)
    logStream() << llvm::format("  running statistics: %.3e\n", statDiff);
  if (ok) {
    logStream() << "check-equivalence: EQUIVALENT\n";
    return 0;
  }
  // NaN or infinity in either run: no difference means anything.
  if (!finite) {
    logStream() << "check-equivalence: DIFFERENT: a loss, gradient, "
                   "parameter or running statistic is not finite (NaN or "
                   "infinity) in one run or both, so nothing can be "
                   "compared; make the model finite on these samples first\n";
    return 1;
  }
  // Batch statistics make the accumulated step differ by design: it is
  // not the large batch (exit status 1), and the report says why.
  if (SmallVector<BatchStatisticsOpInterface> ops =
          step.getBatchStatisticsOps();
      !ops.empty()) {
    explainBatchStatistics(ops, statDiffs, m, eff);
    return 1;
  }
  logStream() << "check-equivalence: DIFFERENT\n";
  // bf16 and fp16 round every stored value: two orders of summation
  // differ by more than fp32's tolerance without any fault.
  if (step.getPrecision().value_or(Precision::fp32) != Precision::fp32)
    logStream() << "  note: @" << sig.name
                << " computes in bf16/fp16, which rounds each stored value "
                   "(bf16 to 3.9e-3 relative, fp16 to 4.9e-4): N "
                   "micro-batches and one batch round differently without "
                   "any fault; compare such a step with --tolerance 1e-2\n";
  return 1;
}
