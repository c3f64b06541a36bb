//===- CublasLt.cpp - cuBLASLt GEMMs with plans chosen once ---------------===//
//
// Opening libcublasLt, and GemmPlans: a row-major GEMM mapped onto
// cuBLASLt's column-major one (its bias and GELU epilogues included),
// planned once per shape.
//
//===----------------------------------------------------------------------===//

#include "runtime/CublasLt.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <limits>

using namespace gaccrt::cublaslt;

std::string gaccrt::cublaslt::loadApi(Api &api) {
  void *lib = nullptr;
  for (const char *name :
       {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!lib)
    return "no cuBLASLt (libcublasLt.so.13/.12 not found)";
  // Every entry point is bound; the first one missing is the error.
  const char *missing = nullptr;
  auto bind = [&](auto &fn, const char *name) {
    if (!loadSymbol(lib, fn, name) && !missing)
      missing = name;
  };
  bind(api.create, "cublasLtCreate");
  bind(api.matmulDescCreate, "cublasLtMatmulDescCreate");
  bind(api.matmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  bind(api.matrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  bind(api.matrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
  bind(api.preferenceCreate, "cublasLtMatmulPreferenceCreate");
  bind(api.preferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  bind(api.algoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  bind(api.matmul, "cublasLtMatmul");
  bind(api.matmulDescDestroy, "cublasLtMatmulDescDestroy");
  bind(api.matrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  bind(api.preferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  return missing ? std::string("libcublasLt lacks ") + missing : "";
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
/// row-major row stride. A batch sets each layout's count and stride.
std::string GemmPlans::plan(const RowMajorGemm &g, const Alignments &align,
                            EpilogueOperands operands, GemmPlan &p) {
  std::string problem = planWith(g, g.compute, align, operands, p);
  if (problem.empty() || g.compute == kCompute32F)
    return problem;
  // The fast compute type is an optimization of the same values: where
  // cuBLASLt has no algorithm for it (or refuses it), fp32 computes them.
  release(p);
  if (std::string fp32 = planWith(g, kCompute32F, align, operands, p);
      !fp32.empty())
    return fp32;
  ++fallbacks;
  return "";
}

void GemmPlans::release(GemmPlan &p) {
  // Teardown: a failure to destroy leaves nothing else to do.
  if (p.desc)
    (void)api.matmulDescDestroy(p.desc);
  if (p.preference)
    (void)api.preferenceDestroy(p.preference);
  for (Layout l : {p.a, p.b, p.c})
    if (l)
      (void)api.matrixLayoutDestroy(l);
  p = GemmPlan{};
}

size_t GemmPlans::planned(int32_t compute, int32_t operands) const {
  size_t n = 0;
  for (const auto &entry : plans)
    n += entry.second.compute == compute &&
         entry.second.operands == operands;
  return n;
}

std::string GemmPlans::summary() const {
  std::string s = std::to_string(plans.size()) + " GEMM shape" +
                  (plans.size() == 1 ? "" : "s") + " planned";
  const char *sep = ": ";
  for (auto [n, what] :
       {std::pair{planned(kCompute32FFast16BF) + planned(kCompute32F, kR16BF),
                  "on bf16 tensor cores"},
        std::pair{planned(kCompute32FFast16F) + planned(kCompute32F, kR16F),
                  "on fp16 tensor cores"},
        std::pair{planned(kCompute32F), "fp32"}})
    if (n) {
      s += sep + std::to_string(n) + " " + what;
      sep = ", ";
    }
  if (fallbacks)
    s += " (" + std::to_string(fallbacks) +
         " fp32 where cuBLASLt had no tensor-core algorithm)";
  return s;
}

/// An epilogue of the bias vector (BIAS, RELU_BIAS, GELU_AUX_BIAS).
static bool hasBias(uint32_t epilogue) {
  return epilogue != kEpilogueDefault && (epilogue & kEpilogueBias);
}
/// An epilogue of the auxiliary matrix (GELU_AUX_BIAS, DGELU).
static bool hasAux(uint32_t epilogue) {
  return epilogue != kEpilogueDefault && (epilogue & kEpilogueAuxBit);
}

std::string GemmPlans::setEpilogueOperands(const RowMajorGemm &g,
                                           MatmulDesc desc,
                                           EpilogueOperands operands) {
  if (hasBias(g.epilogue))
    if (int s = api.matmulDescSetAttribute(
            desc, kDescBiasPointer, &operands.bias, sizeof(operands.bias)))
      return failed("cublasLtMatmulDescSetAttribute (bias)", s);
  if (hasAux(g.epilogue)) {
    if (int s = api.matmulDescSetAttribute(desc, kDescEpilogueAuxPointer,
                                           &operands.aux, sizeof(operands.aux)))
      return failed("cublasLtMatmulDescSetAttribute (aux)", s);
    if (int s = api.matmulDescSetAttribute(desc, kDescEpilogueAuxLd, &g.ldAux,
                                           sizeof(g.ldAux)))
      return failed("cublasLtMatmulDescSetAttribute (aux ld)", s);
  }
  return "";
}

std::string GemmPlans::planWith(const RowMajorGemm &g, int32_t compute,
                                const Alignments &align,
                                EpilogueOperands operands, GemmPlan &p) {
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
  p.compute = compute;
  p.operands = g.aType;
  if (int s = api.matmulDescCreate(&p.desc, compute, kR32F))
    return failed("cublasLtMatmulDescCreate", s);
  int32_t opFirst = g.transB ? kOpT : kOpN, opSecond = g.transA ? kOpT : kOpN;
  if (int s = api.matmulDescSetAttribute(p.desc, kDescTransA, &opFirst,
                                         sizeof(opFirst)))
    return failed("cublasLtMatmulDescSetAttribute", s);
  if (int s = api.matmulDescSetAttribute(p.desc, kDescTransB, &opSecond,
                                         sizeof(opSecond)))
    return failed("cublasLtMatmulDescSetAttribute", s);
  // The epilogue, and the bias and auxiliary addresses the heuristic reads
  // their alignments from (run sets each call's own).
  if (g.epilogue != kEpilogueDefault) {
    if (int s = api.matmulDescSetAttribute(p.desc, kDescEpilogue, &g.epilogue,
                                           sizeof(g.epilogue)))
      return failed("cublasLtMatmulDescSetAttribute (epilogue)", s);
    if (std::string problem = setEpilogueOperands(g, p.desc, operands);
        !problem.empty())
      return problem;
  }
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
  if (g.batch > 1) {
    int32_t count = int32_t(g.batch);
    for (auto [layout, stride] : {std::pair{p.b, g.strideB},
                                  std::pair{p.a, g.strideA},
                                  std::pair{p.c, g.strideC}}) {
      if (int s = api.matrixLayoutSetAttribute(layout, kLayoutBatchCount,
                                               &count, sizeof(count)))
        return failed("cublasLtMatrixLayoutSetAttribute", s);
      if (int s = api.matrixLayoutSetAttribute(
              layout, kLayoutStridedBatchOffset, &stride, sizeof(stride)))
        return failed("cublasLtMatrixLayoutSetAttribute", s);
    }
  }
  HeuristicResult result{};
  int returned = 0;
  if (int s = api.algoGetHeuristic(handle, p.desc, p.b, p.a, p.c, p.c,
                                   p.preference, 1, &result, &returned))
    return failed("cublasLtMatmulAlgoGetHeuristic", s);
  if (returned < 1 || result.state)
    return "cublasLtMatmulAlgoGetHeuristic found no algorithm for " +
           std::to_string(g.m) + " x " + std::to_string(g.n) + " x " +
           std::to_string(g.k) +
           (g.batch > 1 ? " (batch of " + std::to_string(g.batch) + ")"
                        : std::string()) +
           (g.epilogue != kEpilogueDefault
                ? " with epilogue " + std::to_string(g.epilogue)
                : std::string()) +
           " within " + std::to_string(workspaceBytes) + " bytes of workspace";
  p.algo = result.algo;
  p.workspaceBytes = result.workspaceSize;
  return "";
}

/// Why cuBLASLt cannot run `g`'s epilogue with these operands, or "".
static std::string epilogueProblem(const RowMajorGemm &g, const void *bias,
                                   const void *aux) {
  if (g.epilogue == kEpilogueDefault)
    return "";
  if (g.epilogue != kEpilogueBias && g.epilogue != kEpilogueReluBias &&
      g.epilogue != kEpilogueGeluAuxBias && g.epilogue != kEpilogueDGelu)
    return "cublasLtMatmul: epilogue " + std::to_string(g.epilogue) +
           " is not one gacc asks for (bias, bias and ReLU, bias and GELU "
           "keeping its input, GELU's derivative)";
  // The bias has D's type (cuBLASLt's default for these types).
  if ((hasBias(g.epilogue) && !bias) || g.batch > 1 ||
      (g.cType != kR32F && g.cType != g.aType))
    return "cublasLtMatmul: an epilogue runs on one product with a C of "
           "fp32 or of the operands' type, and a bias epilogue needs a bias "
           "vector";
  // The auxiliary matrix has D's type: gacc asks for fp32 only.
  if (hasAux(g.epilogue) && (!aux || g.aType != kR32F || g.cType != kR32F ||
                             g.ldAux < g.n || g.ldAux % 8))
    return "cublasLtMatmul: a GELU epilogue needs an auxiliary matrix whose "
           "row stride is a multiple of 8 and at least the " +
           std::to_string(g.n) + " columns (got " + std::to_string(g.ldAux) +
           "), and fp32 operands and C";
  return "";
}

std::string GemmPlans::run(const RowMajorGemm &g, const void *a, const void *b,
                           void *c, float beta, const void *bias, void *aux) {
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return "";
  if (std::string problem = epilogueProblem(g, bias, aux); !problem.empty())
    return problem;
  if (g.batch > std::numeric_limits<int32_t>::max())
    return "cublasLtMatmul: a batch of " + std::to_string(g.batch) +
           " products (cuBLASLt counts at most 2^31 - 1)";
  // cuBLASLt documents no K = 0 (C = beta·C, which cublasSgemm computes);
  // gacc's GEMMs reduce over at least one row, so this is refused rather
  // than guessed.
  if (g.k == 0)
    return "cublasLtMatmul: a GEMM of " + std::to_string(g.m) + " x " +
           std::to_string(g.n) + " with K = 0 (--cuda-gemm=cublas computes "
           "it)";
  // The alignment of every matrix of the batch: its first address's, and
  // that of the distance from one matrix to the next.
  auto alignment = [&](const void *p, int64_t stride, int32_t type) {
    uintptr_t address = reinterpret_cast<uintptr_t>(p);
    if (g.batch > 1)
      address |= uintptr_t(stride) * (type == kR32F ? 4 : 2);
    return address ? uint32_t(std::min<uintptr_t>(address & -address, 256))
                   : 256u;
  };
  Alignments align{alignment(b, g.strideB, g.bType),
                   alignment(a, g.strideA, g.aType),
                   alignment(c, g.strideC, g.cType),
                   hasBias(g.epilogue) ? alignment(bias, 0, g.cType) : 256u,
                   hasAux(g.epilogue) ? alignment(aux, 0, g.cType) : 256u};
  EpilogueOperands operands{bias, aux};
  auto [it, inserted] = plans.try_emplace(Key{g, align});
  if (inserted)
    if (std::string problem = plan(g, align, operands, it->second);
        !problem.empty()) {
      release(it->second);
      plans.erase(it);
      return problem;
    }
  const GemmPlan &p = it->second;
  // This call's bias and auxiliary matrix (the plan's descriptor holds the
  // first call's).
  if (std::string problem = setEpilogueOperands(g, p.desc, operands);
      !problem.empty())
    return problem;
  const float alpha = 1.0f;
  if (int s = api.matmul(handle, p.desc, &alpha, b, p.b, a, p.a, &beta, c,
                         p.c, c, p.c, &p.algo, workspace, workspaceBytes,
                         stream))
    return failed("cublasLtMatmul", s);
  return "";
}
