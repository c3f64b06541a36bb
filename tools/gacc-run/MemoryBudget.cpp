//===- MemoryBudget.cpp - sizes, budgets and measured memory --------------===//
//
// Parses byte sizes, bisects the accumulation steps against the memory
// plan for --memory-budget, and reads the process's resident memory for
// the planned-against-measured comparison.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/MemoryBudget.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace gaccrt;
using namespace mlir;
using namespace mlir::gacc;

/// Bytes of a static tensor or memref type of integers or floats.
static uint64_t bytesOf(ShapedType t) {
  return uint64_t(t.getNumElements()) * ((t.getElementTypeBitWidth() + 7) / 8);
}

llvm::Error gaccrt::checkLargestTensor(TrainStepOp step, uint64_t memoryBytes) {
  if (!memoryBytes)
    return llvm::Error::success();
  Operation *largest = nullptr;
  RankedTensorType largestType;
  uint64_t largestBytes = 0;
  step.getBody().walk([&](Operation *op) {
    if (!isa_and_present<GAccDialect>(op->getDialect()))
      return;
    for (Type t : op->getResultTypes()) {
      auto type = dyn_cast<RankedTensorType>(t);
      if (!type || !type.hasStaticShape() ||
          !type.getElementType().isIntOrFloat())
        continue;
      uint64_t bytes = bytesOf(type);
      if (bytes > largestBytes) {
        largest = op;
        largestType = type;
        largestBytes = bytes;
      }
    }
  });
  if (largestBytes <= memoryBytes)
    return llvm::Error::success();
  std::string shape;
  llvm::raw_string_ostream os(shape);
  os << largestType;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("'{0}' at {1} computes {2}, {3}, more than the {4} "
                    "of memory this process may use (the machine's, or its "
                    "container's limit): the step cannot run; lower "
                    "--micro-batch or fix the shapes",
                    largest->getName().getStringRef(),
                    describeLocation(largest->getLoc()), shape,
                    formatBytes(largestBytes), formatBytes(memoryBytes)));
}

PersistentState gaccrt::persistentState(const StepSignature &sig) {
  PersistentState p;
  for (RankedTensorType t : sig.paramTypes)
    p.params += bytesOf(t);
  for (unsigned i : sig.trainable)
    p.accumulators += uint64_t(sig.paramTypes[i].getNumElements()) * 4;
  p.state = p.accumulators * sig.statePerParam;
  for (RankedTensorType t : sig.statisticTypes)
    p.statistics += bytesOf(t);
  for (unsigned j = 0; j < sig.numInputs; ++j)
    p.inputs += bytesOf(sig.windowInputType(j));
  return p;
}

llvm::Error gaccrt::checkPersistentState(const StepSignature &sig,
                                         uint64_t memoryBytes) {
  PersistentState p = persistentState(sig);
  if (!memoryBytes || p.total() <= memoryBytes)
    return llvm::Error::success();
  std::string parts;
  for (auto [what, bytes] :
       {std::pair<const char *, uint64_t>{"parameters", p.params},
        {"gradient accumulators", p.accumulators},
        {"optimizer state", p.state},
        {"running statistics", p.statistics},
        {"window inputs", p.inputs}})
    if (bytes)
      parts += (parts.empty() ? "" : ", ") + std::string(what) + " " +
               formatBytes(bytes);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("@{0} holds {1} before any activation ({2}), more than "
                    "the {3} of memory this process may use (the machine's, "
                    "or its container's limit): the step cannot run; make "
                    "the model smaller or lower the effective batch "
                    "(--micro-batch with --accum-steps)",
                    sig.name, formatBytes(p.total()), parts,
                    formatBytes(memoryBytes)));
}

llvm::Expected<uint64_t> gaccrt::parseByteSize(llvm::StringRef text) {
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + text + "' is not a size: " + why +
            " (e.g. 512MiB, 2GiB, 1.5GB or a number of bytes)");
  };
  llvm::StringRef s = text.trim();
  if (s.starts_with("-"))
    return bad("it cannot be negative");
  size_t digits = s.find_first_not_of("0123456789.");
  llvm::StringRef number = s.take_front(digits), unit = s.drop_front(
                                                     number.size()).trim();
  static const std::pair<const char *, double> units[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1e3},
      {"kB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  double scale = 0;
  for (auto [name, factor] : units)
    if (unit == name)
      scale = factor;
  if (scale == 0 && unit.size() == 1 && llvm::StringRef("kKMGT").contains(unit))
    return bad("'" + unit + "' is ambiguous: " + unit.upper() +
               "B (powers of 1000) or " + unit.upper() +
               "iB (powers of 1024)?");
  if (scale == 0)
    return bad("unknown unit '" + unit + "'");
  double value = 0;
  if (number.empty() || number.getAsDouble(value) || !std::isfinite(value))
    return bad("no number");
  if (unit.empty() && number.contains('.'))
    return bad("a fraction of a byte");
  double bytes = value * scale;
  if (bytes < 1)
    return bad("it must be at least one byte");
  if (bytes > std::ldexp(1.0, 60))
    return bad("more than 2^60 bytes");
  return uint64_t(bytes);
}

