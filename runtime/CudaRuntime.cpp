//===- CudaRuntime.cpp - the mgpu* launch ABI over the driver API ---------===//
//
// Module load, kernel lookup, launch and streams for JIT-compiled host code,
// each a thin call of the dlopen'd driver whose failure is recorded.
//
// The host code that MLIR's gpu-to-llvm lowering emits creates, syncs and
// destroys a stream around every synchronous launch; one process-wide
// stream stands in for all of them (create and destroy cost more than the
// small kernels of a micro-batch). gacc-async-launches makes the step's
// launches asynchronous on that stream, waited for by
// gacc_cuda_synchronize where the host touches memory. GACC_CUDA_TRACE=1 prints each launch (kernel, grid, block)
// before it happens and synchronizes after it, so a failing kernel is named.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaRuntime.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaGraph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

using namespace gaccrt::cuda;

namespace {
std::mutex errorMutex;
std::string firstError;

const Driver *driverOrReport() {
  std::string reason;
  const Driver *d = load(reason);
  if (!d) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (firstError.empty())
      firstError = reason;
  }
  return d;
}

bool check(const char *call, CUresult r) {
  if (!r)
    return true;
  std::string message = describe(call, r);
  std::fprintf(stderr, "gacc-run: cuda: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (firstError.empty())
    firstError = message;
  return false;
}
} // namespace

std::string gaccrt::cuda::lastError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  std::string e = firstError;
  firstError.clear();
  return e;
}

/// Kernel names by function handle, for messages and GACC_CUDA_TRACE.
static std::map<void *, std::string> &kernelNames() {
  static std::map<void *, std::string> names;
  return names;
}

/// Parameter counts by function handle (-1 where the driver cannot tell).
static std::map<void *, int64_t> &kernelParamCounts() {
  static std::map<void *, int64_t> counts;
  return counts;
}

extern "C" void *mgpuModuleLoad(void *data, uint64_t) {
  const Driver *d = driverOrReport();
  CUmodule module = nullptr;
  if (d)
    check("cuModuleLoadData", d->cuModuleLoadData(&module, data));
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  if (const Driver *d = driverOrReport(); d && module) {
    // Function handles of this module may be reused by a later one.
    {
      std::lock_guard<std::mutex> lock(errorMutex);
      kernelNames().clear();
      kernelParamCounts().clear();
    }
    check("cuModuleUnload", d->cuModuleUnload(static_cast<CUmodule>(module)));
  }
}

void gaccrt::cuda::recordFailure(const std::string &message) {
  std::fprintf(stderr, "gacc-run: cuda: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (firstError.empty())
    firstError = message;
}

/// GACC_CUDA_PROFILE=1: every launch (and cuBLAS call) bracketed by two
/// events on the stream; printProfile() sums them per kernel.
static bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

static bool profiling() {
  static const bool on = envFlag("GACC_CUDA_PROFILE");
  return on;
}

namespace {
struct ProfiledCall {
  std::string name;
  CUevent start, stop;
  std::chrono::steady_clock::time_point hostStart;
  double hostUs = 0; // the host's time inside the call
};
/// At most this many calls are profiled (the first ones).
constexpr size_t kMaxProfiled = 200000;
std::vector<ProfiledCall> &profiledCalls() {
  static std::vector<ProfiledCall> calls;
  return calls;
}
} // namespace

static CUstream theStream(const Driver *d);

void *gaccrt::cuda::profileBegin(const char *name) {
  if (!profiling())
    return nullptr;
  const Driver *d = driverOrReport();
  if (!d)
    return nullptr;
  std::lock_guard<std::mutex> lock(errorMutex);
  if (profiledCalls().size() >= kMaxProfiled)
    return nullptr;
  ProfiledCall call{name, nullptr, nullptr, {}, 0};
  if (d->cuEventCreate(&call.start, 0))
    return nullptr;
  if (d->cuEventCreate(&call.stop, 0)) {
    d->cuEventDestroy(call.start);
    return nullptr;
  }
  d->cuEventRecord(call.start, theStream(d));
  call.hostStart = std::chrono::steady_clock::now();
  profiledCalls().push_back(call);
  // The token is the call's index + 1.
  return reinterpret_cast<void *>(uintptr_t(profiledCalls().size()));
}

void gaccrt::cuda::profileEnd(void *token) {
  // No token (not profiling): no driver either.
  if (!token)
    return;
  const Driver *d = driverOrReport();
  if (!d)
    return;
  std::lock_guard<std::mutex> lock(errorMutex);
  size_t index = reinterpret_cast<uintptr_t>(token) - 1;
  if (index >= profiledCalls().size())
    return; // issued before printProfile forgot the calls
  ProfiledCall &call = profiledCalls()[index];
  call.hostUs = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - call.hostStart)
                    .count();
  d->cuEventRecord(call.stop, theStream(d));
}

