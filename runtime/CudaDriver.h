//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// libcuda.so.1 loaded with dlopen on first use, so every gacc binary starts
// and runs where no NVIDIA driver exists: only the cuda target asks for it,
// and then gets one clear error instead of a failed start. The few driver
// types are declared here (ABI-compatible with cuda.h), so building needs
// no CUDA headers either.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CUDADRIVER_H
#define GACC_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace gaccrt::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
/// Where memory lives (cuda.h's CUmemLocation): type 1 is a device, whose
/// ordinal is `id`.
struct CUmemLocation {
  int type;
  int id;
};

/// The driver entry points gacc uses (names as exported by libcuda.so.1).
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
  CUresult (*cuMemGetInfo)(size_t *free, size_t *total);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  /// Optional (drivers of CUDA 12.4 on; null before): a kernel parameter's
  /// offset and size, CUDA_ERROR_INVALID_VALUE past the last one.
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
  /// Optional (cuMemPrefetchAsync_v2, drivers of CUDA 12.2 on): migrates
  /// managed memory to a location ahead of its use, queued on a stream.
  CUresult (*cuMemPrefetchAsync)(CUdeviceptr, size_t, CUmemLocation, unsigned,
                                 CUstream);
  /// Optional (cuMemAdvise_v2, drivers of CUDA 12.2 on): usage hints for
  /// managed memory (preferred location, accessed by).
  CUresult (*cuMemAdvise)(CUdeviceptr, size_t, int, CUmemLocation);
  /// Optional (CUDA graphs; every driver of CUDA 11.4 on): stream capture
  /// (cuStreamBeginCapture_v2's mode: 0 global, 1 thread-local, 2
  /// relaxed), instantiation and replay.
  CUresult (*cuStreamBeginCapture)(CUstream, int mode);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
};

/// The loaded driver with the primary context of this process's device
/// current (device 0; in an MPI job, the local rank modulo the device
/// count, so the ranks on one machine spread over its GPUs), or null
/// with `reason` set ("libcuda.so.1: cannot open shared object file", "no
/// CUDA device", the failing call and its error name). Loads once.
const Driver *load(std::string &reason);

/// That device: its name, memory and free memory when the driver loaded
/// (bytes), and compute capability (e.g. 90).
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  size_t memoryBytes = 0, freeMemoryBytes = 0;
  int computeCapability = 0;
};
DeviceInfo deviceInfo();

/// What gacc leaves of the device's free memory to the CUDA context,
/// cuBLAS's handle and other processes' growth: 1 GiB.
constexpr uint64_t kDeviceMemoryMargin = 1ull << 30;

/// The device memory a step may use, the default memory budget on the
/// cuda target and the managed arena gacc reserves: the device's free
/// memory less kDeviceMemoryMargin (0 when less is free).
uint64_t stepMemoryBytes();

/// "call: CUDA_ERROR_NAME" for a failed driver call (named by `d`, or by
/// the loaded driver).
std::string describe(const char *call, CUresult result);
std::string describe(const Driver &d, const char *call, CUresult result);

} // namespace gaccrt::cuda

#endif // GACC_RUNTIME_CUDADRIVER_H
