//===- CpuThreads.cpp - the CPU step's threads ----------------------------===//
//
// libomp opened at run time (dlopen), its GOMP_parallel entry point (the
// one GCC's `#pragma omp parallel` calls) running the runtime's own
// parallel work on the team the JIT's loops use.
//
//===----------------------------------------------------------------------===//

#include "runtime/CpuThreads.h"

#include <cblas.h>

#include <algorithm>
#include <dlfcn.h>
#include <sched.h>
#include <thread>

namespace {

using GompParallel = void (*)(void (*)(void *), void *, unsigned, unsigned);
using OmpInt = int (*)();

struct Team {
  int threads = 1;
  GompParallel parallel = nullptr;
  OmpInt threadNum = nullptr;
  OmpInt inParallel = nullptr;
};

Team &team() {
  static Team t;
  return t;
}

struct Tasks {
  int64_t n;
  int threads;
  void (*body)(void *, int64_t);
  void *ctx;
};

void runShare(void *data) {
  auto *tasks = static_cast<Tasks *>(data);
  for (int64_t i = team().threadNum(); i < tasks->n; i += tasks->threads)
    tasks->body(tasks->ctx, i);
}

} // namespace

int gaccrt::availableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return 1;
  int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

int gaccrt::defaultCpuThreads(int localRanks) {
  int cpus = availableCpus();
  int machine = static_cast<int>(std::thread::hardware_concurrency());
  // Bound by the launcher to part of the machine: those CPUs are ours.
  if (localRanks > 1 && cpus >= machine)
    cpus /= localRanks;
  return std::max(cpus, 1);
}

std::string gaccrt::setCpuThreads(int threads) {
  Team &t = team();
  openblas_set_num_threads(1);
  t.threads = 1;
  if (threads <= 1)
    return "";
  void *omp = nullptr;
  for (const char *name : {"libomp.so.5", "libomp.so"})
    if ((omp = dlopen(name, RTLD_NOW | RTLD_GLOBAL)))
      break;
  if (!omp)
    return "cannot open LLVM's OpenMP runtime (libomp.so.5) for " +
           std::to_string(threads) + " CPU threads: " + dlerror();
  t.parallel = reinterpret_cast<GompParallel>(dlsym(omp, "GOMP_parallel"));
  t.threadNum = reinterpret_cast<OmpInt>(dlsym(omp, "omp_get_thread_num"));
  t.inParallel = reinterpret_cast<OmpInt>(dlsym(omp, "omp_in_parallel"));
  if (!t.parallel || !t.threadNum || !t.inParallel ||
      !dlsym(omp, "__kmpc_fork_call"))
    return "libomp.so.5 lacks GOMP_parallel, omp_get_thread_num, "
           "omp_in_parallel or __kmpc_fork_call";
  t.threads = threads;
  return "";
}

int gaccrt::cpuThreads() { return team().threads; }

std::string gaccrt::blasKernels() {
  const char *name = openblas_get_corename();
  return name ? name : "unknown";
}

void gaccrt::parallelFor(int64_t n, void (*body)(void *, int64_t),
                         void *ctx) {
  Team &t = team();
  if (t.threads <= 1 || n <= 1 || t.inParallel()) {
    for (int64_t i = 0; i < n; ++i)
      body(ctx, i);
    return;
  }
  Tasks tasks{n, static_cast<int>(std::min<int64_t>(n, t.threads)), body,
              ctx};
  t.parallel(runShare, &tasks, static_cast<unsigned>(tasks.threads), 0);
}
