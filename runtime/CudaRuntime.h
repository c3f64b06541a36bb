//===- CudaRuntime.h - the mgpu* launch ABI over the driver API -*- C++ -*-===//
//
// The functions that MLIR's gpu-to-llvm lowering makes host code call (module
// load, kernel lookup, launch, streams), implemented over the CUDA driver
// opened at run time (CudaDriver.h); LLVM 22 ships no
// libmlir_cuda_runtime.so for them. A JIT of NVVM-pipeline output binds
// these symbols (registerCudaRuntimeSymbols). Driver errors are reported on
// stderr and remembered: lastError() returns and clears the first.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CUDARUNTIME_H
#define GACC_RUNTIME_CUDARUNTIME_H

#include "runtime/Runtime.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

extern "C" {
void *mgpuModuleLoad(void *data, uint64_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *stream);
void mgpuStreamDestroy(void *stream);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, uint64_t paramCount);
/// Waits until the process's stream has run everything queued on it (the
/// synchronization gacc-async-launches inserts before host code touches
/// memory, and before a function returns). Nothing while this thread
/// captures the stream into a CUDA graph (cuda::capturing()).
void gacc_cuda_synchronize();
}

namespace gaccrt::cublaslt {
class GemmPlans;
} // namespace gaccrt::cublaslt

namespace gaccrt::cuda {
/// The first driver error since the last call ("" when none), cleared.
std::string lastError();
/// Reports a failure that is not a driver error code (a GEMM library's
/// status, a kernel refused) on stderr and remembers it for lastError().
void recordFailure(const std::string &message);
/// The process's one stream (created on first use; null without a
/// driver): mgpuStreamCreate returns it, and cuBLAS queues on it.
void *processStream();
/// With GACC_CUDA_PROFILE=1 set: profileBegin records an event before the
/// work `name` queues on the stream and returns a token for profileEnd,
/// which records one after it (null and nothing without the variable);
/// printProfile waits for the events and prints per name the time between
/// them on the stream and the host's time between the two calls (the 15
/// largest), then forgets them.
void *profileBegin(const char *name);
void profileEnd(void *token);
void printProfile(std::FILE *out);
} // namespace gaccrt::cuda



// --- Memory of the cuda target and cuBLAS ---------------------------------