void gaccrt::cuda::printProfile(std::FILE *out) {
  const Driver *d = driverOrReport();
  std::lock_guard<std::mutex> lock(errorMutex);
  if (!d || profiledCalls().empty())
    return;
  struct Total {
    double ms = 0, hostUs = 0;
    int64_t calls = 0;
  };
  std::map<std::string, Total> totals;
  double all = 0;
  for (ProfiledCall &c : profiledCalls()) {
    float ms = 0;
    bool timed = !d->cuEventSynchronize(c.stop) &&
                 !d->cuEventElapsedTime(&ms, c.start, c.stop);
    d->cuEventDestroy(c.start);
    d->cuEventDestroy(c.stop);
    if (!timed)
      continue;
    totals[c.name].ms += ms;
    totals[c.name].hostUs += c.hostUs;
    ++totals[c.name].calls;
    all += ms;
  }
  if (totals.empty() || all <= 0) {
    profiledCalls().clear();
    return;
  }
  std::vector<std::pair<std::string, Total>> rows(totals.begin(),
                                                  totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.ms > b.second.ms;
  });
  std::fprintf(out,
               "gacc-run: cuda profile: %zu calls, %.3f ms between their "
               "events on the stream (GACC_CUDA_PROFILE; the top 15; where "
               "the device waits for the host, that wait counts too)\n"
               "  %9s %6s %7s %12s %12s  %s\n",
               profiledCalls().size(), all, "total", "share", "calls",
               "stream/call", "host/call", "kernel");
  if (profiledCalls().size() >= kMaxProfiled)
    std::fprintf(out, "  (only the first %zu calls were profiled)\n",
                 kMaxProfiled);
  for (size_t i = 0; i < rows.size() && i < 15; ++i)
    std::fprintf(out, "  %6.3f ms %5.1f%% %7lld %9.2f us %9.2f us  %s\n",
                 rows[i].second.ms, 100.0 * rows[i].second.ms / all,
                 (long long)rows[i].second.calls,
                 1000.0 * rows[i].second.ms / rows[i].second.calls,
                 rows[i].second.hostUs / rows[i].second.calls,
                 rows[i].first.c_str());
  profiledCalls().clear();
}

static bool tracing() {
  static const bool on = envFlag("GACC_CUDA_TRACE");
  return on;
}

/// The name a kernel was looked up by, or "" for an unknown handle.
static std::string kernelName(void *function) {
  std::lock_guard<std::mutex> lock(errorMutex);
  auto it = kernelNames().find(function);
  return it == kernelNames().end() ? "" : it->second;
}

