//===- CpuThreads.h - the CPU step's threads ------------------------------===//
//
// The team of threads the CPU step runs on: the OpenMP runtime of LLVM
// (libomp, opened at run time) that the JIT's parallel loops call through
// __kmpc_fork_call (upstream convert-scf-to-openmp), and that also runs
// the runtime's GEMMs split into one slab per thread. OpenBLAS then runs
// single-threaded, so that only one team of threads exists and waits.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CPUTHREADS_H
#define GACC_RUNTIME_CPUTHREADS_H

#include <cstdint>
#include <string>

namespace gaccrt {

/// The CPUs this process may run on (sched_getaffinity), at least 1.
int availableCpus();

/// The default team size of a process that is one of `localRanks` ranks
/// of a job on this machine: the CPUs it may run on, shared among the
/// local ranks unless the launcher bound it to fewer CPUs than the
/// machine has (then they are its own). At least 1.
int defaultCpuThreads(int localRanks);

/// Runs the CPU step on `threads` (>= 1) threads. Above 1 it opens libomp
/// (libomp.so.5) with RTLD_GLOBAL, so that compiled code's __kmpc_* calls
/// resolve against it. OpenBLAS is set to one thread either way. Call it
/// before the step is JIT-compiled. Returns the error ("" on success):
/// libomp missing or without the entry points used; the team then stays
/// one thread.
std::string setCpuThreads(int threads);

/// The threads set by setCpuThreads (1 before any call).
int cpuThreads();

/// The kernel set OpenBLAS runs ("Haswell", "Cooperlake", ...: its core
/// name, which OPENBLAS_CORETYPE overrides).
std::string blasKernels();

/// Calls body(ctx, i) for every i in [0, n) on the team, task i on thread
/// i mod min(n, cpuThreads()) (the caller is thread 0); serially when the
/// team is one thread, n is 1, or the caller is already inside a
/// parallel region of the team. Returns when every task has.
void parallelFor(int64_t n, void (*body)(void *ctx, int64_t i), void *ctx);

} // namespace gaccrt

#endif // GACC_RUNTIME_CPUTHREADS_H
