//===- Collectives.cpp - data-parallel collectives over MPI ---------------===//
//
// MPI_COMM_WORLD as the data-parallel group: set-up, abort, and the
// in-place sum that compiled data-parallel steps call once per optimizer
// step.
//
//===----------------------------------------------------------------------===//

#include "runtime/Collectives.h"

// The C bindings only (OpenMPI otherwise pulls in its C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
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

std::vector<uint64_t> allGather(uint64_t value) {
  if (!mpiActive())
    return {value};
  std::vector<uint64_t> all(size());
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T,
                MPI_COMM_WORLD);
  return all;
}

} // namespace gaccrt::collectives