/// The number of parameters a kernel takes (-1 where the driver cannot
/// tell), asked once per function.
static int64_t kernelParamCount(const Driver *d, CUfunction f) {
  std::lock_guard<std::mutex> lock(errorMutex);
  auto &counts = kernelParamCounts();
  auto [it, inserted] = counts.try_emplace(f, -1);
  if (inserted && d->cuFuncGetParamInfo) {
    size_t offset = 0, size = 0, k = 0;
    while (k < 4096 && d->cuFuncGetParamInfo(f, k, &offset, &size) == 0)
      ++k;
    // Zero is also what a driver that cannot answer gives: unknown.
    if (k > 0)
      it->second = int64_t(k);
  }
  return it->second;
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  const Driver *d = driverOrReport();
  CUfunction f = nullptr;
  if (d && !module)
    recordFailure(std::string("kernel ") + name +
                  " requested from a module that did not load");
  if (d && module)
    check("cuModuleGetFunction",
          d->cuModuleGetFunction(&f, static_cast<CUmodule>(module), name));
  if (f) {
    std::lock_guard<std::mutex> lock(errorMutex);
    kernelNames().try_emplace(f, name);
  }
  return f;
}

/// The process's one stream (non-blocking), created on first use.
static CUstream theStream(const Driver *d) {
  static CUstream stream = [d] {
    CUstream s = nullptr;
    check("cuStreamCreate", d->cuStreamCreate(&s, /*CU_STREAM_NON_BLOCKING=*/1));
    return s;
  }();
  return stream;
}

void *gaccrt::cuda::processStream() {
  const Driver *d = driverOrReport();
  return d ? theStream(d) : nullptr;
}

extern "C" void *mgpuStreamCreate() {
  const Driver *d = driverOrReport();
  return d ? theStream(d) : nullptr;
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  if (const Driver *d = driverOrReport())
    check("cuStreamSynchronize",
          d->cuStreamSynchronize(static_cast<CUstream>(stream)));
}

extern "C" void gacc_cuda_synchronize() {
  // Capture runs nothing, and a wait would invalidate it.
  if (capturing())
    return;
  if (const Driver *d = driverOrReport())
    check("cuStreamSynchronize", d->cuStreamSynchronize(theStream(d)));
}

extern "C" void mgpuStreamDestroy(void *stream) {
  // The process's stream outlives the host code's uses of it.
  if (const Driver *d = driverOrReport();
      d && stream && stream != theStream(d))
    check("cuStreamDestroy", d->cuStreamDestroy(static_cast<CUstream>(stream)));
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t sharedMemBytes,
                                 void *stream, void **params, void **extra,
                                 uint64_t paramsCount) {
  const Driver *d = driverOrReport();
  if (d && !function)
    recordFailure("launch of a kernel that was not found");
  if (!d || !function)
    return;
  // A kernel reading more parameters than the host code passes would make
  // the driver read past the array: refuse it with one line instead.
  int64_t expected = kernelParamCount(d, static_cast<CUfunction>(function));
  if (expected >= 0 && !extra && uint64_t(expected) != paramsCount) {
    std::string name = kernelName(function);
    recordFailure((name.empty() ? "a kernel" : "kernel " + name) + " takes " + std::to_string(expected) +
                  " parameters, the host code passes " +
                  std::to_string(paramsCount));
    return;
  }
  std::string name;
  if (tracing() || profiling()) {
    name = kernelName(function);
    if (name.empty())
      name = "?";
  }
  if (tracing()) {
    std::fprintf(stderr,
                 "gacc-run: cuda: launch %s grid (%ld, %ld, %ld) block (%ld, "
                 "%ld, %ld) shared %d bytes, %llu parameters (kernel: %lld)\n",
                 name.c_str(), long(gridX), long(gridY), long(gridZ),
                 long(blockX), long(blockY), long(blockZ), sharedMemBytes,
                 (unsigned long long)paramsCount, (long long)expected);
    std::fflush(stderr);
  }
  void *profiled = profiling() ? gaccrt::cuda::profileBegin(name.c_str())
                               : nullptr;
  check("cuLaunchKernel",
        d->cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                          gridZ, blockX, blockY, blockZ, sharedMemBytes,
                          static_cast<CUstream>(stream), params, extra));
  gaccrt::cuda::profileEnd(profiled);
  if (tracing())
    check(("kernel " + name).c_str(), d->cuCtxSynchronize());
}
