//===- Collectives.h - data-parallel collectives over MPI -------*- C++ -*-===//
//
// The process group of a data-parallel job (MPI_COMM_WORLD when gacc-run is
// launched by mpirun or with --data-parallel) and the collective that
// compiled data-parallel steps call: gacc_all_reduce_sum_f32, lowered from
// gacc.all_reduce by convert-gacc-to-runtime.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_COLLECTIVES_H
#define GACC_RUNTIME_COLLECTIVES_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

extern "C" {
/// Sums the strided fp32 buffer over the ranks, in place (one
/// MPI_Allreduce with MPI_SUM; buffers over 2^31 − 1 elements go in
/// chunks). The identity on a single process. Counts one collective.
void gacc_all_reduce_sum_f32(float *allocated, float *aligned, int64_t offset,
                             int64_t size, int64_t stride);
}

namespace gaccrt::collectives {

/// Whether this process was started by mpirun/mpiexec (OpenMPI, or a PMI
/// or PMIx launcher).
bool launchedByMpirun();
/// This process's rank and the job's size as the launcher announces them
/// (before MPI_Init; 0 and 1 when not launched by mpirun).
int launcherRank();
int launcherSize();
/// The ranks of the job on this machine as the launcher announces them
/// (the job's size when it does not; 1 when not launched by mpirun).
int launcherLocalSize();
/// Initializes MPI once (MPI_Init; errors are fatal to the whole job). On a
/// failure returns the reason, and the process stays single.
std::string initialize();
/// Whether MPI is initialized (a data-parallel job, possibly of one rank).
bool active();
int rank();
int size();
/// Ends the whole job (every rank) with `code`: MPI_Abort when active,
/// exit otherwise.
[[noreturn]] void abortJob(int code);
/// MPI_Finalize when active.
void finalize();
/// Collectives performed by compiled steps (gacc_all_reduce_sum_f32 calls)
/// since the start of the process.
uint64_t count();
/// MPI_Barrier when active.
void barrier();
/// One value from every rank (MPI_Allgather), in rank order.
std::vector<uint64_t> allGather(uint64_t value);
/// Where the ranks' values first differ from rank 0's: the lowest index
/// any rank differs at, and the lowest rank that differs there.
struct RankDifference {
  size_t index;
  int rank;
};
/// The first difference of the ranks' `values` from rank 0's, with one
/// MPI_Allgather that every rank calls with as many values (the same facts
/// in the same order: a rank with fewer would make MPI abort the job);
/// std::nullopt where every rank holds rank 0's values (always in a single
/// process).
std::optional<RankDifference>
firstDifference(const std::vector<uint64_t> &values);
/// Sums `n` host floats over the ranks, in place, over MPI (never NCCL: a
/// host buffer; not counted among the compiled steps' collectives). The
/// identity on a single process.
void allReduceHost(float *data, int64_t n);
/// Makes gacc_all_reduce_sum_f32 use NCCL (libnccl.so.2, opened now) on
/// device-visible buffers: rank 0's ncclUniqueId is broadcast over MPI and
/// every rank joins with ncclCommInitRank on the current CUDA context. A
/// bootstrap that has not finished after `timeoutSeconds` ends the whole
/// job (MPI_Abort) with a message instead of hanging. Returns "" or the
/// reason NCCL cannot be used.
std::string useNccl(int timeoutSeconds = 120);
/// Whether the collective runs on NCCL.
bool ncclActive();

} // namespace gaccrt::collectives

#endif // GACC_RUNTIME_COLLECTIVES_H
