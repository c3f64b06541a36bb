//===- CudaRuntime.cpp - the mgpu* launch ABI over the driver API ---------===//
//
// Module load, kernel lookup, launch and streams for JIT-compiled host code,
// each a thin call of the dlopen'd driver whose failure is recorded.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaRuntime.h"
#include "runtime/CudaDriver.h"

#include <cstdio>
#include <mutex>

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

extern "C" void *mgpuModuleLoad(void *data, uint64_t) {
  const Driver *d = driverOrReport();
  CUmodule module = nullptr;
  if (d)
    check("cuModuleLoadData", d->cuModuleLoadData(&module, data));
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  if (const Driver *d = driverOrReport(); d && module)
    check("cuModuleUnload", d->cuModuleUnload(static_cast<CUmodule>(module)));
}

/// Records a failure that is not a driver error code.
static void recordProblem(const std::string &message) {
  std::fprintf(stderr, "gacc-run: cuda: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (firstError.empty())
    firstError = message;
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  const Driver *d = driverOrReport();
  CUfunction f = nullptr;
  if (d && !module)
    recordProblem(std::string("kernel ") + name +
                  " requested from a module that did not load");
  if (d && module)
    check("cuModuleGetFunction",
          d->cuModuleGetFunction(&f, static_cast<CUmodule>(module), name));
  return f;
}

extern "C" void *mgpuStreamCreate() {
  const Driver *d = driverOrReport();
  CUstream s = nullptr;
  if (d)
    check("cuStreamCreate", d->cuStreamCreate(&s, /*CU_STREAM_NON_BLOCKING=*/1));
  return s;
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  if (const Driver *d = driverOrReport())
    check("cuStreamSynchronize",
          d->cuStreamSynchronize(static_cast<CUstream>(stream)));
}

extern "C" void mgpuStreamDestroy(void *stream) {
  if (const Driver *d = driverOrReport(); d && stream)
    check("cuStreamDestroy", d->cuStreamDestroy(static_cast<CUstream>(stream)));
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t sharedMemBytes,
                                 void *stream, void **params, void **extra,
                                 uint64_t) {
  const Driver *d = driverOrReport();
  if (d && !function)
    recordProblem("launch of a kernel that was not found");
  if (!d || !function)
    return;
  check("cuLaunchKernel",
        d->cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                          gridZ, blockX, blockY, blockZ, sharedMemBytes,
                          static_cast<CUstream>(stream), params, extra));
}
