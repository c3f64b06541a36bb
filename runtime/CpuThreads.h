//===- CpuThreads.h - the CPU step's threads ------------------------------===//
//
// The team of threads the CPU step runs on: the OpenMP runtime of LLVM
// (libomp, opened at run time) that the JIT's parallel loops call through
// __kmpc_fork_call (upstream convert-scf-to-openmp), and that also runs
// the runtime's GEMMs split into one slab per thread. OpenBLAS then runs
// its calls on one thread, so that only the team's threads compute.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CPUTHREADS_H
#define GACC_RUNTIME_CPUTHREADS_H

#include <cstdint>
#include <string>

namespace gaccrt {

/// The CPUs this process may run on (sched_getaffinity), at least 1.
int availableCpus();

/// The default team size of one of `localRanks` ranks of a job on a
/// machine of `machineCpus` online CPUs, of which this process may run on
/// `cpus`: its share of the machine, min(cpus, machineCpus / localRanks),
/// at least 1. (A rank bound to its own cores keeps them; ranks that share
/// an affinity set, bound to a socket or a container's CPUs, share them.)
int defaultCpuThreads(int cpus, int machineCpus, int localRanks);
/// The same for this process (availableCpus(), the online CPUs).
int defaultCpuThreads(int localRanks);

/// Runs the CPU step on `threads` (>= 1) threads, at most the
/// OMP_THREAD_LIMIT libomp enforces. Above 1 it opens libomp
/// (libomp.so.5) with RTLD_GLOBAL, so that compiled code's __kmpc_* calls
/// resolve against it. Once the team exists, or for one thread, OpenBLAS
/// runs its calls on one thread. Call it before the step is JIT-compiled.
/// Returns the error ("" on success): libomp missing or without the entry
/// points used; the team then stays one thread and OpenBLAS as it was.
std::string setCpuThreads(int threads);

/// The threads set by setCpuThreads (1 before any call).
int cpuThreads();

/// The kernel set OpenBLAS runs ("Haswell", "Cooperlake", ...: its core
/// name, which OPENBLAS_CORETYPE overrides).
std::string blasKernels();

/// Calls body(ctx, i) for every i in [0, n) on the team, thread t of the
/// T threads the region really gets (libomp may give fewer than asked:
/// OMP_THREAD_LIMIT, an inactive nested region) running i = t, t + T, ...
/// (the caller is thread 0); serially when the team is one thread, n is 1,
/// or the caller is already inside an active parallel region. Returns when
/// every task has.
void parallelFor(int64_t n, void (*body)(void *ctx, int64_t i), void *ctx);

} // namespace gaccrt

#endif // GACC_RUNTIME_CPUTHREADS_H
