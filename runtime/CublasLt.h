//===- CublasLt.h - cuBLASLt GEMMs with plans chosen once -------*- C++ -*-===//
//
// The cuda target's GEMMs through cuBLASLt (libcublasLt, opened at run
// time): the entry points gacc calls, as a table of function pointers, and
// GemmPlans, which creates the matmul descriptor, the three matrix layouts
// and the algorithm (cublasLtMatmulAlgoGetHeuristic's first answer) once
// per GEMM shape and replays them on every later call of that shape: no
// descriptor, layout or heuristic work per call, the host cost that
// cublasSgemm pays on every call. A shape may be a strided batch of
// products (attention's scores and weighted values), and its compute type
// may let cuBLASLt run fp32 operands that hold bf16 or fp16 values on
// tensor cores, and its epilogue may add a bias and apply a ReLU to the
// product as cuBLASLt writes it (a linear layer's forward in one call), or
// apply the tanh GELU keeping its input, or GELU's derivative at a kept
// input (an MLP's forward and backward through the activation). The
// table is a parameter so that the unit tests drive GemmPlans with a fake
// library and check the calls it makes.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CUBLASLT_H
#define GACC_RUNTIME_CUBLASLT_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace gaccrt::cublaslt {

// Enumerators of CUDA 13's cublasLt.h, cublas_api.h and library_types.h
// that gacc passes (checked against the headers by CublasLtTest where the
// toolkit is installed).
/// cublasOperation_t.
constexpr int32_t kOpN = 0, kOpT = 1;
/// cudaDataType_t: fp32, fp16 and bf16 elements.
constexpr int32_t kR32F = 0, kR16F = 2, kR16BF = 14;
/// cublasComputeType_t: fp32 products and sums (no TF32 down-conversion),
/// what cublasSgemm computes; and fp32 sums of products whose inputs
/// cuBLASLt may round to fp16 or bf16 (or TF32) first, on tensor cores.
/// When the fp32 inputs already hold fp16 or bf16 values that rounding is
/// exact: the products are fp32 compute's, only their accumulation (order
/// and rounding, the tensor cores' own) differs.
constexpr int32_t kCompute32F = 68, kCompute32FFast16F = 74,
                  kCompute32FFast16BF = 75;
/// cublasLtMatmulDescAttributes_t: the operands' transposes (int32_t),
/// the epilogue (uint32_t, a cublasLtEpilogue_t), the bias vector's
/// device address (const void *), and the auxiliary matrix's device address
/// (void *) and leading dimension (int64_t, elements).
constexpr int32_t kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7,
                  kDescBiasPointer = 8, kDescEpilogueAuxPointer = 11,
                  kDescEpilogueAuxLd = 12;
/// cublasLtEpilogue_t: none; D = op(A)·op(B) + beta·C + bias, the bias
/// broadcast over D's columns (column-major D: one element per row); that
/// followed by max(x, 0); that followed by GELU (GELU_AUX_BIAS: the sum
/// before the GELU is also written to the auxiliary matrix); and D =
/// (op(A)·op(B) + beta·C) · GELU'(aux) (DGELU: the auxiliary matrix is
/// read). NVIDIA documents no formula for cuBLASLt's GELU; gacc takes it
/// to be the tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x +
/// 0.044715·x³))) (Hendrycks and Gimpel 2016, eq. 2), as llm.c does for
/// GPT-2's GELU, and the GPU parity test (train-cuda-gpt) checks it.
constexpr uint32_t kEpilogueDefault = 1, kEpilogueBias = 4,
                   kEpilogueReluBias = 6, kEpilogueGeluAuxBias = 164,
                   kEpilogueDGelu = 192;
/// The bit of a cublasLtEpilogue_t whose epilogue writes or reads the
/// auxiliary matrix (CUBLASLT_EPILOGUE_GELU_AUX = GELU | 128).
constexpr uint32_t kEpilogueAuxBit = 128;
/// cublasLtMatrixLayoutAttribute_t: the matrices in a batch (int32_t) and
/// the elements from one to the next (int64_t).
constexpr int32_t kLayoutBatchCount = 5, kLayoutStridedBatchOffset = 6;
/// cublasLtMatmulPreferenceAttributes_t: the workspace bound (uint64_t)
/// and the alignments the algorithm may assume of A, B, C and D (uint32_t,
/// bytes; 256 when not set).
constexpr int32_t kPrefMaxWorkspaceBytes = 1, kPrefMinAlignmentA = 5,
                  kPrefMinAlignmentB = 6, kPrefMinAlignmentC = 7,
                  kPrefMinAlignmentD = 8;

