//===- DeviceArena.h - one device allocation, sub-allocated -----*- C++ -*-===//
//
// The allocator behind device memory on the cuda target: one reservation
// (a single cuMemAlloc) carved into 256-byte-aligned blocks with first-fit
// allocation, coalescing frees, and accounting of the bytes in use and
// their peak. It only does address arithmetic, so it is tested on the host.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_DEVICEARENA_H
#define GACC_RUNTIME_DEVICEARENA_H

#include "abi/MemoryABI.h"

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace gaccrt {

class DeviceArena {
public:
  /// Alignment of every block, in bytes (covers 16-byte vector accesses and
  /// cuBLAS's preferred alignment).
  static constexpr uint64_t kAlignment = ::gacc::abi::kDeviceAlignment;

  /// Manages [base, base + capacity) (device addresses, bytes).
  DeviceArena(uint64_t base, uint64_t capacity);

  /// The address of a new block of `bytes` (rounded up to kAlignment; 0
  /// bytes gives a block of kAlignment), or nothing when no free range is
  /// large enough.
  std::optional<uint64_t> allocate(uint64_t bytes);
  /// Makes [address, address + bytes) (bytes rounded up to kAlignment) one
  /// live block, as if allocate had returned it; false, changing nothing,
  /// when `address` is not aligned or the range is not wholly free. What
  /// holds the addresses a captured CUDA graph replays.
  bool reserve(uint64_t address, uint64_t bytes);
  /// Returns a block; false if `address` is not the start of a live block.
  bool free(uint64_t address);

  uint64_t capacity() const { return capacityBytes; }
  /// Bytes in live blocks (rounded sizes), now and at the most.
  uint64_t inUse() const { return inUseBytes; }
  uint64_t peak() const { return peakBytes; }
  /// Live blocks.
  size_t blocks() const { return live.size(); }

private:
  uint64_t base, capacityBytes;
  uint64_t inUseBytes = 0, peakBytes = 0;
  std::map<uint64_t, uint64_t> freeRanges; // start -> size
  std::map<uint64_t, uint64_t> live;       // start -> size
};

/// The union of address ranges {start, bytes}, as disjoint ranges sorted
/// by start (touching ranges joined).
std::vector<std::pair<uint64_t, uint64_t>>
unionOfRanges(std::vector<std::pair<uint64_t, uint64_t>> ranges);

} // namespace gaccrt

#endif // GACC_RUNTIME_DEVICEARENA_H
