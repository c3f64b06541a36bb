//===- StepArena.cpp - the memory of a CPU step's transient buffers -------===//
//
// One anonymous mapping per thread, replaced by a larger one when a
// function asks for more. Its pages become resident as the step first
// touches them and stay so: later steps fault nothing in.
//
//===----------------------------------------------------------------------===//

#include "runtime/StepArena.h"
#include "runtime/HostMemory.h"

#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

struct Arena {
  void *base = nullptr;
  uint64_t bytes = 0;
  ~Arena() {
    if (base)
      munmap(base, bytes);
  }
};
thread_local Arena arena;

uint64_t pageBytes() { return uint64_t(sysconf(_SC_PAGESIZE)); }

} // namespace

void *gaccrt::reserveStepArena(uint64_t bytes) {
  if (bytes <= arena.bytes && arena.base)
    return arena.base;
  uint64_t page = pageBytes();
  uint64_t mapped = (bytes + page - 1) / page * page;
  if (mapped == 0)
    mapped = page;
  // The mapping reserves nothing (MAP_NORESERVE): an arena larger than
  // the memory this process may use (the machine's, or its container's)
  // would map, then end in the out-of-memory killer as the step touches
  // it. Refuse it here, where it can be reported.
  uint64_t memory = hostMemoryBytes();
  if (memory && mapped > memory)
    return nullptr;
  void *p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  if (arena.base)
    munmap(arena.base, arena.bytes);
  arena.base = p;
  arena.bytes = mapped;
  return p;
}

uint64_t gaccrt::stepArenaBytes() { return arena.base ? arena.bytes : 0; }

uint64_t gaccrt::stepArenaResidentBytes() {
  if (!arena.base)
    return 0;
  uint64_t page = pageBytes();
  std::vector<unsigned char> resident(arena.bytes / page);
  if (mincore(arena.base, arena.bytes, resident.data()) != 0)
    return 0;
  uint64_t pages = 0;
  for (unsigned char r : resident)
    pages += r & 1;
  return pages * page;
}

extern "C" void
_mlir_ciface_gacc_step_arena(gaccrt::ByteBufferDescriptor *result,
                             int64_t bytes) {
  void *p = gaccrt::reserveStepArena(uint64_t(bytes));
  if (!p) {
    std::fprintf(stderr,
                 "error: the compiled step cannot map %.2f GB of host "
                 "memory for its step arena\n",
                 double(bytes) / 1e9);
    std::_Exit(2);
  }
  auto *base = static_cast<int8_t *>(p);
  *result = {base, base, 0, bytes, 1};
}
