//===- CpuThreads.cpp - the CPU step's threads ----------------------------===//
//
// libomp opened at run time (dlopen), its GOMP_parallel entry point (the
// one GCC's `#pragma omp parallel` calls) running the runtime's own
// parallel work on the team the JIT's loops use.
//
//===----------------------------------------------------------------------===//

#include "runtime/CpuThreads.h"
#include "runtime/Symbols.h"

#include <cblas.h>

#include <algorithm>
#include <sched.h>
#include <unistd.h>

namespace {

using GompParallel = void (*)(void (*)(void *), void *, unsigned, unsigned);
using OmpInt = int (*)();

struct Team {
  int threads = 1;
  GompParallel parallel = nullptr;
  OmpInt threadNum = nullptr;
  OmpInt numThreads = nullptr;
  OmpInt inParallel = nullptr;
  OmpInt threadLimit = nullptr;
};

Team &team() {
  static Team t;
  return t;
}

struct Tasks {
  int64_t n;
  void (*body)(void *, int64_t);
  void *ctx;
};

void runShare(void *data) {
  auto *tasks = static_cast<Tasks *>(data);
  const Team &t = team();
  int64_t stride = std::max(t.numThreads(), 1);
  for (int64_t i = t.threadNum(); i < tasks->n; i += stride)
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

int gaccrt::defaultCpuThreads(int cpus, int machineCpus, int localRanks) {
  int share = std::max(machineCpus, 1) / std::max(localRanks, 1);
  return std::max(std::min(cpus, share), 1);
}

int gaccrt::defaultCpuThreads(int localRanks) {
  return defaultCpuThreads(availableCpus(),
                           static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
                           localRanks);
}

std::string gaccrt::setCpuThreads(int threads) {
  Team &t = team();
  t.threads = 1;
  if (threads <= 1) {
    openblas_set_num_threads(1);
    return "";
  }
  void *omp = dlopen("libomp.so.5", RTLD_NOW | RTLD_GLOBAL);
  if (!omp)
    return std::string("cannot open LLVM's OpenMP runtime: ") + dlerror();
  if (!loadSymbol(omp, t.parallel, "GOMP_parallel") ||
      !loadSymbol(omp, t.threadNum, "omp_get_thread_num") ||
      !loadSymbol(omp, t.numThreads, "omp_get_num_threads") ||
      !loadSymbol(omp, t.inParallel, "omp_in_parallel") ||
      !loadSymbol(omp, t.threadLimit, "omp_get_thread_limit") ||
      !dlsym(omp, "__kmpc_fork_call"))
    return "libomp.so.5 lacks GOMP_parallel, omp_get_thread_num, "
           "omp_get_num_threads, omp_in_parallel, omp_get_thread_limit or "
           "__kmpc_fork_call";
  // OMP_THREAD_LIMIT caps every team libomp forms.
  t.threads = std::max(std::min(threads, t.threadLimit()), 1);
  openblas_set_num_threads(1);
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
  Tasks tasks{n, body, ctx};
  t.parallel(runShare, &tasks,
             static_cast<unsigned>(std::min<int64_t>(n, t.threads)), 0);
}
