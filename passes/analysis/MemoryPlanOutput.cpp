//===- MemoryPlanOutput.cpp - the memory plan as a table, JSON and SVG ----===//
//
// How a MemoryPlan is shown: a table of bytes per kind at the peak, JSON
// for --metrics, and an SVG picture of the live bytes over the step's ops
// stacked by series (persistent, activations, temporaries, workspace).
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/MemoryPlan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
constexpr const char *kSeries[] = {"persistent", "activations",
                                   "temporaries", "workspace"};
constexpr const char *kSeriesColors[] = {"#4c72b0", "#dd8452", "#55a868",
                                         "#8172b3"};

/// Each kind's table name, JSON key and picture series, in MemoryKind's
/// order.
struct KindInfo {
  MemoryKind kind;
  const char *description, *key, *series;
};
constexpr KindInfo kKindInfo[kNumMemoryKinds] = {
    {MemoryKind::Parameters, "parameters", "parameters", "persistent"},
    {MemoryKind::Accumulators, "gradient accumulators", "accumulators",
     "persistent"},
    {MemoryKind::OptimizerState, "optimizer state", "optimizer_state",
     "persistent"},
    {MemoryKind::Statistics, "persistent statistics", "statistics",
     "persistent"},
    {MemoryKind::WindowInputs, "window inputs (N x m samples)",
     "window_inputs", "persistent"},
    {MemoryKind::Activations, "activations", "activations", "activations"},
    {MemoryKind::Temporaries, "temporaries", "temporaries", "temporaries"},
    {MemoryKind::Workspace, "workspace", "workspace", "workspace"}};

double mib(uint64_t bytes) { return double(bytes) / (1 << 20); }
} // namespace

StringRef mlir::gacc::describe(MemoryKind kind) {
  return kKindInfo[unsigned(kind)].description;
}
StringRef mlir::gacc::jsonKey(MemoryKind kind) {
  return kKindInfo[unsigned(kind)].key;
}
StringRef mlir::gacc::seriesOf(MemoryKind kind) {
  return kKindInfo[unsigned(kind)].series;
}

void mlir::gacc::printMemoryPlan(const MemoryPlan &plan, raw_ostream &os) {
  os << "memory plan of @" << plan.step << " on " << plan.target
     << ": micro-batch " << plan.microBatch << " × " << plan.accumSteps
     << " accumulation steps\n";
  const MemoryBytes &peak = plan.atPeak();
  os << llvm::format("  %-32s %14s %10s\n", "at the peak", "bytes", "MiB");
  for (const KindInfo &info : kKindInfo)
    os << llvm::format("  %-32s %14llu %10.2f\n", info.description,
                       (unsigned long long)peak[unsigned(info.kind)],
                       mib(peak[unsigned(info.kind)]));
  os << llvm::format("  %-32s %14llu %10.2f\n", "peak",
                     (unsigned long long)plan.peakBytes(),
                     mib(plan.peakBytes()));
  const MemoryPoint &p = plan.timeline[plan.peakPoint];
  os << "  peak at " << p.op << " in the " << p.phase;
  if (!p.location.empty())
    os << " (" << p.location << ")";
  os << "\n";
  os << llvm::format("  activations live across the forward/backward "
                     "boundary: %llu bytes (%.2f MiB)\n",
                     (unsigned long long)plan.activationsAcrossBoundary,
                     mib(plan.activationsAcrossBoundary));
  if (plan.arenaBytes) {
    uint64_t transient = plan.atPeak()[unsigned(MemoryKind::Activations)] +
                         plan.atPeak()[unsigned(MemoryKind::Temporaries)];
    os << llvm::format("  step arena (the transient buffers at compile-time "
                       "offsets): %llu bytes (%.2f MiB, %+.1f%% of the "
                       "peak's transient bytes)\n",
                       (unsigned long long)plan.arenaBytes,
                       mib(plan.arenaBytes),
                       100.0 * (double(plan.arenaBytes) - double(transient)) /
                           std::max<double>(double(transient), 1));
    os << llvm::format("  held at most (persistent, arena, other buffers): "
                       "%llu bytes (%.2f MiB)\n",
                       (unsigned long long)plan.heldPeakBytes,
                       mib(plan.heldPeakBytes));
  }
}

llvm::json::Value mlir::gacc::toJSON(const MemoryPlan &plan) {
  llvm::json::Object atPeak;
  for (const KindInfo &info : kKindInfo)
    atPeak[info.key] = int64_t(plan.atPeak()[unsigned(info.kind)]);
  const MemoryPoint &p = plan.timeline[plan.peakPoint];
  return llvm::json::Object{
      {"step", plan.step},
      {"target", plan.target},
      {"micro_batch", plan.microBatch},
      {"accum_steps", plan.accumSteps},
      {"peak_bytes", int64_t(plan.peakBytes())},
      {"peak_op", p.op},
      {"peak_phase", p.phase},
      {"peak_location", p.location},
      {"at_peak", std::move(atPeak)},
      {"activations_across_boundary",
       int64_t(plan.activationsAcrossBoundary)},
      {"arena_bytes", int64_t(plan.arenaBytes)},
      {"held_peak_bytes", int64_t(plan.heldPeakBytes)}};
}

namespace {
/// `text` with XML's special characters escaped, as XML 1.0 text: a byte
/// that is not UTF-8, or a control character XML does not allow (all below
/// U+0020 but tab, newline and carriage return), becomes U+FFFD.
std::string escapeXml(StringRef text) {
  std::string out;
  for (char c : llvm::json::fixUTF8(text)) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
        c != '\r') {
      out += "\xEF\xBF\xBD"; // U+FFFD
      continue;
    }
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}
} // namespace

