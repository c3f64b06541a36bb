//===- CudaRuntime.h - the mgpu* launch ABI over the driver API -*- C++ -*-===//
//
// The functions that MLIR's gpu-to-llvm lowering makes host code call (module
// load, kernel lookup, launch, streams), implemented over the CUDA driver
// opened at run time (CudaDriver.h); LLVM 22 ships no
// libmlir_cuda_runtime.so for them. A JIT of NVVM-pipeline output binds
// these symbols (registerCudaRuntimeSymbols). Driver errors are reported on
// stderr and remembered: lastError() returns and clears the first.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CUDARUNTIME_H
#define GACC_RUNTIME_CUDARUNTIME_H

#include <cstdint>
#include <string>

extern "C" {
void *mgpuModuleLoad(void *data, uint64_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *stream);
void mgpuStreamDestroy(void *stream);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, uint64_t paramCount);
}

namespace gaccrt::cuda {
/// The first driver error since the last call ("" when none), cleared.
std::string lastError();
} // namespace gaccrt::cuda

#endif // GACC_RUNTIME_CUDARUNTIME_H
