//===- SmallGemm.h - GEMMs of a few rows without packing --------*- C++ -*-===//
//
// C = beta·C + A·op(B) for row-major fp32 matrices with at most
// kSmallGemmMaxRows rows: the shape of a layer's forward (C = X·Wᵀ) and
// data gradient (dX = dY·W) at a small micro-batch. OpenBLAS packs both
// operands on every call, so at m = 8 it copies the whole weight to
// compute 8 rows: 784 × 256 × 8 takes it about 130 µs where streaming the
// weight once through registers takes about 45 µs (one core, AVX2). Wider
// products go to OpenBLAS, whose packing then pays for itself.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_SMALLGEMM_H
#define GACC_RUNTIME_SMALLGEMM_H

#include <cstdint>

namespace gaccrt {

/// The most rows (of A and C) the kernels take. Above it OpenBLAS is as
/// fast or faster on two cores (measured on an AMD EPYC with AVX2:
/// 784 × 256 × 16 in 86 µs against OpenBLAS's 74–125 µs, × 32 in 197
/// against 177 µs).
constexpr int64_t kSmallGemmMaxRows = 8;

/// C[m × n] = beta·C + A[m × k]·Bᵀ with B [n × k] (transposeB) or
/// A[m × k]·B with B [k × n] (not transposeB); leading dimensions in
/// elements, inner strides 1. With beta = 0, C is not read (the BLAS
/// contract). Returns false, touching nothing, where it does not apply:
/// m above kSmallGemmMaxRows, m, n or k of 0, or a CPU without AVX2 and
/// FMA; the caller then uses BLAS. Deterministic: the sum order depends
/// on the shapes only.
bool smallGemm(const float *a, int64_t lda, const float *b, int64_t ldb,
               float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
               bool transposeB, float beta);

} // namespace gaccrt

#endif // GACC_RUNTIME_SMALLGEMM_H