std::string gaccrt::formatBytes(uint64_t bytes) {
  if (bytes < 1024)
    return llvm::formatv("{0} byte{1}", bytes, bytes == 1 ? "" : "s").str();
  if (bytes < (1 << 20))
    return llvm::formatv("{0:F2} KiB", double(bytes) / 1024).str();
  if (bytes < (uint64_t(1) << 30))
    return llvm::formatv("{0:F2} MiB", double(bytes) / (1 << 20)).str();
  return llvm::formatv("{0:F2} GiB", double(bytes) / (1 << 30)).str();
}

namespace {
/// formatBytes, and the number of bytes where that rounds them: two sizes
/// compared in a message read apart however close they are.
std::string withExactBytes(uint64_t bytes) {
  std::string text = formatBytes(bytes);
  if (bytes >= 1024)
    text += " (" + std::to_string(bytes) + " bytes)";
  return text;
}

/// "parameters 0.78 MiB, window inputs 0.77 MiB, ..." for the largest
/// parts of `plan`'s peak.
std::string largestParts(const MemoryPlan &plan) {
  std::vector<std::pair<uint64_t, MemoryKind>> parts;
  for (unsigned k = 0; k < kNumMemoryKinds; ++k)
    if (plan.atPeak()[k])
      parts.push_back({plan.atPeak()[k], MemoryKind(k)});
  std::sort(parts.rbegin(), parts.rend());
  std::string text;
  for (size_t i = 0; i < std::min<size_t>(parts.size(), 3); ++i)
    text += (i ? ", " : "") + describe(parts[i].second).str() + " " +
            formatBytes(parts[i].first);
  return text;
}
} // namespace

llvm::Error gaccrt::budgetTooSmall(uint64_t budget, const MemoryPlan &smallest,
                                   bool recomputed) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("--memory-budget {0}: even micro-batch {1} needs {2}{3} "
                    "(largest parts: {4}); raise the budget",
                    withExactBytes(budget), smallest.microBatch,
                    withExactBytes(smallest.heldPeakBytes),
                    recomputed ? " with --recompute cheap" : "",
                    largestParts(smallest))
          .str());
}

llvm::Expected<MemoryPlan> gaccrt::chooseMicroBatch(
    ModuleOp model, llvm::StringRef step, int64_t effectiveBatch,
    uint64_t budget, llvm::StringRef target,
    const GAccExpandAccumulationPassOptions &expand,
    const StepToBuffersOptions &options) {
  auto plan = [&](int64_t m) -> llvm::Expected<MemoryPlan> {
    FailureOr<MemoryPlan> p =
        planTrainingStepMemory(model, step, m, target, expand, options);
    if (failed(p))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the memory plan failed (see above)");
    return *p;
  };
  // A micro-batch of one real sample has no variance for an op whose
  // statistics take one value per sample (a batch norm over [m, C]): then
  // no micro-batch, the window's ragged last included, may hold one.
  bool needsTwo = false;
  if (auto train = dyn_cast_or_null<TrainStepOp>(
          SymbolTable::lookupSymbolIn(model, step)))
    for (BatchStatisticsOpInterface stats : train.getBatchStatisticsOps())
      needsTwo |= stats.getStatisticValuesPerSample() == 1;
  auto admissible = [&](int64_t m) {
    return !needsTwo || (m >= 2 && effectiveBatch % m != 1);
  };
  // The smallest admissible micro-batch (m = 1 where none is: the plan
  // then reports why).
  int64_t first = 1;
  while (first < effectiveBatch && !admissible(first))
    ++first;
  auto smallest = plan(admissible(first) ? first : 1);
  if (!smallest || smallest->heldPeakBytes > budget)
    return smallest;
  // The smallest admissible micro-batch fits (every N that gives a larger
  // one is below its N); the fewest steps that fit are in [lo, hi]. An
  // inadmissible micro-batch counts as one that does not fit.
  MemoryPlan best = *smallest;
  auto microBatchOf = [&](int64_t n) { return (effectiveBatch + n - 1) / n; };
  int64_t lo = 1, hi = effectiveBatch;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    // Steps that give the micro-batch of the fitting `best` fit too.
    if (microBatchOf(mid) == best.microBatch) {
      hi = mid;
      continue;
    }
    if (!admissible(microBatchOf(mid))) {
      lo = mid + 1;
      continue;
    }
    auto p = plan(microBatchOf(mid));
    if (!p)
      return p.takeError();
    if (p->heldPeakBytes <= budget) {
      hi = mid;
      best = std::move(*p);
    } else {
      lo = mid + 1;
    }
  }
  return best;
}

namespace {
/// A "VmXXX:  1234 kB" field of /proc/self/status, in bytes (0 if absent).
uint64_t statusField(llvm::StringRef field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (llvm::StringRef(line).starts_with(field)) {
      uint64_t kb = 0;
      llvm::StringRef rest =
          llvm::StringRef(line).drop_front(field.size()).trim();
      rest.consumeInteger(10, kb);
      return kb * 1024;
    }
  return 0;
}
} // namespace

void gaccrt::rss::trim() { malloc_trim(0); }

uint64_t gaccrt::rss::trimmedCurrentBytes() {
  trim();
  return statusField("VmRSS:");
}

uint64_t gaccrt::rss::peakBytes() { return statusField("VmHWM:"); }

bool gaccrt::rss::resetPeak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return bool(clear);
}
