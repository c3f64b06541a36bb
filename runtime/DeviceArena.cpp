//===- DeviceArena.cpp - one device allocation, sub-allocated -------------===//
//
// First-fit sub-allocation with coalescing frees and peak accounting.
//
//===----------------------------------------------------------------------===//

#include "runtime/DeviceArena.h"

#include <algorithm>

using namespace gaccrt;

DeviceArena::DeviceArena(uint64_t base, uint64_t capacity)
    : base(base), capacityBytes(capacity) {
  // Only whole aligned blocks are handed out.
  uint64_t start = (base + kAlignment - 1) / kAlignment * kAlignment;
  uint64_t end = base + capacity;
  if (end > start)
    freeRanges[start] = (end - start) / kAlignment * kAlignment;
}

std::optional<uint64_t> DeviceArena::allocate(uint64_t bytes) {
  uint64_t size = std::max<uint64_t>(bytes, 1);
  if (size > capacityBytes)
    return std::nullopt;
  size = (size + kAlignment - 1) / kAlignment * kAlignment;
  for (auto it = freeRanges.begin(); it != freeRanges.end(); ++it) {
    if (it->second < size)
      continue;
    uint64_t address = it->first, rest = it->second - size;
    freeRanges.erase(it);
    if (rest)
      freeRanges[address + size] = rest;
    live[address] = size;
    inUseBytes += size;
    peakBytes = std::max(peakBytes, inUseBytes);
    return address;
  }
  return std::nullopt;
}

bool DeviceArena::reserve(uint64_t address, uint64_t bytes) {
  uint64_t size = std::max<uint64_t>(bytes, 1);
  size = (size + kAlignment - 1) / kAlignment * kAlignment;
  if (address % kAlignment || size > capacityBytes)
    return false;
  // The free range that starts at or before `address`.
  auto it = freeRanges.upper_bound(address);
  if (it == freeRanges.begin())
    return false;
  --it;
  uint64_t start = it->first, length = it->second;
  if (address + size > start + length)
    return false;
  freeRanges.erase(it);
  if (address > start)
    freeRanges[start] = address - start;
  if (start + length > address + size)
    freeRanges[address + size] = start + length - address - size;
  live[address] = size;
  inUseBytes += size;
  peakBytes = std::max(peakBytes, inUseBytes);
  return true;
}

bool DeviceArena::free(uint64_t address) {
  auto it = live.find(address);
  if (it == live.end())
    return false;
  uint64_t start = address, size = it->second;
  live.erase(it);
  inUseBytes -= size;
  // Coalesce with the free neighbours.
  auto next = freeRanges.lower_bound(start);
  if (next != freeRanges.end() && next->first == start + size) {
    size += next->second;
    next = freeRanges.erase(next);
  }
  if (next != freeRanges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      freeRanges.erase(prev);
    }
  }
  freeRanges[start] = size;
  return true;
}

std::vector<std::pair<uint64_t, uint64_t>>
gaccrt::unionOfRanges(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (auto [start, bytes] : ranges) {
    if (!bytes)
      continue;
    if (!merged.empty() &&
        start <= merged.back().first + merged.back().second) {
      uint64_t end = std::max(merged.back().first + merged.back().second,
                              start + bytes);
      merged.back().second = end - merged.back().first;
      continue;
    }
    merged.push_back({start, bytes});
  }
  return merged;
}
