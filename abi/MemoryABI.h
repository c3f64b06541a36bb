//===- MemoryABI.h - how the runtime lays out the step's memory -*- C++ -*-===//
//
// The facts about allocation that the memory plan (passes/analysis/
// MemoryPlan.cpp) predicts and the runtime (runtime/CudaMemory.cpp,
// DeviceArena.cpp, Tensor.h) implements: alignments, the scalar pool, the
// cuBLAS workspace. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ABI_MEMORYABI_H
#define GACC_ABI_MEMORYABI_H

#include <cstdint>

namespace gacc::abi {

/// Alignment (bytes) of the host buffers: the runtime's tensors and the
/// step's memref.alloc (bufferization's `alignment = 64`).
constexpr uint64_t kHostAlignment = 64;
/// Block granularity (bytes) of the device's managed-memory arena: every
/// block is rounded up to it (an empty one takes one block).
constexpr uint64_t kDeviceAlignment = 256;
/// Device blocks of at most this many bytes (the step's rank-0 values)
/// come from the scalar pool, not the arena.
constexpr uint64_t kDeviceScalarBytes = 8;
/// The scalar pool, reserved whole next to the arena.
constexpr uint64_t kDeviceScalarPoolBytes = 1 << 20;
/// cuBLAS's workspace, allocated once when cuBLAS is loaded.
constexpr uint64_t kCublasWorkspaceBytes = 32u << 20;

/// `bytes` rounded up to a multiple of `alignment` (at least one block).
constexpr uint64_t roundToBlocks(uint64_t bytes, uint64_t alignment) {
  return (bytes == 0 ? 1 : (bytes + alignment - 1) / alignment) * alignment;
}

} // namespace gacc::abi

#endif // GACC_ABI_MEMORYABI_H
