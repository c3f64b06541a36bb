//===- AccumulationSchedule.cpp - accumulation steps per step -------------===//
//
// Parsing --accum-schedule, and the windows an epoch splits into under it.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/AccumulationSchedule.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace gaccrt;
using llvm::StringRef;

AccumulationSchedule AccumulationSchedule::constant(int64_t accumSteps) {
  AccumulationSchedule s;
  s.entries.push_back({1, accumSteps});
  return s;
}

static llvm::Error scheduleError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--accum-schedule: " + msg);
}

llvm::Expected<AccumulationSchedule>
AccumulationSchedule::parse(llvm::StringRef text) {
  AccumulationSchedule s;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    auto [stepText, nText] = item.trim().split(':');
    int64_t step = 0, n = 0;
    if (stepText.trim().getAsInteger(10, step) ||
        nText.trim().getAsInteger(10, n))
      return scheduleError("'" + item +
                           "' is not STEP:N (two integers; e.g. "
                           "1:1,11:2,21:4)");
    if (n < 1)
      return scheduleError("N must be at least 1, got " + llvm::Twine(n) +
                           " at step " + llvm::Twine(step));
    if (s.entries.empty() && step != 1)
      return scheduleError("the first entry must be at optimizer step 1 "
                           "(steps are numbered from 1), got " +
                           llvm::Twine(step));
    if (!s.entries.empty() && step <= s.entries.back().first)
      return scheduleError("steps must increase: " + llvm::Twine(step) +
                           " follows " + llvm::Twine(s.entries.back().first));
    // An entry that keeps the N before it changes nothing: dropped, so
    // that one schedule has one form (compared on --resume).
    if (s.entries.empty() || s.entries.back().second != n)
      s.entries.push_back({step, n});
  }
  return s;
}

int64_t AccumulationSchedule::accumStepsAt(int64_t index) const {
  int64_t n = entries.front().second;
  for (auto [step, entryN] : entries)
    if (index + 1 >= step)
      n = entryN;
  return n;
}

int64_t AccumulationSchedule::maxAccumSteps() const {
  int64_t n = 0;
  for (auto [step, entryN] : entries)
    n = std::max(n, entryN);
  return n;
}

std::string AccumulationSchedule::describe() const {
  std::string text = "N = ";
  llvm::ListSeparator comma;
  for (auto [step, n] : entries)
    text += llvm::formatv("{0}{1} from step {2}", StringRef(comma), n, step);
  return text;
}

std::string AccumulationSchedule::str() const {
  std::string text;
  llvm::ListSeparator comma(",");
  for (auto [step, n] : entries)
    text += llvm::formatv("{0}{1}:{2}", StringRef(comma), step, n);
  return text;
}

EpochWindows gaccrt::planEpochWindows(const AccumulationSchedule &schedule,
                                      int64_t firstStep, int64_t samples,
                                      int64_t microBatch, int64_t perRank,
                                      int64_t ranks, bool dropLast) {
  EpochWindows w;
  for (int64_t start = 0, step = firstStep; start < samples; ++step) {
    int64_t size =
        ranks * rankWindowSamples(schedule.accumStepsAt(step), microBatch,
                                  perRank);
    if (dropLast && start + size > samples)
      break;
    start = std::min(start + size, samples);
    w.starts.push_back(start);
  }
  return w;
}
