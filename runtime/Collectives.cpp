//===- Collectives.cpp - data-parallel collectives over MPI ---------------===//
//
// MPI_COMM_WORLD as the data-parallel group: set-up, abort, and the
// in-place sum that compiled data-parallel steps call once per optimizer
// step: MPI_Allreduce on the CPU target, NCCL (opened at run time,
// bootstrapped over MPI) on the cuda target.
//
//===----------------------------------------------------------------------===//

#include "runtime/Collectives.h"
#include "runtime/Symbols.h"

// The C bindings only (OpenMPI otherwise pulls in its C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {
std::atomic<uint64_t> collectivesPerformed{0};
bool initializedHere = false;

bool mpiActive() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

/// NCCL, declared here (nccl.h 2.x ABI) so that building needs no NCCL.
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = struct ncclComm *;
struct Nccl {
  int (*getUniqueId)(NcclUniqueId *);
  int (*commInitRank)(NcclComm *, int, NcclUniqueId, int);
  int (*allReduce)(const void *, void *, size_t, int, int, NcclComm, void *);
  const char *(*getErrorString)(int);
  int (*ctxSynchronize)(); // cuCtxSynchronize
  NcclComm comm = nullptr;
} nccl;
constexpr int kNcclFloat32 = 7, kNcclSum = 0;

void allReduceNccl(float *data, int64_t n) {
  if (int r = nccl.allReduce(data, data, size_t(n), kNcclFloat32, kNcclSum,
                             nccl.comm, /*default stream=*/nullptr)) {
    std::fprintf(stderr, "gacc-run: error: ncclAllReduce: %s\n",
                 nccl.getErrorString(r));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  nccl.ctxSynchronize();
}

void allReduceContiguous(float *data, int64_t n) {
  while (n > 0) {
    int chunk = int(std::min<int64_t>(n, INT_MAX));
    MPI_Allreduce(MPI_IN_PLACE, data, chunk, MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    data += chunk;
    n -= chunk;
  }
}
} // namespace

extern "C" void gacc_all_reduce_sum_f32(float *, float *aligned,
                                        int64_t offset, int64_t size,
                                        int64_t stride) {
  ++collectivesPerformed;
  if (!mpiActive() || gaccrt::collectives::size() == 1 || size <= 0)
    return;
  float *data = aligned + offset;
  if (nccl.comm && stride == 1) {
    allReduceNccl(data, size);
    return;
  }
  if (stride == 1) {
    allReduceContiguous(data, size);
    return;
  }
  std::vector<float> packed(size);
  for (int64_t i = 0; i < size; ++i)
    packed[i] = data[i * stride];
  allReduceContiguous(packed.data(), size);
  for (int64_t i = 0; i < size; ++i)
    data[i * stride] = packed[i];
}

namespace gaccrt::collectives {

bool launchedByMpirun() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(var))
      return true;
  return false;
}

static int envInt(std::initializer_list<const char *> vars, int fallback) {
  for (const char *var : vars)
    if (const char *v = std::getenv(var))
      return std::atoi(v);
  return fallback;
}

int launcherRank() {
  return envInt({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}, 0);
}

int launcherSize() {
  return envInt({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, 1);
}

int launcherLocalSize() {
  return envInt({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                 "PMI_LOCAL_SIZE"},
                launcherSize());
}

std::string initialize() {
  if (mpiActive())
    return "";
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    return "MPI_Init failed";
  initializedHere = true;
  // A failed collective ends the whole job instead of returning.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return "";
}

bool active() { return mpiActive(); }

int rank() {
  int r = 0;
  if (mpiActive())
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int s = 1;
  if (mpiActive())
    MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

void abortJob(int code) {
  if (mpiActive())
    MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void finalize() {
  if (mpiActive() && initializedHere)
    MPI_Finalize();
}

uint64_t count() { return collectivesPerformed.load(); }

std::string useNccl(int timeoutSeconds) {
  if (nccl.comm)
    return "";
  if (!mpiActive())
    return "NCCL needs the MPI job to bootstrap";
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return "no NCCL (libnccl.so.2 not found)";
  if (!cuda)
    return "no CUDA driver for NCCL";
  loadSymbol(lib, nccl.getUniqueId, "ncclGetUniqueId");
  loadSymbol(lib, nccl.commInitRank, "ncclCommInitRank");
  loadSymbol(lib, nccl.allReduce, "ncclAllReduce");
  loadSymbol(lib, nccl.getErrorString, "ncclGetErrorString");
  loadSymbol(cuda, nccl.ctxSynchronize, "cuCtxSynchronize");
  if (!nccl.getUniqueId || !nccl.commInitRank || !nccl.allReduce ||
      !nccl.getErrorString || !nccl.ctxSynchronize)
    return "libnccl.so.2 lacks the NCCL 2 entry points";
  NcclUniqueId id{};
  if (rank() == 0)
    if (int r = nccl.getUniqueId(&id))
      return std::string("ncclGetUniqueId: ") + nccl.getErrorString(r);
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  // A watchdog ends the job if a rank never joins.
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(timeoutSeconds),
                     [&] { return done; })) {
      std::fprintf(stderr,
                   "gacc-run: error: rank %d: the NCCL bootstrap did not "
                   "finish within %d s\n",
                   rank(), timeoutSeconds);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  });
  int r = nccl.commInitRank(&nccl.comm, size(), id, rank());
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  if (r) {
    nccl.comm = nullptr;
    return std::string("ncclCommInitRank: ") + nccl.getErrorString(r);
  }
  return "";
}

bool ncclActive() { return nccl.comm != nullptr; }

void barrier() {
  if (mpiActive())
    MPI_Barrier(MPI_COMM_WORLD);
}

void allReduceHost(float *data, int64_t n) {
  if (mpiActive() && size() > 1 && n > 0)
    allReduceContiguous(data, n);
}

std::vector<uint64_t> allGather(uint64_t value) {
  if (!mpiActive())
    return {value};
  std::vector<uint64_t> all(size());
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T,
                MPI_COMM_WORLD);
  return all;
}

std::optional<RankDifference>
firstDifference(const std::vector<uint64_t> &values) {
  if (!mpiActive() || size() == 1 || values.empty())
    return std::nullopt;
  size_t n = values.size();
  std::vector<uint64_t> all(n * size_t(size()));
  MPI_Allgather(values.data(), int(n), MPI_UINT64_T, all.data(), int(n),
                MPI_UINT64_T, MPI_COMM_WORLD);
  for (size_t i = 0; i < n; ++i)
    for (int r = 1; r < size(); ++r)
      if (all[size_t(r) * n + i] != all[i])
        return RankDifference{i, r};
  return std::nullopt;
}

} // namespace gaccrt::collectives
