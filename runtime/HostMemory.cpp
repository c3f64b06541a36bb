//===- HostMemory.cpp - the memory this process may use -------------------===//
//
// Physical memory from sysconf, container limits from the cgroup files
// (Linux's cgroup v1 and v2 interfaces, Documentation/admin-guide/cgroup-
// v2.rst and cgroup-v1/memory.rst), the address-space limit from
// getrlimit; the allocation-failure handler.
//
//===----------------------------------------------------------------------===//

#include "runtime/HostMemory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

using namespace gaccrt;

namespace {

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

/// The limit a cgroup file states, kNoLimit for "max", a value of 2^62 or
/// more (v1 writes "unlimited" as the largest page-aligned int64), 0, or a
/// file that is missing or does not hold a number.
uint64_t readLimit(const std::string &file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text.empty() ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return kNoLimit;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  return errno || v == 0 || v >= (1ull << 62) ? kNoLimit : uint64_t(v);
}

/// The lowest limit in `name` files of the group `dir` + `path` and of
/// every group above it up to `dir` itself.
uint64_t lowestUpward(const std::string &dir, std::string path,
                      const std::string &name) {
  uint64_t lowest = kNoLimit;
  while (true) {
    while (path.size() > 1 && path.back() == '/')
      path.pop_back();
    std::string group = path == "/" ? dir : dir + path;
    lowest = std::min(lowest, readLimit(group + "/" + name));
    size_t slash = path.rfind('/');
    if (path == "/" || path.empty() || slash == std::string::npos)
      return lowest;
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

/// Whether the comma-separated `controllers` include "memory".
bool hasMemoryController(const std::string &controllers) {
  std::stringstream list(controllers);
  std::string c;
  while (std::getline(list, c, ','))
    if (c == "memory")
      return true;
  return false;
}

} // namespace

uint64_t gaccrt::cgroupMemoryLimit(const std::string &cgroupRoot,
                                   const std::string &selfCgroup) {
  uint64_t lowest = kNoLimit;
  std::stringstream lines(selfCgroup);
  std::string line;
  while (std::getline(lines, line)) {
    size_t first = line.find(':');
    size_t second =
        first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos)
      continue;
    std::string id = line.substr(0, first);
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    // A group outside this cgroup namespace ("/../…") or removed
    // ("… (deleted)") has no files under the mount to read.
    if (path.empty() || path[0] != '/' ||
        path.find("/..") != std::string::npos ||
        (path.size() >= 10 &&
         path.compare(path.size() - 10, 10, " (deleted)") == 0))
      continue;
    if (id == "0" && controllers.empty())
      lowest = std::min(lowest, lowestUpward(cgroupRoot, path, "memory.max"));
    else if (hasMemoryController(controllers))
      lowest = std::min(lowest, lowestUpward(cgroupRoot + "/memory", path,
                                             "memory.limit_in_bytes"));
  }
  return lowest;
}

uint64_t gaccrt::hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  uint64_t physical =
      pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : kNoLimit;
  std::ifstream in("/proc/self/cgroup");
  std::stringstream self;
  self << in.rdbuf();
  uint64_t limit =
      std::min(physical, cgroupMemoryLimit("/sys/fs/cgroup", self.str()));
  return limit == kNoLimit ? 0 : limit;
}

uint64_t gaccrt::addressSpaceLimitBytes() {
  rlimit addressSpace;
  if (getrlimit(RLIMIT_AS, &addressSpace) != 0 ||
      addressSpace.rlim_cur == RLIM_INFINITY)
    return 0;
  return addressSpace.rlim_cur;
}

std::string gaccrt::hostOutOfMemoryCause() {
  uint64_t limit = addressSpaceLimitBytes();
  if (!limit)
    return "out of memory";
  char text[128];
  std::snprintf(text, sizeof(text),
                "out of memory (the address space is limited to %.2f GB: "
                "ulimit -v)",
                limit / 1e9);
  return text;
}

static void defaultAllocationFailure(uint64_t bytes, AllocationSite site) {
  std::fprintf(stderr, "error: cannot allocate %.2f GB of %s memory\n",
               bytes / 1e9,
               site == AllocationSite::DeviceStepBuffer ? "device" : "host");
  std::_Exit(2);
}

static AllocationFailureHandler allocationFailure = defaultAllocationFailure;

void gaccrt::setAllocationFailureHandler(AllocationFailureHandler handler) {
  allocationFailure = handler ? handler : defaultAllocationFailure;
}

void gaccrt::reportAllocationFailure(uint64_t bytes, AllocationSite site) {
  allocationFailure(bytes, site);
  std::_Exit(2); // a handler that returns has nowhere to go back to
}
