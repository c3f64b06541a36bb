//===- Blas.h - how the CPU GEMMs split over the team -----------*- C++ -*-===//
//
// The slabs gacc_sgemm (runtime/Runtime.h) splits a product into for the
// CPU team's threads (runtime/CpuThreads.h): one definition that the GEMM
// runs and the unit tests check.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_BLAS_H
#define GACC_RUNTIME_BLAS_H

#include <cstdint>

namespace gaccrt {

/// Products of at least this many multiply-adds split over the team.
constexpr int64_t kParallelGemmMacs = int64_t(1) << 20;

/// C [m, n] += op(A)·op(B) with reduction depth k on `threads` threads:
/// `slabs` slabs of `chunk` rows of C (`splitRows`, when m > n) or of
/// `chunk` columns (whole 16-float, 64-byte, blocks), the last one
/// shorter. One slab when the product is below kParallelGemmMacs or
/// threads is 1.
struct GemmSplit {
  bool splitRows;
  int64_t chunk, slabs;
};
GemmSplit planGemmSplit(int64_t m, int64_t n, int64_t k, int threads);

/// The fp32 value of an IEEE 754 binary16 (fp16) bit pattern: exact for
/// every one (normals, subnormals, zeros, infinities, NaNs).
float halfToFloat(uint16_t h);

/// Bytes the CPU's GEMM workspace holds now: the fp32 copies of bf16 and
/// fp16 factors, kept from one product to the next (one pair per thread
/// that ran such a product). Allocated by the first step and kept, they
/// are the plan's CPU workspace; gacc-run counts them in the measured
/// peak.
uint64_t widenedFactorBytes();

} // namespace gaccrt

#endif // GACC_RUNTIME_BLAS_H