using Handle = void *;
using MatmulDesc = void *;
using Layout = void *;
using Preference = void *;

/// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t, field for
/// field.
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
};

/// The cuBLASLt entry points gacc calls; each returns a cublasStatus_t
/// (0 = CUBLAS_STATUS_SUCCESS).
struct Api {
  int (*create)(Handle *);
  int (*matmulDescCreate)(MatmulDesc *, int32_t computeType,
                          int32_t scaleType);
  int (*matmulDescSetAttribute)(MatmulDesc, int32_t attribute,
                                const void *value, size_t bytes);
  int (*matrixLayoutCreate)(Layout *, int32_t type, uint64_t rows,
                            uint64_t cols, int64_t ld);
  int (*matrixLayoutSetAttribute)(Layout, int32_t attribute,
                                  const void *value, size_t bytes);
  int (*preferenceCreate)(Preference *);
  int (*preferenceSetAttribute)(Preference, int32_t attribute,
                                const void *value, size_t bytes);
  int (*algoGetHeuristic)(Handle, MatmulDesc, Layout a, Layout b, Layout c,
                          Layout d, Preference, int requested,
                          HeuristicResult *results, int *returned);
  int (*matmul)(Handle, MatmulDesc, const void *alpha, const void *a,
                Layout, const void *b, Layout, const void *beta,
                const void *c, Layout, void *d, Layout, const Algo *,
                void *workspace, size_t workspaceBytes, void *stream);
  int (*matmulDescDestroy)(MatmulDesc);
  int (*matrixLayoutDestroy)(Layout);
  int (*preferenceDestroy)(Preference);
};

/// Opens libcublasLt.so.13 (or .12, or .so) and fills `api`. Returns "" or
/// the reason (the library or an entry point missing).
std::string loadApi(Api &api);

/// Row-major C[m, n] = beta·C + op(A)·op(B), as gacc's buffers hold it:
/// op(A) is [m, k] (A is [k, m] when transA), op(B) is [k, n] (B is [n, k]
/// when transB); lda, ldb and ldc are the row strides in elements; the
/// element types are cudaDataType_t values (kR32F, kR16BF). With batch > 1,
/// `batch` such products, matrix b of A, B and C starting b·strideA,
/// b·strideB and b·strideC elements after the first. `compute` is the
/// cublasComputeType_t (kCompute32F, or kCompute32FFast16BF/16F for fp32
/// inputs that hold bf16/fp16 values). `epilogue` is kEpilogueDefault, or
/// kEpilogueBias / kEpilogueReluBias: C[i, j] = beta·C[i, j] +
/// (op(A)·op(B))[i, j] + bias[j], then max(·, 0) with the ReLU, with a
/// packed bias of n elements of C's type (row-major C's bias per column is
/// column-major D's per row, what cuBLASLt broadcasts), computed in fp32
/// and rounded once to C's type; one product only, C fp32 or of A's and
/// B's type. kEpilogueGeluAuxBias applies GELU after the bias and writes
/// the sum before it to the row-major auxiliary matrix [m, n] (row stride
/// `ldAux`); kEpilogueDGelu multiplies the product by GELU' of that
/// matrix's elements, with no bias; both take fp32 operands and C, and an
/// `ldAux` that is a multiple of 8 and at least n (cuBLASLt's rule).
struct RowMajorGemm {
  int64_t m, n, k;
  bool transA, transB;
  int64_t lda, ldb, ldc;
  int32_t aType = kR32F, bType = kR32F, cType = kR32F;
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
  int32_t compute = kCompute32F;
  uint32_t epilogue = kEpilogueDefault;
  int64_t ldAux = 0;
};

/// One GEMM shape's descriptor, preference, layouts and algorithm, and
/// the compute type it runs with.
struct GemmPlan {
  MatmulDesc desc = nullptr;
  Preference preference = nullptr;
  Layout a = nullptr, b = nullptr, c = nullptr;
  Algo algo{};
  size_t workspaceBytes = 0;
  int32_t compute = kCompute32F;
  /// The A and B operands' cudaDataType_t.
  int32_t operands = kR32F;
};