void mlir::gacc::drawMemoryPlanSvg(const MemoryPlan &plan, raw_ostream &os) {
  // Stacked series per op: bytes of each series at each point.
  size_t n = plan.timeline.size();
  std::vector<std::array<double, 4>> stacks(n);
  for (size_t i = 0; i < n; ++i)
    for (const KindInfo &info : kKindInfo) {
      unsigned s = llvm::find(kSeries, StringRef(info.series)) -
                   std::begin(kSeries);
      stacks[i][s] += double(plan.timeline[i].live[unsigned(info.kind)]);
    }
  double top = std::max<double>(1.0, double(plan.peakBytes()));
  const int left = 96, right = 20, width = 900, plotTop = 70, plotH = 260;
  double plotW = width - left - right;
  auto x = [&](double i) { return left + plotW * i / std::max<size_t>(n, 1); };
  auto y = [&](double bytes) { return plotTop + plotH * (1 - bytes / top); };
  // The axis in the unit that suits the peak: KiB below 1 MiB, GiB from
  // 1 GiB.
  auto [unit, unitBytes] = top < double(1 << 20) ? std::pair{"KiB", 1024.0}
                           : top < double(1 << 30)
                               ? std::pair{"MiB", 1048576.0}
                               : std::pair{"GiB", 1073741824.0};

  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << plotTop + plotH + 80
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<title>memory plan of @" << escapeXml(plan.step) << "</title>\n";
  os << "<text x=\"" << left << "\" y=\"24\" font-size=\"15\">live bytes of @"
     << escapeXml(plan.step) << " on " << escapeXml(plan.target)
     << ", micro-batch " << plan.microBatch << " × " << plan.accumSteps
     << llvm::format(": peak %.2f %s", double(plan.peakBytes()) / unitBytes,
                     unit)
     << "</text>\n";
  // One filled polygon per series, stacked: a step per op.
  for (unsigned s = 0; s < 4; ++s) {
    std::string upper, lower;
    llvm::raw_string_ostream up(upper), lo(lower);
    for (size_t i = 0; i < n; ++i) {
      double below = 0;
      for (unsigned t = 0; t < s; ++t)
        below += stacks[i][t];
      double above = below + stacks[i][s];
      up << llvm::format("%.1f,%.1f %.1f,%.1f ", x(i), y(above), x(i + 1),
                         y(above));
      lo << llvm::format("%.1f,%.1f %.1f,%.1f ", x(i), y(below), x(i + 1),
                         y(below));
    }
    // The lower edge, written forwards, is reversed point by point so the
    // outline runs back along it and closes.
    llvm::SmallVector<StringRef> parts;
    StringRef(lower).split(parts, ' ', -1, false);
    std::string reversed;
    for (size_t k = parts.size(); k-- > 0;)
      reversed += parts[k].str() + " ";
    os << "<polygon class=\"series\" data-series=\"" << kSeries[s]
       << "\" fill=\"" << kSeriesColors[s] << "\" points=\"" << upper
       << reversed << "\"/>\n";
  }
  // Axes, the peak and the legend.
  os << llvm::format("<line x1=\"%d\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                     "stroke=\"black\"/>\n",
                     left, plotTop + plotH, left + plotW, plotTop + plotH);
  os << llvm::format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                     "stroke=\"black\"/>\n",
                     left, plotTop, left, plotTop + plotH);
  for (int t = 0; t <= 4; ++t)
    os << llvm::format("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
                       "%.3g %s</text>\n",
                       left - 6, y(top * t / 4) + 4, top * t / 4 / unitBytes,
                       unit);
  // The peak: a dashed line, labelled above the plot (on the side with
  // room), clear of the series.
  const MemoryPoint &p = plan.timeline[plan.peakPoint];
  double peakX = x(plan.peakPoint + 0.5);
  bool leftOfMiddle = peakX < left + plotW / 2;
  os << llvm::format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                     "stroke=\"red\" stroke-dasharray=\"4 3\"/>\n",
                     peakX, plotTop - 12, peakX, plotTop + plotH);
  os << llvm::format("<text x=\"%.1f\" y=\"%d\" fill=\"red\" "
                     "text-anchor=\"%s\">peak: ",
                     peakX + (leftOfMiddle ? 4 : -4), plotTop - 16,
                     leftOfMiddle ? "start" : "end")
     << escapeXml(p.op) << " in the " << p.phase << "</text>\n";
  // "one of the 8 micro-batches of 32 samples", "the micro-batch of 1
  // sample".
  std::string samples = std::to_string(plan.microBatch) +
                        (plan.microBatch == 1 ? " sample" : " samples");
  std::string loop = plan.accumSteps == 1
                         ? "the micro-batch of " + samples
                         : "one of the " + std::to_string(plan.accumSteps) +
                               " micro-batches of " + samples;
  os << llvm::format("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
                     "the step's ops in program order (%s, then the update)"
                     "</text>\n",
                     left + plotW / 2, plotTop + plotH + 22, loop.c_str());
  for (unsigned s = 0; s < 4; ++s) {
    int lx = left + s * 160, ly = plotTop + plotH + 40;
    os << llvm::format("<rect x=\"%d\" y=\"%d\" width=\"12\" "
                       "height=\"12\" fill=\"%s\"/>",
                       lx, ly, kSeriesColors[s])
       << llvm::format("<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 18, ly + 11,
                       kSeries[s]);
  }
  os << "</svg>\n";
}