extern "C" {
/// malloc/free of JIT-compiled host code on the cuda target: blocks of the
/// managed-memory arena, so that kernels, cuBLAS and the host code's own
/// scalar reads all see them. Null when the arena is exhausted.
void *gacc_cuda_malloc(uint64_t bytes);
void gacc_cuda_free(void *pointer);

/// C = beta·C + op(A)·op(B) on row-major fp32 device memory through
/// cublasSgemm (column-major: computes Cᵀ = op(B)ᵀ·op(A)ᵀ); the same
/// descriptor ABI as gacc_sgemm. Inner strides must be 1. Queued on the
/// process's stream after the kernels launched before it; returns without
/// waiting for it.
void gacc_cublas_sgemm(float *aAlloc, float *aAligned, int64_t aOff,
                       int64_t aS0, int64_t aS1, int64_t aSt0, int64_t aSt1,
                       float *bAlloc, float *bAligned, int64_t bOff,
                       int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1,
                       float *cAlloc, float *cAligned, int64_t cOff,
                       int64_t cS0, int64_t cS1, int64_t cSt0, int64_t cSt1,
                       int32_t transA, int32_t transB, float beta);

/// The same through cuBLASLt (cublasLtMatmul): the matmul descriptor,
/// layouts and algorithm are chosen on a shape's first call and reused
/// (runtime/CublasLt.h). `inputs` (abi::GemmInputs) says what A and B
/// hold: fp32 values (fp32 compute), or bf16 / fp16 values, which run on
/// tensor cores (CUBLAS_COMPUTE_32F_FAST_16BF / _16F) with fp32 sums. A
/// failure, or an unknown `inputs`, is recorded (cuda::recordFailure) and
/// the call returns without queuing the GEMM.
void gacc_cublaslt_sgemm(float *aAlloc, float *aAligned, int64_t aOff,
                         int64_t aS0, int64_t aS1, int64_t aSt0, int64_t aSt1,
                         float *bAlloc, float *bAligned, int64_t bOff,
                         int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1,
                         float *cAlloc, float *cAligned, int64_t cOff,
                         int64_t cS0, int64_t cS1, int64_t cSt0, int64_t cSt1,
                         int32_t transA, int32_t transB, float beta,
                         int32_t inputs);

/// C = beta·C + op(A)·op(B) + bias broadcast over C's rows (bias[j] added
/// to column j; a linear layer's y = x·Wᵀ + b), followed by max(·, 0) when
/// `epilogue` (abi::GemmEpilogue) is reluBias: one cublasLtMatmul with
/// cuBLASLt's BIAS or RELU_BIAS epilogue, planned once per shape as
/// gacc_cublaslt_sgemm's. `bias` is a packed fp32 vector of C's column
/// count. A mismatched bias, an unknown `epilogue` or `inputs`, or a
/// failed call is recorded (cuda::recordFailure) and nothing is queued.
void gacc_cublaslt_sgemm_epilogue(
    float *aAlloc, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, float *bAlloc, float *bAligned, int64_t bOff,
    int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1, float *cAlloc,
    float *cAligned, int64_t cOff, int64_t cS0, int64_t cS1, int64_t cSt0,
    int64_t cSt1, float *biasAlloc, float *biasAligned, int64_t biasOff,
    int64_t biasS0, int64_t biasSt0, int32_t transA, int32_t transB, float beta,
    int32_t inputs, int32_t epilogue);

/// X = beta·Y + op(A)·op(B) + bias (per column) and Y = GELU(X), the tanh
/// approximation: one cublasLtMatmul with cuBLASLt's GELU_AUX_BIAS
/// epilogue (abi::kCublasLtSgemmGeluBias), planned as
/// gacc_cublaslt_sgemm_epilogue's. Y (the memref after B) and X are fp32
/// [m, n] with unit inner strides, X's row stride a multiple of 8; `bias`
/// a packed fp32 vector of n. Anything else, or a failed call, is recorded
/// (cuda::recordFailure) and nothing is queued.
void gacc_cublaslt_sgemm_gelu_bias(
    float *aAlloc, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, float *bAlloc, float *bAligned, int64_t bOff,
    int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1, float *yAlloc,
    float *yAligned, int64_t yOff, int64_t yS0, int64_t yS1, int64_t ySt0,
    int64_t ySt1, float *biasAlloc, float *biasAligned, int64_t biasOff,
    int64_t biasS0, int64_t biasSt0, float *xAlloc, float *xAligned,
    int64_t xOff, int64_t xS0, int64_t xS1, int64_t xSt0, int64_t xSt1,
    int32_t transA, int32_t transB, float beta, int32_t inputs);

/// Y = (beta·Y + op(A)·op(B)) · GELU'(X) elementwise: one cublasLtMatmul
/// with cuBLASLt's DGELU epilogue (abi::kCublasLtSgemmGeluGrad). Shapes,
/// strides and errors as gacc_cublaslt_sgemm_gelu_bias's, without a bias.
void gacc_cublaslt_sgemm_gelu_grad(
    float *aAlloc, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, float *bAlloc, float *bAligned, int64_t bOff,
    int64_t bS0, int64_t bS1, int64_t bSt0, int64_t bSt1, float *yAlloc,
    float *yAligned, int64_t yOff, int64_t yS0, int64_t yS1, int64_t ySt0,
    int64_t ySt1, float *xAlloc, float *xAligned, int64_t xOff, int64_t xS0,
    int64_t xS1, int64_t xSt0, int64_t xSt1, int32_t transA, int32_t transB,
    float beta, int32_t inputs);

/// C[b] = beta·C[b] + op(A[b])·op(B[b]) for each b of rank-3 memrefs (a
/// linalg.batch_matmul), as one strided batched cublasLtMatmul: inner
/// strides 1, the batch stride of each operand its outermost stride.
void gacc_cublaslt_sgemm_batched(
    float *aAlloc, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aS2, int64_t aSt0, int64_t aSt1, int64_t aSt2, float *bAlloc,
    float *bAligned, int64_t bOff, int64_t bS0, int64_t bS1, int64_t bS2,
    int64_t bSt0, int64_t bSt1, int64_t bSt2, float *cAlloc, float *cAligned,
    int64_t cOff, int64_t cS0, int64_t cS1, int64_t cS2, int64_t cSt0,
    int64_t cSt1, int64_t cSt2, int32_t transA, int32_t transB, float beta,
    int32_t inputs);

/// gacc_cublas_sgemm, gacc_cublaslt_sgemm and gacc_cublaslt_sgemm_batched
/// for bf16 (_bf16) or fp16 (_f16) A and B, C fp32 (abi::lowOperandsGemm,
/// a narrowed step's products): cublasGemmEx or cublasLtMatmul with those
/// operand types and fp32 compute (no `inputs`: the operands' type says
/// it). The declaring macros are Runtime.h's.
GACC_DECLARE_LOW_OPERANDS_GEMM(gacc_cublas_sgemm_bf16)
GACC_DECLARE_LOW_OPERANDS_GEMM(gacc_cublas_sgemm_f16)
GACC_DECLARE_LOW_OPERANDS_GEMM(gacc_cublaslt_sgemm_bf16)
GACC_DECLARE_LOW_OPERANDS_GEMM(gacc_cublaslt_sgemm_f16)
GACC_DECLARE_LOW_OPERANDS_GEMM_BATCHED(gacc_cublaslt_sgemm_batched_bf16)
GACC_DECLARE_LOW_OPERANDS_GEMM_BATCHED(gacc_cublaslt_sgemm_batched_f16)

/// gacc_cublaslt_sgemm_epilogue for bf16 A, B, C and bias (a narrowed
/// step's linear layer writing its rounded output): the sum and the ReLU in
/// fp32, C rounded once to bf16 (no `inputs`).
void gacc_cublaslt_sgemm_epilogue_bf16(
    uint16_t *aAlloc, uint16_t *aAligned, int64_t aOff, int64_t aS0,
    int64_t aS1, int64_t aSt0, int64_t aSt1, uint16_t *bAlloc,
    uint16_t *bAligned, int64_t bOff, int64_t bS0, int64_t bS1, int64_t bSt0,
    int64_t bSt1, uint16_t *cAlloc, uint16_t *cAligned, int64_t cOff,
    int64_t cS0, int64_t cS1, int64_t cSt0, int64_t cSt1, uint16_t *biasAlloc,
    uint16_t *biasAligned, int64_t biasOff, int64_t biasS0, int64_t biasSt0,
    int32_t transA, int32_t transB, float beta, int32_t epilogue);
}

