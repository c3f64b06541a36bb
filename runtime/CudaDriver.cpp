//===- CudaDriver.cpp - the CUDA driver API, opened at run time -----------===//
//
// dlopen("libcuda.so.1"), dlsym of each entry point (the _v2 names where the
// driver versions them, as cuda.h does), cuInit and the primary context of
// this process's device (device 0, or the local rank's in an MPI job).
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaDriver.h"
#include "runtime/Symbols.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace gaccrt::cuda;
using gaccrt::loadSymbol;

namespace {
Driver driver;
const Driver *loaded = nullptr;
std::string failure;
DeviceInfo info;

template <typename F> bool bind(void *lib, F &fn, const char *name) {
  if (loadSymbol(lib, fn, name))
    return true;
  failure = std::string("libcuda.so.1 has no ") + name;
  return false;
}

void loadOnce() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    failure = std::string("no CUDA driver (") + (e ? e : "libcuda.so.1") + ")";
    return;
  }
  Driver &d = driver;
  if (!bind(lib, d.cuInit, "cuInit") ||
      !bind(lib, d.cuDeviceGetCount, "cuDeviceGetCount") ||
      !bind(lib, d.cuDeviceGet, "cuDeviceGet") ||
      !bind(lib, d.cuDeviceGetName, "cuDeviceGetName") ||
      !bind(lib, d.cuDeviceTotalMem, "cuDeviceTotalMem_v2") ||
      !bind(lib, d.cuMemGetInfo, "cuMemGetInfo_v2") ||
      !bind(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute") ||
      !bind(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") ||
      !bind(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent") ||
      !bind(lib, d.cuCtxSynchronize, "cuCtxSynchronize") ||
      !bind(lib, d.cuModuleLoadData, "cuModuleLoadData") ||
      !bind(lib, d.cuModuleUnload, "cuModuleUnload") ||
      !bind(lib, d.cuModuleGetFunction, "cuModuleGetFunction") ||
      !bind(lib, d.cuLaunchKernel, "cuLaunchKernel") ||
      !bind(lib, d.cuStreamCreate, "cuStreamCreate") ||
      !bind(lib, d.cuStreamSynchronize, "cuStreamSynchronize") ||
      !bind(lib, d.cuStreamDestroy, "cuStreamDestroy_v2") ||
      !bind(lib, d.cuMemAlloc, "cuMemAlloc_v2") ||
      !bind(lib, d.cuMemFree, "cuMemFree_v2") ||
      !bind(lib, d.cuMemAllocManaged, "cuMemAllocManaged") ||
      !bind(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2") ||
      !bind(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2") ||
      !bind(lib, d.cuMemcpyDtoD, "cuMemcpyDtoD_v2") ||
      !bind(lib, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") ||
      !bind(lib, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") ||
      !bind(lib, d.cuMemsetD32Async, "cuMemsetD32Async") ||
      !bind(lib, d.cuEventCreate, "cuEventCreate") ||
      !bind(lib, d.cuEventRecord, "cuEventRecord") ||
      !bind(lib, d.cuEventSynchronize, "cuEventSynchronize") ||
      !bind(lib, d.cuEventElapsedTime, "cuEventElapsedTime") ||
      !bind(lib, d.cuEventDestroy, "cuEventDestroy_v2") ||
      !bind(lib, d.cuGetErrorName, "cuGetErrorName"))
    return;
  loadSymbol(lib, d.cuFuncGetParamInfo, "cuFuncGetParamInfo");
  loadSymbol(lib, d.cuMemPrefetchAsync, "cuMemPrefetchAsync_v2");
  loadSymbol(lib, d.cuMemAdvise, "cuMemAdvise_v2");
  loadSymbol(lib, d.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  loadSymbol(lib, d.cuStreamEndCapture, "cuStreamEndCapture");
  loadSymbol(lib, d.cuGraphInstantiateWithFlags,
             "cuGraphInstantiateWithFlags");
  loadSymbol(lib, d.cuGraphLaunch, "cuGraphLaunch");
  loadSymbol(lib, d.cuGraphExecDestroy, "cuGraphExecDestroy");
  loadSymbol(lib, d.cuGraphDestroy, "cuGraphDestroy");
  CUresult r;
  if ((r = d.cuInit(0))) {
    failure = describe("cuInit", r);
    return;
  }
  int count = 0;
  if ((r = d.cuDeviceGetCount(&count)) || count == 0) {
    failure = r ? describe("cuDeviceGetCount", r) : "no CUDA device";
    return;
  }
  // One device per process of a job: the local rank's, round robin.
  int ordinal = 0;
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                          "SLURM_LOCALID"})
    if (const char *v = std::getenv(var)) {
      ordinal = std::atoi(v) % count;
      break;
    }
  CUdevice dev;
  CUcontext ctx;
  if ((r = d.cuDeviceGet(&dev, ordinal)) ||
      (r = d.cuDevicePrimaryCtxRetain(&ctx, dev)) ||
      (r = d.cuCtxSetCurrent(ctx))) {
    failure = describe(("selecting device " + std::to_string(ordinal)).c_str(),
                       r);
    return;
  }
  info.ordinal = ordinal;
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof(name) - 1, dev);
  info.name = name;
  d.cuDeviceTotalMem(&info.memoryBytes, dev);
  size_t total = 0;
  d.cuMemGetInfo(&info.freeMemoryBytes, &total);
  int major = 0, minor = 0;
  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
  d.cuDeviceGetAttribute(&major, 75, dev);
  d.cuDeviceGetAttribute(&minor, 76, dev);
  info.computeCapability = major * 10 + minor;
  loaded = &driver;
}
} // namespace

const Driver *gaccrt::cuda::load(std::string &reason) {
  static std::once_flag once;
  std::call_once(once, loadOnce);
  if (!loaded)
    reason = failure;
  return loaded;
}

DeviceInfo gaccrt::cuda::deviceInfo() { return info; }

uint64_t gaccrt::cuda::stepMemoryBytes() {
  return info.freeMemoryBytes > kDeviceMemoryMargin
             ? info.freeMemoryBytes - kDeviceMemoryMargin
             : 0;
}

std::string gaccrt::cuda::describe(const Driver &d, const char *call,
                                   CUresult result) {
  const char *name = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(result, &name);
  return std::string(call) + ": " +
         (name ? name : "CUDA error " + std::to_string(result));
}

std::string gaccrt::cuda::describe(const char *call, CUresult result) {
  return describe(driver, call, result);
}
