//===- HostMemory.h - the memory this process may use -----------*- C++ -*-===//
//
// The bound a CPU step's memory is checked against: the machine's physical
// memory, or the limit of the control groups the process runs in (a
// container's memory) where that is lower. Both gacc-run's check of the
// largest tensor and the step arena's refusal of a mapping ask here, so
// that a step too large for its container fails with a message instead of
// in the out-of-memory killer. And what happens when an allocation fails
// all the same (under an address-space limit, say): one handler, which
// the compiled step's buffers and the runtime's host tensors share.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_HOSTMEMORY_H
#define GACC_RUNTIME_HOSTMEMORY_H

#include <cstdint>
#include <string>

namespace gaccrt {

/// Bytes this process may use: the lower of the physical memory
/// (sysconf(_SC_PHYS_PAGES) pages) and cgroupMemoryLimit("/sys/fs/cgroup",
/// /proc/self/cgroup). 0 where neither is known.
uint64_t hostMemoryBytes();

/// The soft limit of this process's address space (getrlimit(RLIMIT_AS),
/// `ulimit -v`) in bytes, 0 where there is none. It counts reserved
/// mappings, code and libraries too, so it is no measure of the memory a
/// step may use; a failed allocation's message names it.
uint64_t addressSpaceLimitBytes();

/// Why a host allocation failed, for its message: "out of memory", naming
/// the address-space limit where there is one.
std::string hostOutOfMemoryCause();

/// What could not be allocated: a buffer of the compiled step (the step
/// arena, or one buffer, whose sizes grow with the micro-batch) on the
/// host or on the device, or a host tensor of the runtime (parameters,
/// optimizer state, statistics, a data set).
enum class AllocationSite { HostStepBuffer, DeviceStepBuffer, HostTensor };

/// Called when `bytes` cannot be allocated at `site`; it must not return
/// (neither the compiled code nor a tensor's allocator has a way to fail).
/// The default prints one line and exits with status 2.
using AllocationFailureHandler = void (*)(uint64_t bytes, AllocationSite site);
void setAllocationFailureHandler(AllocationFailureHandler handler);
[[noreturn]] void reportAllocationFailure(uint64_t bytes, AllocationSite site);

/// The lowest memory limit in bytes of the control groups that
/// `selfCgroup` (the text of /proc/self/cgroup: "id:controllers:path"
/// lines) places the process in, and of every group above them, read under
/// `cgroupRoot`: cgroup v2's `<root><path>/memory.max` for the "0::path"
/// line, v1's `<root>/memory<path>/memory.limit_in_bytes` for the line
/// whose controllers include "memory". "max", a value of 2^62 or more
/// (v1's "unlimited"), 0, and a missing or unreadable file are no limit;
/// a group outside the process's cgroup namespace ("/../…") or removed
/// ("… (deleted)") is not read.
/// UINT64_MAX where there is none.
uint64_t cgroupMemoryLimit(const std::string &cgroupRoot,
                           const std::string &selfCgroup);

} // namespace gaccrt

#endif // GACC_RUNTIME_HOSTMEMORY_H