namespace gaccrt::cuda {
/// Reserves `bytes` of managed memory (cuMemAllocManaged) as the arena that
/// gacc_cuda_malloc carves, and a 1 MiB pool for blocks of at most 8 bytes
/// (rank-0 values the host reads) that prefers host memory mapped for the
/// device. Returns "" or the reason it failed.
std::string reserveManagedArena(uint64_t bytes);
/// Device memory at the most: the arena's peak plus the scalar pool, the
/// host-written buffers and the GEMM libraries' workspaces (reserved
/// whole); and the arena's reservation.
uint64_t managedPeakBytes();
uint64_t managedCapacityBytes();
/// Managed memory for a buffer the host fills before every step (the
/// window's inputs, copied in with copyToDevice): a cuMemAllocManaged
/// range of its own, outside the arena, so that whatever the host does
/// with it (the eager step's host code may read it) migrates no page of
/// the device's own buffers. Its bytes count in managedPeakBytes. Null, with
/// the reason recorded (lastError), when the driver refuses it.
void *mallocHostWritten(uint64_t bytes);
/// Managed memory for a small buffer the host reads or writes between
/// steps (the graph step's results and scalars, the arena update's count
/// and flag): a block of the scalar pool, whose preferred location is host
/// memory mapped for the device, whatever its size (the pool is
/// kDeviceScalarPoolBytes). A block of the arena instead would share pages
/// with the device's own buffers, and each host access would migrate them
/// to host memory for the next kernels to fault back. Null, with the reason
/// recorded (lastError), when the pool is full or there is no arena;
/// gacc_cuda_free takes it back.
void *mallocHostShared(uint64_t bytes);
/// Queues a copy of `bytes` from host memory `src` into device-visible
/// memory `dst` (device or managed) on the process's stream
/// (cuMemcpyHtoDAsync): the copy engine writes the pages where they are,
/// so managed pages on the device stay there, where a host write would
/// fault each one back to host memory for the next kernel to fault in
/// again. A pageable `src` (the runtime's host tensors) may be reused on
/// return, as the driver stages it before returning; a pinned one only
/// after the stream has run the copy. A failure is recorded (lastError).
void copyToDevice(void *dst, const void *src, uint64_t bytes);
/// Queues the migration of managed memory [p, p + bytes) to the device on
/// the process's stream, so that the kernels after it do not fault it in
/// page by page (nothing where the driver cannot prefetch).
void prefetchToDevice(const void *p, uint64_t bytes);
/// The transient device memory a captured CUDA graph replays. Between
/// beginRecordingAllocations and leaseRecordedAllocations every block
/// gacc_cuda_malloc hands out is noted; the lease then holds the union of
/// those ranges (free again once the captured host code has returned) as
/// blocks of their pools until releaseLease, so that no later allocation
/// reuses memory the graph's kernels write. Returns "" or the reason (a
/// range still in use: a block the captured code did not free); what was
/// reserved before a failure is in `lease` all the same.
void beginRecordingAllocations();
std::string leaseRecordedAllocations(std::vector<uint64_t> &lease);
void releaseLease(std::vector<uint64_t> &lease);
/// Loads cuBLAS (libcublas.so.13, .12 or .so) and creates its handle.
/// Returns "" or the reason.
std::string loadCublas();
/// Loads cuBLASLt (libcublasLt.so.13, .12 or .so), creates its handle and
/// a 32 MiB workspace of its own. Returns "" or the reason.
std::string loadCublasLt();
/// After cuBLASLt's GEMMs ran: the shapes planned by compute type
/// (GemmPlans::summary), or "" when cuBLASLt was not loaded.
std::string cublasLtSummary();
/// The unit tests' seam: the cuBLASLt plans the gacc_cublaslt_* entry
/// points run on (a GemmPlans over a fake library, or null for none, as
/// before loadCublasLt).
void setCublasLtPlans(std::unique_ptr<cublaslt::GemmPlans> plans);
} // namespace gaccrt::cuda

#endif // GACC_RUNTIME_CUDARUNTIME_H
