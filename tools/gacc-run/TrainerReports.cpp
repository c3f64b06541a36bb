//===- TrainerReports.cpp - gacc-run's training reports -------------------===//
//
// What the Trainer (Trainer.h) tells the user: the header before the first
// step, a progress line and --metrics row every --log-every steps, the
// divergence report, the memory measured against the plan, and the
// summary with the run's outputs at the end.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/MemoryBudget.h"
#include "tools/gacc-run/Trainer.h"

#include "runtime/Blas.h"
#include "runtime/Collectives.h"
#include "runtime/CpuThreads.h"
#include "runtime/CudnnAttention.h"
#include "runtime/Safetensors.h"
#include "runtime/StepArena.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sys/resource.h>

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

namespace {

/// The process's peak resident memory so far, in MB (10^6 bytes, as the
/// metrics key peak_rss_mb and the summary line say).
double peakRssMb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024.0 / 1e6; // Linux reports KiB
}

/// "NaN", "inf" or "-inf", whatever the platform's printf makes of them.
std::string nonFiniteName(double v) {
  if (std::isnan(v))
    return "NaN";
  return v > 0 ? "inf" : "-inf";
}

/// An f32 result for the metrics file, as the double of the shortest
/// decimal that reads back as it (lr 0.05, not its f32 value
/// 0.05000000074505806; jsonLine writes that double as 0.05): JSON has no
/// NaN or infinity, so a non-finite value (a skipped fp16 window) is
/// written as null.
llvm::json::Value jsonNumber(float v) {
  if (!std::isfinite(v))
    return nullptr;
  char text[32];
  char *end = std::to_chars(text, text + sizeof text, v).ptr;
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

/// `v` in printf's `format` (one double), or its name when it is not
/// finite (a skipped fp16 window's loss: "NaN", not "-nan").
std::string formatNumber(double v, const char *format) {
  if (!std::isfinite(v))
    return nonFiniteName(v);
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

/// A step time for the progress and summary lines: `decimals` (1 or 2)
/// decimals, or three significant digits below 1 ms (a tiny step is not
/// "0.0 ms/step").
std::string stepTime(double ms, int decimals) {
  return formatNumber(ms, ms < 1.0        ? "%.3g ms/step"
                          : decimals == 1 ? "%.1f ms/step"
                                          : "%.2f ms/step");
}

/// Writes `v` as llvm::json does (keys sorted), except that a
/// floating-point number is the shortest decimal that reads back as it
/// (0.05, where llvm::json writes 17 digits: 0.050000000000000003), and a
/// non-finite one is null.
void writeShortest(llvm::json::OStream &j, const llvm::json::Value &v) {
  if (const llvm::json::Object *object = v.getAsObject())
    return j.object([&] {
      for (const auto *element : llvm::json::sortedElements(*object)) {
        j.attributeBegin(element->first);
        writeShortest(j, element->second);
        j.attributeEnd();
      }
    });
  if (const llvm::json::Array *array = v.getAsArray())
    return j.array([&] {
      for (const llvm::json::Value &element : *array)
        writeShortest(j, element);
    });
  std::optional<double> number = v.getAsNumber();
  if (!number || v.getAsInteger() || v.getAsUINT64())
    return j.value(v);
  if (!std::isfinite(*number))
    return j.value(nullptr);
  char text[32];
  char *end = std::to_chars(text, text + sizeof text, *number).ptr;
  j.rawValue(
      [&](llvm::raw_ostream &os) { os << llvm::StringRef(text, end - text); });
}

/// One metrics row: `obj` as a line of JSON (writeShortest).
std::string jsonLine(llvm::json::Object obj) {
  std::string line;
  llvm::raw_string_ostream os(line);
  llvm::json::OStream j(os);
  writeShortest(j, llvm::json::Value(std::move(obj)));
  return line;
}

} // namespace

void Trainer::printHeader(double compileMs) {
  out << "gacc-run: " << data->describe() << "\n";
  const char *most = ramp ? "at most " : "";
  out << "gacc-run: @" << sig.name << ": " << sig.numParams
      << (sig.numParams == 1 ? " parameter" : " parameters");
  if (sig.numTrainable != sig.numParams)
    out << " (" << sig.numParams - sig.numTrainable << " frozen)";
  out << ", micro-batch " << sig.microBatch << " × " << most << sig.accumSteps
      << " accumulation steps";
  if (settings.ranks > 1)
    out << " × " << settings.ranks << " ranks (data-parallel)";
  out << " = effective batch " << most << eff << ", " << windows.size()
      << (windows.size() == 1 ? " optimizer step " : " optimizer steps ");
  if (ramp)
    out << "in epoch " << pos.epoch + 1;
  else
    out << "per epoch";
  out << ", lr " << llvm::format("%g", settings.lr) << ", compiled in "
      << llvm::format("%.0f", compileMs) << " ms\n";
  if (settings.target == "cpu")
    out << "gacc-run: cpu: " << settings.threads
        << (settings.threads == 1 ? " thread" : " threads")
        << (settings.ranks > 1 ? " per rank" : "")
        << (settings.blas ? ", OpenBLAS " + gaccrt::blasKernels() + " kernels"
                          : std::string(", GEMMs as loops (--no-blas)"))
        << "\n";
  if (ramp)
    out << "gacc-run: accumulation schedule: " << schedule.describe()
        << " (micro-batch " << sig.microBatch << "; each window normalized "
        << "by its own count)\n";
  // Frozen parameters are never trained: without a file they stay what
  // their initializers drew (LoRA's base weights come from a checkpoint).
  if (settings.loadParams.empty() && settings.resumeDir.empty() &&
      sig.numTrainable < sig.numParams) {
    unsigned frozen = sig.numParams - sig.numTrainable;
    out << "gacc-run: note: " << frozen
        << (frozen == 1 ? " frozen parameter keeps what its initializer drew"
                        : " frozen parameters keep what their initializers "
                          "drew")
        << " (no --load-params):";
    unsigned shown = 0;
    for (unsigned i = 0; i < sig.numParams && shown < 3; ++i)
      if (!llvm::is_contained(sig.trainable, i)) {
        out << " @" << sig.paramNames[i];
        ++shown;
      }
    if (frozen > shown)
      out << " ...";
    out << "\n";
  }
  if (!notLoaded.empty()) {
    out << "gacc-run: --load-params: " << notLoaded.size()
        << " trainable parameters not in the file start from their "
        << "initializers:";
    for (const std::string &name : notLoaded)
      out << " " << name;
    out << "\n";
  }
}

/// On the cuda target the parameters live in managed memory (or the
/// arenas) and the running statistics in managed memory during training:
/// copied back before evaluation, replica checks and saving.

/// A progress line and a metrics row, every --log-every steps, at the end
/// of each epoch and when `force`d (a step that stops the run).
int Trainer::logStep(int64_t epoch, int64_t w, const StepOutcome &o,
                     bool force) {
  if (!force && pos.globalStep % settings.logEvery != 0 &&
      w != windows.size() - 1 && pos.globalStep != settings.maxSteps)
    return 0;
  // The epoch's samples done (windows differ in size under a ramp, and an
  // epoch's last may be short).
  out << llvm::format("step %5lld  epoch %lld  %5.1f%%  ",
                      (long long)pos.globalStep, (long long)epoch + 1,
                      100.0 * windows.starts[w + 1] / windows.starts.back())
      << "loss " << formatNumber(o.objective, "%.4f")
      << llvm::format("  lr %.4g  ", o.lr) << "grad norm "
      << formatNumber(o.gradNorm, "%.4g") << "  " << stepTime(o.ms, 1);
  if (ramp)
    out << llvm::formatv("  batch {0} (N = {1}{2})", o.samples, o.accumSteps,
                         o.samples <
                                 o.accumSteps * sig.microBatch * settings.ranks
                             ? ", the epoch's short last window, padded"
                             : "");
  if (sig.lossScaling)
    out << llvm::format("  loss scale %g%s", o.lossScale,
                        o.skipped ? "  (skipped: non-finite)" : "");
  if (settings.ranks > 1)
    out << "  collectives " << o.collectives;
  out << "\n";
  out.flush();
  llvm::json::Object row{
      {"step", pos.globalStep},          {"epoch", epoch + 1},
      {"loss", jsonNumber(o.objective)}, {"count", o.count},
      {"effective_batch", o.samples},    {"accum_steps", o.accumSteps},
      {"lr", jsonNumber(o.lr)},          {"grad_norm", jsonNumber(o.gradNorm)},
      {"collectives", o.collectives}};
  if (sig.lossScaling) {
    row["loss_scale"] = jsonNumber(o.lossScale);
    row["skipped"] = o.skipped;
    row["skipped_steps"] = pos.skippedSteps;
  }
  return writeMetric("step", std::move(row));
}

/// One --metrics row with its `kind`, written and flushed now (rank 0).
int Trainer::writeMetric(llvm::StringRef kind, llvm::json::Object row) {
  if (!metrics.isOpen())
    return 0;
  row["kind"] = kind;
  // In order with the progress lines when both go to standard output.
  out.flush();
  if (llvm::Error e = metrics.writeLine(jsonLine(std::move(row))))
    return reportFailure(
        llvm::createStringError(llvm::inconvertibleErrorCode(),
                                "--metrics " + llvm::toString(std::move(e))));
  return 0;
}

/// A loss or gradient that is not finite (without loss scaling to skip
/// it) stops the run, whose parameters it made NaN or infinite; its row is
/// logged first, so the metrics show how it got there.
int Trainer::reportDivergence(int64_t epoch, int64_t w, const StepOutcome &o) {
  if (int status = logStep(epoch, w, o, /*force=*/true))
    return status;
  // A finite loss with a gradient that is not: a derivative that is
  // infinite where the forward is finite (the square root, or a power
  // below 1, of 0), or a product of 0 and infinity in the backward.
  if (std::isfinite(o.objective)) {
    reportError(llvm::formatv(
        "the gradient's norm is {0} at optimizer step {1}, whose loss {2} is "
        "finite: its update made the parameters non-finite. A derivative "
        "is infinite where the body's values are finite (sqrt, rsqrt or a "
        "power below 1, at 0); check the body for such an op on values "
        "that can be zero",
        nonFiniteName(o.gradNorm), pos.globalStep, o.objective));
    return 1;
  }
  // The first window's loss comes from the initial parameters, so a
  // learning rate cannot have caused it.
  if (pos.globalStep == 1)
    reportError("loss is " + nonFiniteName(o.objective) +
                " at optimizer step 1, before any update (not the learning "
                "rate): check the body for a log or division of values that "
                "can be zero, the initializers and the data");
  else
    reportError("loss became " + nonFiniteName(o.objective) +
                " at optimizer step " + llvm::Twine(pos.globalStep) +
                "; lower --lr");
  return 1;
}

void Trainer::reportMemory(llvm::json::Object &summary) {
  if (!settings.memoryPlan)
    return;
  // What the step holds at most: on the CPU its persistent buffers, the
  // step arena and the buffers outside it.
  uint64_t planned = settings.stepArena || onDevice
                         ? settings.memoryPlan->heldPeakBytes
                         : settings.memoryPlan->peakBytes();
  summary["planned_peak_bytes"] = int64_t(planned);
  // Without a step there is nothing to measure: the process's own memory
  // is not the step's.
  if (stepMs.empty()) {
    out << "memory: planned peak " << formatBytes(planned)
        << ", not measured: this process ran no optimizer step\n";
    return;
  }
  // The device's arena peak with the scalar pool and cuBLAS workspace; on
  // the CPU the resident growth of the step's state, the step arena's
  // resident pages and the GEMM workspace (both allocated by the first
  // step, so inside the base) and the largest growth while training.
  uint64_t measured;
  if (onDevice) {
    measured = cuda::managedPeakBytes();
  } else {
    uint64_t peak = std::max(trainingPeakBytes, rss::peakBytes());
    measured = measuredStateBytes + stepArenaResidentBytes() +
               widenedFactorBytes() +
               (peak > trainingBaseBytes ? peak - trainingBaseBytes : 0);
  }
  out << "memory: planned peak " << formatBytes(planned) << ", measured "
      << formatBytes(measured)
      << (onDevice ? " (device arena, scalar pool and cuBLAS workspace)"
                   : " (resident growth of the step's state and of "
                     "training)")
      << llvm::format(", %+.1f%%\n", 100.0 *
                                         (double(measured) - double(planned)) /
                                         std::max<double>(planned, 1));
  summary["measured_peak_bytes"] = int64_t(measured);
  // The budget bounds the plan, a static count: the allocator's and the
  // libraries' own buffers can take the run past it.
  if (settings.memoryBudgetBytes && measured > *settings.memoryBudgetBytes)
    out << "memory: note: the measured peak is "
        << formatBytes(measured - *settings.memoryBudgetBytes)
        << " above --memory-budget's "
        << formatBytes(*settings.memoryBudgetBytes)
        << " (the plan that fits it counts the step's buffers, not the "
           "allocator's or the libraries' own); give a smaller budget for "
           "margin\n";
}

/// Writes `named` to `path`, the file of `flag`: 0, or the exit status
/// after reporting the failure.
static int saveNamed(llvm::StringRef flag, const std::string &path,
                     const NamedTensors &named) {
  if (llvm::Error e = saveSafetensors(path, named))
    return reportFailure(
        llvm::createStringError(llvm::inconvertibleErrorCode(),
                                flag + " " + llvm::toString(std::move(e))));
  return 0;
}

/// The saved parameters, moving averages and gradients, on rank 0 (the
/// gradients are gathered on every rank, a collective, before rank 0 alone
/// may fail writing).
int Trainer::saveOutputs() {
  // The gradient of this run's last step (none after a resume that ran no
  // step: the accumulators then hold no applied gradient), on every rank
  // (a collective) before rank 0 alone may fail writing.
  bool writeGradients =
      !settings.saveGradients.empty() && !stepMs.empty() && !last.skipped;
  std::vector<HostTensor> gradients;
  if (writeGradients)
    gradients =
        appliedGradients(last.count, sig.lossScaling ? last.lossScale : 1.0f);
  syncParamsToHost();
  if (!lead)
    return 0;
  if (!settings.saveParams.empty()) {
    NamedTensors named;
    for (unsigned i = 0; i < sig.numParams; ++i)
      named.push_back({sig.paramNames[i], TensorBytes(st.params[i])});
    // Running statistics beside the weights, as torch's state_dict.
    for (unsigned q = 0; q < sig.numStatistics; ++q)
      named.push_back({sig.statisticNames[q], TensorBytes(st.statistics[q])});
    if (int status = saveNamed("--save-params", settings.saveParams, named))
      return status;
  }
  if (!settings.saveEma.empty()) {
    if (emaWeights.empty())
      for (const HostTensor &p : st.params)
        emaWeights.emplace_back(p.dtype, p.shape);
    copyMovingAverages();
    NamedTensors named;
    for (unsigned i = 0; i < sig.numParams; ++i)
      named.push_back({sig.paramNames[i], TensorBytes(emaWeights[i])});
    if (int status = saveNamed("--save-ema", settings.saveEma, named))
      return status;
  }
  if (!settings.saveGradients.empty() && !stepMs.empty() && last.skipped) {
    reportError("--save-gradients: the last window's gradients were not "
                "finite and loss scaling skipped its update; " +
                settings.saveGradients + " is not written");
    return 1;
  }
  if (writeGradients) {
    NamedTensors named;
    for (auto [k, i] : llvm::enumerate(sig.trainable))
      named.push_back({sig.paramNames[i], TensorBytes(gradients[k])});
    if (int status =
            saveNamed("--save-gradients", settings.saveGradients, named))
      return status;
  }
  return 0;
}

/// The run's files (saveOutputs), then the summary line and row: a run
/// whose files cannot be written does not report itself as done.
int Trainer::finish() {
  if (int status = saveOutputs())
    return status;
  double median = 0, total = 0;
  if (!stepMs.empty()) {
    std::vector<double> sorted = stepMs;
    std::sort(sorted.begin(), sorted.end());
    median = sorted[sorted.size() / 2];
    for (double v : stepMs)
      total += v;
  }
  // This process's samples over this process's step time (a resumed run
  // counts from where it resumed).
  double samplesPerS =
      total > 0 ? (pos.samplesSeen - samplesAtStart) / (total / 1000.0) : 0;
  out << llvm::format("summary: %lld optimizer step%s, ",
                      (long long)pos.globalStep,
                      pos.globalStep == 1 ? "" : "s");
  // A resumed run's count includes the interrupted run's steps; its
  // median and rate are this process's.
  int64_t ranHere = int64_t(stepMs.size());
  if (!stepMs.empty() && ranHere != pos.globalStep)
    out << ranHere << " run by this process, ";
  // Loss scaling's skipped windows updated nothing: said where the count
  // of steps would hide them.
  if (pos.skippedSteps)
    out << (pos.skippedSteps == pos.globalStep ? "all " : "")
        << pos.skippedSteps << " skipped (non-finite gradients: no update), ";
  // A resumed run that had nothing left to do has no step time.
  if (stepMs.empty())
    out << "none run by this process";
  else
    out << "median " << stepTime(median, 2)
        << llvm::format(", %.0f samples/s", samplesPerS);
  out << llvm::format(", peak RSS %.1f MB", peakRssMb());
  if (settings.ranks > 1)
    out << " (rank 0 of " << settings.ranks << ")";
  if (onDevice)
    out << llvm::format(", peak device memory %.1f MB",
                        cuda::managedPeakBytes() / 1e6);
  for (const Metric &mt : lastEval)
    out << llvm::format(", %s %.4f", mt.key.c_str(), mt.value);
  out << "\n";
  if (onDevice && lead) {
    if (std::string gemms = cuda::cublasLtSummary(); !gemms.empty())
      out << "cublaslt: " << gemms << "\n";
    if (std::string attention = cudnn::summary(); !attention.empty())
      out << "cudnn: " << attention << "\n";
    out.flush();
    cuda::printProfile(logsToStandardError() ? stderr : stdout);
  }
  llvm::json::Object summary{
      {"optimizer_steps", pos.globalStep},
      {"steps_this_process", ranHere},
      // A run without a step measured none.
      {"median_step_ms", stepMs.empty() ? llvm::json::Value(nullptr) : median},
      {"samples_per_s",
       stepMs.empty() ? llvm::json::Value(nullptr) : samplesPerS},
      {"peak_rss_mb", peakRssMb()},
      {"micro_batch", sig.microBatch},
      {"accum_steps", sig.accumSteps},
      {"ranks", settings.ranks},
      {"target", settings.target},
      {"effective_batch", eff}};
  if (ramp)
    summary["accum_schedule"] = schedule.str();
  if (settings.target == "cpu")
    summary["cpu_threads"] = settings.threads;
  if (onDevice)
    summary["peak_device_mb"] = cuda::managedPeakBytes() / 1e6;
  reportMemory(summary);
  if (sig.lossScaling) {
    summary["loss_scale"] = jsonNumber(pos.lossScale);
    summary["skipped_steps"] = pos.skippedSteps;
  }
  for (const Metric &mt : lastEval)
    summary[mt.key] = mt.value;
  return writeMetric("summary", std::move(summary));
}
