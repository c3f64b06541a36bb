//===- CublasLt.cpp - cuBLASLt GEMMs with plans chosen once ---------------===//
//
// Opening libcublasLt, and GemmPlans: a row-major GEMM mapped onto
// cuBLASLt's column-major one, planned once per shape.
//
//===----------------------------------------------------------------------===//

#include "runtime/CublasLt.h"
#include "runtime/Symbols.h"

#include <algorithm>

using namespace gaccrt::cublaslt;

std::string gaccrt::cublaslt::loadApi(Api &api) {
  void *lib = nullptr;
  for (const char *name :
       {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!lib)
    return "no cuBLASLt (libcublasLt.so.13/.12 not found)";
  struct Entry {
    bool bound;
    const char *name;
  } entries[] = {
      {loadSymbol(lib, api.create, "cublasLtCreate"), "cublasLtCreate"},
      {loadSymbol(lib, api.matmulDescCreate, "cublasLtMatmulDescCreate"),
       "cublasLtMatmulDescCreate"},
      {loadSymbol(lib, api.matmulDescSetAttribute,
                  "cublasLtMatmulDescSetAttribute"),
       "cublasLtMatmulDescSetAttribute"},
      {loadSymbol(lib, api.matrixLayoutCreate, "cublasLtMatrixLayoutCreate"),
       "cublasLtMatrixLayoutCreate"},
      {loadSymbol(lib, api.preferenceCreate,
                  "cublasLtMatmulPreferenceCreate"),
       "cublasLtMatmulPreferenceCreate"},
      {loadSymbol(lib, api.preferenceSetAttribute,
                  "cublasLtMatmulPreferenceSetAttribute"),
       "cublasLtMatmulPreferenceSetAttribute"},
      {loadSymbol(lib, api.algoGetHeuristic,
                  "cublasLtMatmulAlgoGetHeuristic"),
       "cublasLtMatmulAlgoGetHeuristic"},
      {loadSymbol(lib, api.matmul, "cublasLtMatmul"), "cublasLtMatmul"},
  };
  for (const Entry &e : entries)
    if (!e.bound)
      return std::string("libcublasLt lacks ") + e.name;
  return "";
}

static std::string failed(const char *call, int status) {
  return std::string(call) + " failed with status " + std::to_string(status);
}

/// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: read
/// column-major, B's memory is Bᵀ and A's is Aᵀ, so cuBLASLt's first
/// operand is B and its second A, each with its own transpose flag (as
/// gacc_cublas_sgemm calls cublasSgemm). A layout describes the matrix as
/// stored: B is [n, k] column-major untransposed ([k, n] when transposed),
/// A is [k, m] ([m, k]), C is [n, m]; each leading dimension is the
/// row-major row stride.
std::string GemmPlans::plan(const RowMajorGemm &g, const Alignments &align,
                            GemmPlan &p) {
  if (int s = api.preferenceCreate(&p.preference))
    return failed("cublasLtMatmulPreferenceCreate", s);
  uint64_t bound = workspaceBytes;
  if (int s = api.preferenceSetAttribute(p.preference, kPrefMaxWorkspaceBytes,
                                         &bound, sizeof(bound)))
    return failed("cublasLtMatmulPreferenceSetAttribute", s);
  for (auto [attribute, bytes] :
       {std::pair{kPrefMinAlignmentA, align.first},
        std::pair{kPrefMinAlignmentB, align.second},
        std::pair{kPrefMinAlignmentC, align.c},
        std::pair{kPrefMinAlignmentD, align.c}})
    if (int s = api.preferenceSetAttribute(p.preference, attribute, &bytes,
                                           sizeof(bytes)))
      return failed("cublasLtMatmulPreferenceSetAttribute", s);
  if (int s = api.matmulDescCreate(&p.desc, kCompute32F, kR32F))
    return failed("cublasLtMatmulDescCreate", s);
  int32_t opFirst = g.transB ? kOpT : kOpN, opSecond = g.transA ? kOpT : kOpN;
  if (int s = api.matmulDescSetAttribute(p.desc, kDescTransA, &opFirst,
                                         sizeof(opFirst)))
    return failed("cublasLtMatmulDescSetAttribute", s);
  if (int s = api.matmulDescSetAttribute(p.desc, kDescTransB, &opSecond,
                                         sizeof(opSecond)))
    return failed("cublasLtMatmulDescSetAttribute", s);
  auto ld = [](int64_t stride) { return std::max<int64_t>(stride, 1); };
  uint64_t m = g.m, n = g.n, k = g.k;
  if (int s = api.matrixLayoutCreate(&p.b, g.bType, g.transB ? k : n,
                                     g.transB ? n : k, ld(g.ldb)))
    return failed("cublasLtMatrixLayoutCreate", s);
  if (int s = api.matrixLayoutCreate(&p.a, g.aType, g.transA ? m : k,
                                     g.transA ? k : m, ld(g.lda)))
    return failed("cublasLtMatrixLayoutCreate", s);
  if (int s = api.matrixLayoutCreate(&p.c, g.cType, n, m, ld(g.ldc)))
    return failed("cublasLtMatrixLayoutCreate", s);
  HeuristicResult result{};
  int returned = 0;
  if (int s = api.algoGetHeuristic(handle, p.desc, p.b, p.a, p.c, p.c,
                                   p.preference, 1, &result, &returned))
    return failed("cublasLtMatmulAlgoGetHeuristic", s);
  if (returned < 1 || result.state)
    return "cublasLtMatmulAlgoGetHeuristic found no algorithm for " +
           std::to_string(g.m) + " x " + std::to_string(g.n) + " x " +
           std::to_string(g.k) + " within " + std::to_string(workspaceBytes) +
           " bytes of workspace";
  p.algo = result.algo;
  p.workspaceBytes = result.workspaceSize;
  return "";
}

std::string GemmPlans::run(const RowMajorGemm &g, const void *a,
                           const void *b, void *c, float beta) {
  if (g.m == 0 || g.n == 0)
    return "";
  // cuBLASLt documents no K = 0 (C = beta·C, which cublasSgemm computes);
  // gacc's GEMMs reduce over at least one row, so this is refused rather
  // than guessed.
  if (g.k == 0)
    return "cublasLtMatmul: a GEMM of " + std::to_string(g.m) + " x " +
           std::to_string(g.n) + " with K = 0 (--cuda-gemm=cublas computes "
           "it)";
  auto alignment = [](const void *p) {
    auto address = reinterpret_cast<uintptr_t>(p);
    return address ? uint32_t(std::min<uintptr_t>(address & -address, 256))
                   : 256u;
  };
  Alignments align{alignment(b), alignment(a), alignment(c)};
  Key key{g.m,     g.n,     g.k,     g.transA,    g.transB,
          g.lda,   g.ldb,   g.ldc,   g.aType,     g.bType,
          g.cType, align.first, align.second, align.c};
  auto [it, inserted] = plans.try_emplace(key);
  if (inserted)
    if (std::string problem = plan(g, align, it->second); !problem.empty()) {
      plans.erase(it);
      return problem;
    }
  const GemmPlan &p = it->second;
  const float alpha = 1.0f;
  if (int s = api.matmul(handle, p.desc, &alpha, b, p.b, a, p.a, &beta, c,
                         p.c, c, p.c, &p.algo, workspace, workspaceBytes,
                         stream))
    return failed("cublasLtMatmul", s);
  return "";
}