/// The plans of one cuBLASLt handle, keyed by shape, transposes, strides,
/// element types and the operands' address alignments (an algorithm
/// chosen for 256-byte aligned operands may not run on a view that starts
/// inside a buffer, so each plan's preference states the alignments its
/// operands have, as PyTorch's cuBLASLt GEMMs do). Not thread-safe (one
/// step runs at a time).
class GemmPlans {
public:
  /// `workspace` (device memory of `workspaceBytes`) bounds every plan's
  /// algorithm and is passed to every matmul; `stream` is a CUstream.
  GemmPlans(const Api &api, Handle handle, void *workspace,
            size_t workspaceBytes, void *stream)
      : api(api), handle(handle), workspace(workspace),
        workspaceBytes(workspaceBytes), stream(stream) {}

  /// Queues C = beta·C + op(A)·op(B) (alpha = 1; each of a batch) on the
  /// stream, then g.epilogue's bias (`bias`, device memory of g.n
  /// elements of C's type), ReLU or GELU, writing or reading the auxiliary
  /// matrix `aux` (device memory of g.m rows of g.ldAux fp32 elements),
  /// planning the shape on its first call. Nothing for an empty C or batch;
  /// K = 0 is refused, and so is an epilogue without its bias or auxiliary
  /// matrix, on a batch, or (GELU's) with a C that is not fp32 or an
  /// auxiliary stride cuBLASLt does not take. A fast compute type for which the
  /// heuristic finds no algorithm is planned with kCompute32F instead (the same
  /// values: the inputs are exact in fp32), and counted. Returns "" or the
  /// failing call and its status.
  std::string run(const RowMajorGemm &g, const void *a, const void *b, void *c,
                  float beta, const void *bias = nullptr, void *aux = nullptr);

  /// How many shapes have been planned.
  size_t size() const { return plans.size(); }
  /// How many plans run with `compute` (a cublasComputeType_t) on
  /// operands of cudaDataType_t `operands`.
  size_t planned(int32_t compute, int32_t operands = kR32F) const;
  /// How many plans asked for a fast compute type and run with
  /// kCompute32F instead.
  size_t fp32Fallbacks() const { return fallbacks; }
  /// One line for the end of a run: the shapes planned by compute and
  /// operand type ("12 GEMM shapes: 8 on bf16 tensor cores, 4 fp32"; bf16
  /// operands count as bf16 tensor cores), and the fallbacks.
  std::string summary() const;

private:
  /// The operands' alignments in bytes (at most 256), in cuBLASLt's order:
  /// its A is gacc's B, its B gacc's A, its C and D gacc's C; and the
  /// bias's and the auxiliary matrix's (the heuristic reads their
  /// pointers for it; 256 without).
  struct Alignments {
    uint32_t first, second, c, bias, aux;
  };
  /// What a plan depends on: the GEMM and its operands' alignments.
  struct Key {
    RowMajorGemm g;
    Alignments align;
    auto fields() const {
      return std::tie(g.m, g.n, g.k, g.transA, g.transB, g.lda, g.ldb, g.ldc,
                      g.aType, g.bType, g.cType, g.batch, g.strideA, g.strideB,
                      g.strideC, g.compute, g.epilogue, g.ldAux, align.first,
                      align.second, align.c, align.bias, align.aux);
    }
    bool operator<(const Key &other) const {
      return fields() < other.fields();
    }
  };
  /// The epilogue's operands, whose addresses the heuristic reads.
  struct EpilogueOperands {
    const void *bias;
    void *aux;
  };
  std::string plan(const RowMajorGemm &g, const Alignments &align,
                   EpilogueOperands operands, GemmPlan &p);
  std::string planWith(const RowMajorGemm &g, int32_t compute,
                       const Alignments &align, EpilogueOperands operands,
                       GemmPlan &p);
  /// Sets the descriptor's bias and auxiliary addresses (and the
  /// auxiliary stride) that g.epilogue uses.
  std::string setEpilogueOperands(const RowMajorGemm &g, MatmulDesc desc,
                                  EpilogueOperands operands);
  /// Destroys what `p` holds and empties it.
  void release(GemmPlan &p);

  const Api &api;
  Handle handle;
  void *workspace;
  size_t workspaceBytes;
  void *stream;
  std::map<Key, GemmPlan> plans;
  size_t fallbacks = 0;
};

} // namespace gaccrt::cublaslt

#endif // GACC_RUNTIME_CUBLASLT_H
