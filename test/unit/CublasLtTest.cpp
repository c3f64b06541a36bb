//===- CublasLtTest.cpp - GemmPlans against a fake cuBLASLt ---------------===//
//
// gaccrt::cublaslt::GemmPlans driven by a fake library that keeps every
// descriptor and layout it is given and computes cublasLtMatmul's
// column-major D = alpha·op(A)·op(B) + beta·C from them on the host, as
// the cuBLASLt documentation defines it (it refuses mismatched shapes and
// a leading dimension below the rows, as cuBLASLt does). So the tests show
// that the row-major GEMMs gacc asks for come out right for every
// transpose pair, padded strides and beta 0 and 1 (against float64), and
// for a strided batch of products; that the compute type asked for is the
// descriptor's, and a fast one the library refuses (or has no algorithm
// for) is planned in fp32, counted and summarized by compute type; that a
// failed plan destroys what it created; that a shape is planned once (one
// descriptor, three layouts, one heuristic query) and replayed, its
// preference stating the alignments its operands have; that the
// workspace, its bound and the stream are passed; that a failed heuristic
// is one message and is not cached; that an empty C makes no call and
// K = 0 is refused; that a bias epilogue adds a row-major C's bias per
// column and applies the ReLU after it (against float64), with each call's
// own bias, in a plan of its own, and is refused without a bias or on a
// batch; that GELU_AUX_BIAS writes the tanh GELU of the sum and the sum to
// a padded auxiliary matrix, and DGELU multiplies the product by GELU' of
// it (against float64), each call with its own auxiliary matrix, and that
// a GELU epilogue without one, with a row stride cuBLASLt does not take or
// with bf16 operands is refused; and that the GELU epilogues' entry points
// (gacc_cublaslt_sgemm_gelu_bias, _gelu_grad) unpack their memrefs into
// those calls and refuse a GELU input of another shape. Where the CUDA
// toolkit's headers are installed, the
// enumerators and structs gacc restates are checked against them.
//
//===----------------------------------------------------------------------===//

#include "runtime/CublasLt.h"
#include "runtime/CudaRuntime.h"
#include "test/unit/BF16Bits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#ifdef GACC_HAVE_CUBLASLT_HEADER
#include <cublasLt.h>
#include <type_traits>
using namespace gaccrt::cublaslt;
static_assert(kOpN == CUBLAS_OP_N && kOpT == CUBLAS_OP_T);
static_assert(kR32F == CUDA_R_32F && kR16F == CUDA_R_16F &&
              kR16BF == CUDA_R_16BF);
static_assert(kCompute32F == CUBLAS_COMPUTE_32F &&
              kCompute32FFast16F == CUBLAS_COMPUTE_32F_FAST_16F &&
              kCompute32FFast16BF == CUBLAS_COMPUTE_32F_FAST_16BF);
static_assert(kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
              kLayoutStridedBatchOffset ==
                  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA &&
              kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB &&
              kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE &&
              kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER &&
              kDescEpilogueAuxPointer ==
                  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER &&
              kDescEpilogueAuxLd == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
static_assert(kEpilogueDefault == CUBLASLT_EPILOGUE_DEFAULT &&
              kEpilogueBias == CUBLASLT_EPILOGUE_BIAS &&
              kEpilogueReluBias == CUBLASLT_EPILOGUE_RELU_BIAS &&
              kEpilogueGeluAuxBias == CUBLASLT_EPILOGUE_GELU_AUX_BIAS &&
              kEpilogueDGelu == CUBLASLT_EPILOGUE_DGELU &&
              (CUBLASLT_EPILOGUE_GELU_AUX & kEpilogueAuxBit) &&
              !(CUBLASLT_EPILOGUE_GELU & kEpilogueAuxBit));
static_assert(kPrefMaxWorkspaceBytes ==
                  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES &&
              kPrefMinAlignmentA == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
              kPrefMinAlignmentB == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES &&
              kPrefMinAlignmentC == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES &&
              kPrefMinAlignmentD == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
static_assert(sizeof(Algo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(HeuristicResult) ==
                  sizeof(cublasLtMatmulHeuristicResult_t) &&
              offsetof(HeuristicResult, workspaceSize) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize) &&
              offsetof(HeuristicResult, state) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, state));
#endif

namespace {

using namespace gaccrt::cublaslt;

struct FakeDesc {
  int32_t compute, scale, transA = kOpN, transB = kOpN;
  uint32_t epilogue = kEpilogueDefault;
  const void *bias = nullptr;
  void *aux = nullptr;
  int64_t auxLd = 0;
};
struct FakeLayout {
  int32_t type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t batchStride = 0;
};

/// What the fake library was asked, and what it answers.
struct Fake {
  std::vector<std::unique_ptr<FakeDesc>> descs;
  std::vector<std::unique_ptr<FakeLayout>> layouts;
  int preferences = 0, heuristics = 0, matmuls = 0;
  uint64_t workspaceBound = 0;
  /// The last preference's alignments of cuBLASLt's A, B, C and D.
  uint32_t alignment[4] = {};
  int algorithmsFound = 1;
  /// A compute type the library refuses (CUBLAS_STATUS_NOT_SUPPORTED), and
  /// one it has no algorithm for.
  int32_t unsupportedCompute = -1, noAlgorithmCompute = -1;
  /// Descriptors, layouts and preferences created and not destroyed.
  int live = 0;
  const void *lastWorkspace = nullptr, *lastStream = nullptr;
  size_t lastWorkspaceBytes = 0;
} fake;

constexpr int kInvalidValue = 7; // CUBLAS_STATUS_INVALID_VALUE

int descCreate(MatmulDesc *d, int32_t compute, int32_t scale) {
  if (compute == fake.unsupportedCompute)
    return 15; // CUBLAS_STATUS_NOT_SUPPORTED
  fake.descs.push_back(std::make_unique<FakeDesc>(FakeDesc{compute, scale}));
  *d = fake.descs.back().get();
  ++fake.live;
  return 0;
}
int descSet(MatmulDesc d, int32_t attribute, const void *value, size_t bytes) {
  auto *desc = static_cast<FakeDesc *>(d);
  if (attribute == kDescEpilogue && bytes == sizeof(uint32_t))
    desc->epilogue = *static_cast<const uint32_t *>(value);
  else if (attribute == kDescBiasPointer && bytes == sizeof(void *))
    desc->bias = *static_cast<const void *const *>(value);
  else if (attribute == kDescEpilogueAuxPointer && bytes == sizeof(void *))
    desc->aux = *static_cast<void *const *>(value);
  else if (attribute == kDescEpilogueAuxLd && bytes == sizeof(int64_t))
    desc->auxLd = *static_cast<const int64_t *>(value);
  else if (attribute == kDescTransA && bytes == sizeof(int32_t))
    desc->transA = *static_cast<const int32_t *>(value);
  else if (attribute == kDescTransB && bytes == sizeof(int32_t))
    desc->transB = *static_cast<const int32_t *>(value);
  else
    return kInvalidValue;
  return 0;
}
int layoutCreate(Layout *l, int32_t type, uint64_t rows, uint64_t cols,
                 int64_t ld) {
  fake.layouts.push_back(
      std::make_unique<FakeLayout>(FakeLayout{type, rows, cols, ld}));
  *l = fake.layouts.back().get();
  ++fake.live;
  return 0;
}
int layoutSet(Layout l, int32_t attribute, const void *value,
              size_t bytes) {
  auto *layout = static_cast<FakeLayout *>(l);
  if (attribute == kLayoutBatchCount && bytes == sizeof(int32_t))
    layout->batch = *static_cast<const int32_t *>(value);
  else if (attribute == kLayoutStridedBatchOffset && bytes == sizeof(int64_t))
    layout->batchStride = *static_cast<const int64_t *>(value);
  else
    return kInvalidValue;
  return 0;
}
int preferenceCreate(Preference *p) {
  ++fake.preferences;
  ++fake.live;
  *p = &fake;
  return 0;
}
int destroy(void *) {
  --fake.live;
  return 0;
}
int preferenceSet(Preference, int32_t attribute, const void *value,
                  size_t bytes) {
  if (attribute == kPrefMaxWorkspaceBytes && bytes == sizeof(uint64_t))
    fake.workspaceBound = *static_cast<const uint64_t *>(value);
  else if (attribute >= kPrefMinAlignmentA && attribute <= kPrefMinAlignmentD &&
           bytes == sizeof(uint32_t))
    fake.alignment[attribute - kPrefMinAlignmentA] =
        *static_cast<const uint32_t *>(value);
  else
    return kInvalidValue;
  return 0;
}
int heuristic(Handle, MatmulDesc d, Layout, Layout, Layout, Layout,
              Preference, int requested, HeuristicResult *results,
              int *returned) {
  ++fake.heuristics;
  bool none = static_cast<FakeDesc *>(d)->compute == fake.noAlgorithmCompute;
  *returned = none ? 0 : std::min(requested, fake.algorithmsFound);
  if (*returned)
    results[0] = HeuristicResult{{{42}}, 4096, 0, 1.0f, {}};
  return 0;
}

using gacc::test::fromBF16;
using gacc::test::toBF16;

/// The tanh GELU and its derivative in float64 (Hendrycks and Gimpel
/// 2016; torch.nn.functional.gelu(approximate="tanh")).
double gelu(double x) {
  double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double geluDerivative(double x) {
  double k = std::sqrt(2.0 / M_PI);
  double t = std::tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) +
         0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
}

/// Element i of an fp32 or bf16 array.
float element(const void *data, int32_t type, int64_t i) {
  return type == kR16BF ? fromBF16(static_cast<const uint16_t *>(data)[i])
                        : static_cast<const float *>(data)[i];
}

/// Column-major op(X) as a rows × cols matrix, read through its layout.
struct ColumnMajor {
  const void *data;
  const FakeLayout &layout;
  bool transposed;
  int64_t offset = 0;
  uint64_t rows() const { return transposed ? layout.cols : layout.rows; }
  uint64_t cols() const { return transposed ? layout.rows : layout.cols; }
  float at(uint64_t r, uint64_t c) const {
    if (transposed)
      std::swap(r, c);
    return element(data, layout.type, offset + r + c * layout.ld);
  }
};

int matmul(Handle, MatmulDesc d, const void *alpha, const void *a, Layout la,
           const void *b, Layout lb, const void *beta, const void *c,
           Layout lc, void *dOut, Layout ld, const Algo *algo,
           void *workspace, size_t workspaceBytes, void *stream) {
  ++fake.matmuls;
  fake.lastWorkspace = workspace;
  fake.lastWorkspaceBytes = workspaceBytes;
  fake.lastStream = stream;
  const auto &desc = *static_cast<FakeDesc *>(d);
  const auto &layoutC = *static_cast<FakeLayout *>(lc);
  if (desc.epilogue != kEpilogueDefault && desc.epilogue != kEpilogueBias &&
      desc.epilogue != kEpilogueReluBias &&
      desc.epilogue != kEpilogueGeluAuxBias && desc.epilogue != kEpilogueDGelu)
    return kInvalidValue;
  if ((desc.epilogue & kEpilogueBias) && !desc.bias)
    return kInvalidValue;
  // The auxiliary matrix (D's type, fp32 here) as cuBLASLt documents it:
  // a leading dimension divisible by 8 and no less than D's rows.
  bool aux = desc.epilogue & kEpilogueAuxBit;
  if (aux && (!desc.aux || desc.auxLd % 8 ||
              desc.auxLd < int64_t(layoutC.rows) || layoutC.type != kR32F))
    return kInvalidValue;
  for (Layout l : {la, lb, lc})
    if (static_cast<FakeLayout *>(l)->ld <
        int64_t(static_cast<FakeLayout *>(l)->rows))
      return kInvalidValue;
  ColumnMajor opA{a, *static_cast<FakeLayout *>(la), desc.transA == kOpT};
  ColumnMajor opB{b, *static_cast<FakeLayout *>(lb), desc.transB == kOpT};
  const auto &layoutA = *static_cast<FakeLayout *>(la);
  const auto &layoutB = *static_cast<FakeLayout *>(lb);
  if (c != dOut || lc != ld || algo->data[0] != 42 ||
      opA.rows() != layoutC.rows || opB.cols() != layoutC.cols ||
      opA.cols() != opB.rows() || layoutA.batch != layoutC.batch ||
      layoutB.batch != layoutC.batch)
    return kInvalidValue;
  float al = *static_cast<const float *>(alpha);
  float be = *static_cast<const float *>(beta);
  for (int32_t batch = 0; batch < layoutC.batch; ++batch) {
    ColumnMajor x = opA, y = opB;
    x.offset = batch * layoutA.batchStride;
    y.offset = batch * layoutB.batchStride;
    int64_t first = batch * layoutC.batchStride;
    for (uint64_t i = 0; i < layoutC.rows; ++i)
      for (uint64_t j = 0; j < layoutC.cols; ++j) {
        float sum = 0.0f;
        for (uint64_t l = 0; l < x.cols(); ++l)
          sum += x.at(i, l) * y.at(l, j);
        int64_t at = first + i + j * layoutC.ld;
        float o = al * sum +
                  (be == 0.0f ? 0.0f : be * element(dOut, layoutC.type, at));
        // The epilogue as cuBLASLt documents it: the bias (D's type), one
        // element per row of D, added before the ReLU, in fp32; D rounded
        // once.
        if (desc.epilogue & kEpilogueBias)
          o += element(desc.bias, layoutC.type, i);
        if (desc.epilogue & 2) // CUBLASLT_EPILOGUE_RELU
          o = std::max(o, 0.0f);
        float *auxAt =
            aux ? static_cast<float *>(desc.aux) + i + j * desc.auxLd : nullptr;
        if (desc.epilogue == kEpilogueGeluAuxBias) {
          *auxAt = o;
          o = float(gelu(o));
        }
        if (desc.epilogue == kEpilogueDGelu)
          o = float(o * geluDerivative(*auxAt));
        if (layoutC.type == kR16BF)
          static_cast<uint16_t *>(dOut)[at] = toBF16(o);
        else
          static_cast<float *>(dOut)[at] = o;
      }
  }
  return 0;
}

const Api fakeApi{nullptr,       descCreate,       descSet,
                  layoutCreate,  layoutSet,        preferenceCreate,
                  preferenceSet, heuristic,        matmul,
                  destroy,       destroy,          destroy};

class GemmPlansTest : public ::testing::Test {
protected:
  void SetUp() override { fake = Fake{}; }
  char workspace[16];
  int stream;
  GemmPlans plans{fakeApi, nullptr, workspace, sizeof(workspace), &stream};
};

/// A row-major GEMM with padded strides against float64; C's padding
/// untouched.
void checkProduct(GemmPlans &plans, int64_t m, int64_t n, int64_t k,
                  bool transA, bool transB, float beta) {
  SCOPED_TRACE(::testing::Message() << m << " x " << n << " x " << k
                                    << " transA " << transA << " transB "
                                    << transB << " beta " << beta);
  std::mt19937 rng(unsigned(m * 131 + n * 17 + k));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  RowMajorGemm g{m, n, k, transA, transB, 0, 0, n + 3};
  int64_t aRows = transA ? k : m, aCols = transA ? m : k;
  int64_t bRows = transB ? n : k, bCols = transB ? k : n;
  g.lda = aCols + 2;
  g.ldb = bCols + 1;
  std::vector<float> a(aRows * g.lda), b(bRows * g.ldb), c(m * g.ldc);
  for (auto *v : {&a, &b, &c})
    for (float &x : *v)
      x = u(rng);
  std::vector<float> before = c;
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), beta), "");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < g.ldc; ++j) {
      if (j >= n) {
        EXPECT_EQ(c[i * g.ldc + j], before[i * g.ldc + j]);
        continue;
      }
      double want = beta == 0.0f ? 0.0 : beta * double(before[i * g.ldc + j]);
      for (int64_t l = 0; l < k; ++l) {
        double av = transA ? a[l * g.lda + i] : a[i * g.lda + l];
        double bv = transB ? b[j * g.ldb + l] : b[l * g.ldb + j];
        want += av * bv;
      }
      EXPECT_NEAR(c[i * g.ldc + j], want, 1e-5 * (k + 1)) << i << ", " << j;
    }
}

TEST_F(GemmPlansTest, RowMajorProductsForEveryTransposePair) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (float beta : {0.0f, 1.0f})
        checkProduct(plans, 5, 7, 3, transA, transB, beta);
  // A weight gradient: dW[out, in] += dYᵀ·X, K = the micro-batch.
  checkProduct(plans, 6, 4, 2, /*transA=*/true, false, 1.0f);
}

TEST_F(GemmPlansTest, PlansEachShapeOnceAndReplaysIt) {
  std::vector<float> a(64), b(64), c(64);
  RowMajorGemm g{4, 4, 4, false, true, 4, 4, 4};
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), i ? 1.0f : 0.0f),
              "");
  EXPECT_EQ(plans.size(), 1u);
  EXPECT_EQ(fake.descs.size(), 1u);
  EXPECT_EQ(fake.layouts.size(), 3u);
  EXPECT_EQ(fake.heuristics, 1);
  EXPECT_EQ(fake.matmuls, 3);
  EXPECT_EQ(fake.descs[0]->compute, kCompute32F);
  EXPECT_EQ(fake.descs[0]->scale, kR32F);
  g.k = 2;
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 1.0f), "");
  EXPECT_EQ(plans.size(), 2u);
  EXPECT_EQ(fake.heuristics, 2);
  EXPECT_EQ(fake.preferences, 2);
}

TEST_F(GemmPlansTest, StatesTheOperandsAlignments) {
  alignas(256) float a[64] = {}, b[64] = {}, c[64] = {};
  RowMajorGemm g{2, 2, 2, false, false, 2, 2, 2};
  ASSERT_EQ(plans.run(g, a, b, c, 0.0f), "");
  EXPECT_EQ(fake.alignment[0], 256u);
  EXPECT_EQ(fake.alignment[2], 256u);
  // A view 4 floats into C (16 bytes) and 1 float into A: a plan of its
  // own that assumes no more than that (A is cuBLASLt's B).
  ASSERT_EQ(plans.run(g, a + 1, b, c + 4, 0.0f), "");
  EXPECT_EQ(plans.size(), 2u);
  EXPECT_EQ(fake.alignment[0], 256u);
  EXPECT_EQ(fake.alignment[1], 4u);
  EXPECT_EQ(fake.alignment[2], 16u);
  EXPECT_EQ(fake.alignment[3], 16u);
}

TEST_F(GemmPlansTest, PassesTheWorkspaceItsBoundAndTheStream) {
  std::vector<float> a(4), b(4), c(4);
  ASSERT_EQ(plans.run({2, 2, 1, false, false, 1, 2, 2}, a.data(), b.data(),
                      c.data(), 0.0f),
            "");
  EXPECT_EQ(fake.workspaceBound, sizeof(workspace));
  EXPECT_EQ(fake.lastWorkspace, workspace);
  EXPECT_EQ(fake.lastWorkspaceBytes, sizeof(workspace));
  EXPECT_EQ(fake.lastStream, &stream);
}

TEST_F(GemmPlansTest, NoAlgorithmIsOneMessageAndIsNotKept) {
  fake.algorithmsFound = 0;
  std::vector<float> a(64), b(64), c(64);
  RowMajorGemm g{3, 4, 5, false, false, 5, 4, 4};
  std::string problem = plans.run(g, a.data(), b.data(), c.data(), 0.0f);
  EXPECT_NE(problem.find("found no algorithm for 3 x 4 x 5 within 16 bytes"),
            std::string::npos)
      << problem;
  EXPECT_EQ(plans.size(), 0u);
  EXPECT_EQ(fake.matmuls, 0);
  fake.algorithmsFound = 1;
  EXPECT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f), "");
  EXPECT_EQ(fake.heuristics, 2);
}

TEST_F(GemmPlansTest, EmptyOutputMakesNoCall) {
  EXPECT_EQ(plans.run({0, 4, 4, false, false, 4, 4, 4}, nullptr, nullptr,
                      nullptr, 0.0f),
            "");
  EXPECT_EQ(plans.run({4, 0, 4, false, false, 4, 1, 1}, nullptr, nullptr,
                      nullptr, 0.0f),
            "");
  EXPECT_EQ(fake.descs.size(), 0u);
  EXPECT_EQ(fake.matmuls, 0);
}

TEST_F(GemmPlansTest, RefusesAnEmptyReduction) {
  float c[4];
  std::string problem = plans.run({2, 2, 0, false, false, 1, 2, 2}, nullptr,
                                  nullptr, c, 1.0f);
  EXPECT_NE(problem.find("2 x 2 with K = 0"), std::string::npos) << problem;
  EXPECT_EQ(fake.matmuls, 0);
}

/// A strided batch of row-major products with padded strides and gaps
/// between the matrices, against float64 per matrix.
TEST_F(GemmPlansTest, StridedBatchOfProducts) {
  for (bool transA : {false, true})
    for (bool transB : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "transA " << transA << " transB " << transB);
      const int64_t batch = 3, m = 4, n = 5, k = 6;
      int64_t aRows = transA ? k : m, aCols = transA ? m : k;
      int64_t bRows = transB ? n : k, bCols = transB ? k : n;
      RowMajorGemm g{m, n, k, transA, transB, aCols + 1, bCols + 2, n + 3};
      g.batch = batch;
      g.strideA = aRows * g.lda + 5;
      g.strideB = bRows * g.ldb + 7;
      g.strideC = m * g.ldc + 2;
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      std::vector<float> a(batch * g.strideA), b(batch * g.strideB),
          c(batch * g.strideC);
      for (auto *v : {&a, &b, &c})
        for (float &x : *v)
          x = u(rng);
      std::vector<float> before = c;
      ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 1.0f), "");
      for (int64_t q = 0; q < batch; ++q)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            int64_t at = q * g.strideC + i * g.ldc + j;
            double want = before[at];
            for (int64_t l = 0; l < k; ++l) {
              double av = transA ? a[q * g.strideA + l * g.lda + i]
                                 : a[q * g.strideA + i * g.lda + l];
              double bv = transB ? b[q * g.strideB + j * g.ldb + l]
                                 : b[q * g.strideB + l * g.ldb + j];
              want += av * bv;
            }
            EXPECT_NEAR(c[at], want, 1e-5 * (k + 1)) << q << ": " << i
                                                     << ", " << j;
          }
      // Nothing between the matrices is written.
      for (int64_t q = 0; q < batch; ++q)
        for (int64_t at = q * g.strideC + m * g.ldc;
             at < (q + 1) * g.strideC; ++at)
          EXPECT_EQ(c[at], before[at]);
    }
  // Every layout states the batch: one plan per batch shape.
  for (const auto &layout : fake.layouts)
    EXPECT_EQ(layout->batch, 3);
  EXPECT_EQ(plans.size(), 4u);
}

TEST_F(GemmPlansTest, EmptyBatchMakesNoCall) {
  RowMajorGemm g{2, 2, 2, false, false, 2, 2, 2};
  g.batch = 0;
  EXPECT_EQ(plans.run(g, nullptr, nullptr, nullptr, 0.0f), "");
  EXPECT_EQ(fake.matmuls, 0);
}

/// The compute type is the descriptor's, and part of the plan's key.
TEST_F(GemmPlansTest, AsksForTheComputeType) {
  std::vector<float> a(16), b(16), c(16);
  RowMajorGemm g{4, 4, 4, false, false, 4, 4, 4};
  g.compute = kCompute32FFast16BF;
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f), "");
  g.compute = kCompute32FFast16F;
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f), "");
  ASSERT_EQ(fake.descs.size(), 2u);
  EXPECT_EQ(fake.descs[0]->compute, kCompute32FFast16BF);
  EXPECT_EQ(fake.descs[1]->compute, kCompute32FFast16F);
  EXPECT_EQ(plans.fp32Fallbacks(), 0u);
}

/// A fast compute type the library has no algorithm for is planned with
/// fp32 compute; what the failed attempt created is destroyed, and the
/// run's summary says so.
TEST_F(GemmPlansTest, FastComputeWithoutAlgorithmPlansInFP32) {
  fake.noAlgorithmCompute = kCompute32FFast16BF;
  RowMajorGemm g{2, 2, 1, false, false, 1, 2, 2};
  g.compute = kCompute32FFast16BF;
  float a[2] = {1.0f, 2.0f}, b[2] = {3.0f, 4.0f}, c[4] = {};
  ASSERT_EQ(plans.run(g, a, b, c, 0.0f), "");
  EXPECT_EQ(c[3], 8.0f);
  ASSERT_EQ(fake.descs.size(), 2u);
  EXPECT_EQ(fake.descs[1]->compute, kCompute32F);
  EXPECT_EQ(plans.fp32Fallbacks(), 1u);
  EXPECT_EQ(plans.planned(kCompute32F), 1u);
  EXPECT_EQ(plans.planned(kCompute32FFast16BF), 0u);
  // One plan's descriptor, preference and three layouts stay alive.
  EXPECT_EQ(fake.live, 5);
  EXPECT_EQ(plans.summary(),
            "1 GEMM shape planned: 1 fp32 (1 fp32 where cuBLASLt had no "
            "tensor-core algorithm)");
}

/// A plan that fails leaves nothing alive.
TEST_F(GemmPlansTest, FailedPlanIsDestroyed) {
  fake.algorithmsFound = 0;
  std::vector<float> a(4), b(4), c(4);
  EXPECT_NE(plans.run({2, 2, 1, false, false, 1, 2, 2}, a.data(), b.data(),
                      c.data(), 0.0f),
            "");
  EXPECT_EQ(fake.live, 0);
  EXPECT_EQ(plans.summary(), "0 GEMM shapes planned");
}

/// The summary counts the shapes by compute type.
TEST_F(GemmPlansTest, SummaryByComputeType) {
  std::vector<float> a(16), b(16), c(16);
  RowMajorGemm g{4, 4, 4, false, false, 4, 4, 4};
  for (int32_t compute : {kCompute32FFast16BF, kCompute32F}) {
    g.compute = compute;
    ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f), "");
    g.k = 2; // another shape
    g.compute = compute;
    ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f), "");
    g.k = 4;
  }
  EXPECT_EQ(plans.summary(),
            "4 GEMM shapes planned: 2 on bf16 tensor cores, 2 fp32");
}

/// bf16 operands (a narrowed step's products) are laid out as bf16 with an
/// fp32 C, planned with fp32 compute, aligned by their 2-byte elements,
/// and summarized as tensor-core products.
TEST_F(GemmPlansTest, BF16OperandsWithFP32Output) {
  std::vector<uint16_t> a(2 * 16), b(2 * 16);
  std::vector<float> c(2 * 16);
  RowMajorGemm g{4, 4, 4, false, true, 4, 4, 4};
  g.aType = g.bType = kR16BF;
  g.batch = 2;
  g.strideA = g.strideB = 17; // an odd number of 2-byte elements apart
  g.strideC = 16;
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 1.0f), "");
  ASSERT_EQ(fake.layouts.size(), 3u);
  EXPECT_EQ(fake.layouts[0]->type, kR16BF); // cuBLASLt's A: gacc's B
  EXPECT_EQ(fake.layouts[1]->type, kR16BF);
  EXPECT_EQ(fake.layouts[2]->type, kR32F);
  ASSERT_EQ(fake.descs.size(), 1u);
  EXPECT_EQ(fake.descs[0]->compute, kCompute32F);
  EXPECT_EQ(fake.alignment[0], 2u);
  EXPECT_EQ(plans.summary(), "1 GEMM shape planned: 1 on bf16 tensor cores");
}

/// A fast compute type the library refuses is planned with fp32 compute;
/// the product is the same.
TEST_F(GemmPlansTest, RefusedFastComputePlansInFP32) {
  fake.unsupportedCompute = kCompute32FFast16BF;
  RowMajorGemm g{2, 2, 1, false, false, 1, 2, 2};
  g.compute = kCompute32FFast16BF;
  float a[2] = {1.0f, 2.0f}, b[2] = {3.0f, 4.0f}, c[4] = {};
  ASSERT_EQ(plans.run(g, a, b, c, 0.0f), "");
  EXPECT_EQ(c[0], 3.0f);
  EXPECT_EQ(c[3], 8.0f);
  ASSERT_EQ(fake.descs.size(), 1u);
  EXPECT_EQ(fake.descs[0]->compute, kCompute32F);
  EXPECT_EQ(plans.fp32Fallbacks(), 1u);
  // Planned once: the next call replays the fp32 plan.
  ASSERT_EQ(plans.run(g, a, b, c, 1.0f), "");
  EXPECT_EQ(fake.descs.size(), 1u);
  EXPECT_EQ(c[3], 16.0f);
}

/// A linear layer's forward, y = relu(x·Wᵀ + b), with the bias and ReLU in
/// cuBLASLt's epilogue: the bias per column of row-major C (per row of
/// column-major D), added before the ReLU and after beta·C, against
/// float64; with each call's own bias in one plan.
TEST_F(GemmPlansTest, BiasAndReluEpilogues) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int64_t m = 5, n = 6, k = 4;
  // Every operand 256-byte aligned, so that alignment makes no plan.
  alignas(256) float x[m * k], w[n * k], c[m * n], before[m * n];
  alignas(256) float bias[64], other[64];
  for (auto [v, size] : {std::pair{x, m * k}, std::pair{w, n * k},
                         std::pair{bias, n}, std::pair{other, n}})
    for (int64_t i = 0; i < size; ++i)
      v[i] = u(rng);
  for (uint32_t epilogue : {kEpilogueBias, kEpilogueReluBias})
    for (float beta : {0.0f, 1.0f})
      for (const float *b : {bias, other}) {
        SCOPED_TRACE(::testing::Message()
                     << "epilogue " << epilogue << " beta " << beta);
        RowMajorGemm g{m, n, k, false, /*transB=*/true, k, k, n};
        g.epilogue = epilogue;
        for (int64_t i = 0; i < m * n; ++i)
          before[i] = c[i] = u(rng);
        ASSERT_EQ(plans.run(g, x, w, c, beta, b), "");
        bool clamped = false;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = beta * double(before[i * n + j]) + b[j];
            for (int64_t l = 0; l < k; ++l)
              want += double(x[i * k + l]) * w[j * k + l];
            if (epilogue == kEpilogueReluBias && want < 0) {
              want = 0;
              clamped = true;
            }
            EXPECT_NEAR(c[i * n + j], want, 1e-5) << i << ", " << j;
          }
        EXPECT_EQ(clamped, epilogue == kEpilogueReluBias);
      }
  // One plan per epilogue (the two biases share their alignment).
  EXPECT_EQ(plans.size(), 2u);
  EXPECT_EQ(fake.heuristics, 2);
}

TEST_F(GemmPlansTest, EpilogueAndPlainProductArePlannedApart) {
  std::vector<float> a(16), b(16), c(16), bias(4, 1.0f);
  RowMajorGemm g{4, 4, 1, false, false, 1, 4, 4};
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f), "");
  g.epilogue = kEpilogueBias;
  ASSERT_EQ(plans.run(g, a.data(), b.data(), c.data(), 0.0f, bias.data()), "");
  EXPECT_EQ(plans.size(), 2u);
  EXPECT_EQ(fake.descs[0]->epilogue, kEpilogueDefault);
  EXPECT_EQ(fake.descs[1]->epilogue, kEpilogueBias);
  for (float e : c)
    EXPECT_EQ(e, 1.0f);
}

TEST_F(GemmPlansTest, RefusesAnEpilogueWithoutItsBias) {
  std::vector<float> a(16), b(16), c(16), bias(4);
  RowMajorGemm g{4, 4, 1, false, false, 1, 4, 4};
  g.epilogue = kEpilogueReluBias;
  EXPECT_NE(plans.run(g, a.data(), b.data(), c.data(), 0.0f)
                .find("needs a bias vector"),
            std::string::npos);
  g.batch = 2;
  EXPECT_NE(plans.run(g, a.data(), b.data(), c.data(), 0.0f, bias.data())
                .find("one product"),
            std::string::npos);
  g.batch = 1;
  g.epilogue = 2; // CUBLASLT_EPILOGUE_RELU: not one gacc asks for
  EXPECT_NE(plans.run(g, a.data(), b.data(), c.data(), 0.0f, bias.data())
                .find("not one gacc asks for"),
            std::string::npos);
  EXPECT_EQ(fake.matmuls, 0);
  EXPECT_EQ(plans.size(), 0u);
}

/// A linear layer into the tanh GELU and the GELU's gradient, row-major:
/// GELU_AUX_BIAS writes gelu(x·Wᵀ + b) to C and the sum to an auxiliary
/// matrix whose rows are padded to 8 (its padding untouched); DGELU
/// multiplies dz·W by gelu' of that matrix. Against float64, each call
/// with its own auxiliary matrix and bias (set per call on the plan's
/// descriptor, one plan per epilogue).
TEST_F(GemmPlansTest, GeluAuxBiasAndItsGradient) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  constexpr int64_t m = 3, n = 5, k = 4, ld = 8;
  alignas(256) float x[m * k], w[n * k], bias[n], y[m * n];
  // Both auxiliary matrices 256-byte aligned, so that alignment makes no
  // plan.
  alignas(256) float pre0[m * ld], pre1[m * ld], dz[m * k], dx[m * n];
  float *pre[2] = {pre0, pre1};
  for (auto [v, size] : {std::pair{x, m * k}, std::pair{w, n * k},
                         std::pair{bias, n}, std::pair{dz, m * k}})
    for (int64_t i = 0; i < size; ++i)
      v[i] = u(rng);
  for (int copy = 0; copy < 2; ++copy) {
    SCOPED_TRACE(::testing::Message() << "auxiliary matrix " << copy);
    std::fill(pre[copy], pre[copy] + m * ld, -7.0f);
    RowMajorGemm forward{m, n, k, false, /*transB=*/true, k, k, n};
    forward.epilogue = kEpilogueGeluAuxBias;
    forward.ldAux = ld;
    ASSERT_EQ(plans.run(forward, x, w, y, 0.0f, bias, pre[copy]), "");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < ld; ++j) {
        if (j >= n) {
          EXPECT_EQ(pre[copy][i * ld + j], -7.0f);
          continue;
        }
        double sum = bias[j];
        for (int64_t l = 0; l < k; ++l)
          sum += double(x[i * k + l]) * w[j * k + l];
        EXPECT_NEAR(pre[copy][i * ld + j], sum, 1e-5) << i << ", " << j;
        EXPECT_NEAR(y[i * n + j], gelu(sum), 1e-5) << i << ", " << j;
      }
    // dx = (dz · W') · gelu'(pre), W' = the [k, n] weight of the next layer.
    RowMajorGemm backward{m, n, k, false, false, k, n, n};
    backward.epilogue = kEpilogueDGelu;
    backward.ldAux = ld;
    ASSERT_EQ(plans.run(backward, dz, w, dx, 0.0f, nullptr, pre[copy]), "");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double grad = 0;
        for (int64_t l = 0; l < k; ++l)
          grad += double(dz[i * k + l]) * w[l * n + j];
        EXPECT_NEAR(dx[i * n + j], grad * geluDerivative(pre[copy][i * ld + j]),
                    1e-5)
            << i << ", " << j;
      }
  }
  EXPECT_EQ(plans.size(), 2u);
  EXPECT_EQ(fake.descs[0]->epilogue, kEpilogueGeluAuxBias);
  EXPECT_EQ(fake.descs[1]->epilogue, kEpilogueDGelu);
  EXPECT_EQ(fake.descs[1]->bias, nullptr);
  EXPECT_EQ(fake.descs[1]->auxLd, ld);
}

TEST_F(GemmPlansTest, RefusesAGeluEpilogueCuBLASLtCannotRun) {
  alignas(256) float a[64] = {}, b[64] = {}, c[64] = {}, bias[8] = {},
                     aux[64] = {};
  RowMajorGemm g{4, 8, 2, false, false, 2, 8, 8};
  g.epilogue = kEpilogueGeluAuxBias;
  g.ldAux = 8;
  auto refused = [&](const std::string &problem) {
    return problem.find("needs an auxiliary matrix") != std::string::npos;
  };
  EXPECT_TRUE(refused(plans.run(g, a, b, c, 0.0f, bias)));
  g.ldAux = 12; // not a multiple of 8
  EXPECT_TRUE(refused(plans.run(g, a, b, c, 0.0f, bias, aux)));
  g.ldAux = 0; // below the row's 8 elements
  EXPECT_TRUE(refused(plans.run(g, a, b, c, 0.0f, bias, aux)));
  g.ldAux = 8;
  g.aType = g.bType = kR16BF;
  EXPECT_TRUE(refused(plans.run(g, a, b, c, 0.0f, bias, aux)));
  g.aType = g.bType = kR32F;
  EXPECT_NE(plans.run(g, a, b, c, 0.0f, nullptr, aux).find("bias vector"),
            std::string::npos);
  EXPECT_EQ(fake.matmuls, 0);
  EXPECT_EQ(plans.size(), 0u);
}

/// A bf16 step's linear layer: bf16 x, W and bias, the ReLU's output in
/// bf16 (D's type), the bias per column and the ReLU applied, against
/// float64 within bf16's rounding.
TEST_F(GemmPlansTest, BF16ReluBiasEpilogueWritesBF16) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int64_t m = 3, n = 8, k = 5;
  alignas(256) uint16_t x[m * k], w[n * k], bias[n], y[m * n];
  for (auto [v, size] :
       {std::pair{x, m * k}, std::pair{w, n * k}, std::pair{bias, n}})
    for (int64_t i = 0; i < size; ++i)
      v[i] = toBF16(u(rng));
  RowMajorGemm g{m, n, k, false, /*transB=*/true, k, k, n};
  g.aType = g.bType = g.cType = kR16BF;
  g.epilogue = kEpilogueReluBias;
  ASSERT_EQ(plans.run(g, x, w, y, 0.0f, bias), "");
  EXPECT_EQ(fake.layouts[2]->type, kR16BF);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = fromBF16(bias[j]);
      for (int64_t l = 0; l < k; ++l)
        want += double(fromBF16(x[i * k + l])) * fromBF16(w[j * k + l]);
      EXPECT_NEAR(fromBF16(y[i * n + j]), std::max(want, 0.0),
                  std::abs(want) / 128 + 1e-6)
          << i << ", " << j;
    }
  // fp32 C with bf16 operands is allowed too; another 16-bit C is not.
  g.cType = kR16F;
  EXPECT_NE(plans.run(g, x, w, y, 0.0f, bias).find("of the operands' type"),
            std::string::npos);
}

/// The entry points the compiled step calls, on the plans of a fake
/// cuBLASLt (cuda::setCublasLtPlans): their memref descriptors (allocated
/// and aligned pointers, offset, sizes, strides) unpacked into the
/// row-major GEMM, the GELU input's row stride as the auxiliary matrix's
/// leading dimension (16: padded rows), against float64.
TEST_F(GemmPlansTest, GeluEntryPointsUnpackTheirMemrefs) {
  char entryWorkspace[16];
  int entryStream;
  gaccrt::cuda::setCublasLtPlans(std::make_unique<GemmPlans>(
      fakeApi, nullptr, entryWorkspace, sizeof(entryWorkspace), &entryStream));
  (void)gaccrt::cuda::lastError();
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  constexpr int64_t m = 3, n = 8, k = 4, ld = 16;
  alignas(256) float x[m * k], w[n * k], bias[n], y[m * n], pre[m * ld];
  alignas(256) float dz[m * k], w2[k * n], dx[m * n];
  for (auto [v, size] :
       {std::pair{x, m * k}, std::pair{w, n * k}, std::pair{bias, n},
        std::pair{dz, m * k}, std::pair{w2, k * n}})
    for (int64_t i = 0; i < size; ++i)
      v[i] = u(rng);
  // y = gelu(x·wᵀ + bias), pre = the sum: A [m, k], B [n, k] transposed.
  gacc_cublaslt_sgemm_gelu_bias(x, x, 0, m, k, k, 1, w, w, 0, n, k, k, 1, y, y,
                                0, m, n, n, 1, bias, bias, 0, n, 1, pre, pre, 0,
                                m, n, ld, 1, /*transA=*/0, /*transB=*/1, 0.0f,
                                /*inputs=*/0);
  ASSERT_EQ(gaccrt::cuda::lastError(), "");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias[j];
      for (int64_t l = 0; l < k; ++l)
        sum += double(x[i * k + l]) * w[j * k + l];
      EXPECT_NEAR(pre[i * ld + j], sum, 1e-5) << i << ", " << j;
      EXPECT_NEAR(y[i * n + j], gelu(sum), 1e-5) << i << ", " << j;
    }
  // dx = (dz·w2) · gelu'(pre): A [m, k], B [k, n].
  gacc_cublaslt_sgemm_gelu_grad(dz, dz, 0, m, k, k, 1, w2, w2, 0, k, n, n, 1,
                                dx, dx, 0, m, n, n, 1, pre, pre, 0, m, n, ld, 1,
                                0, 0, 0.0f, 0);
  ASSERT_EQ(gaccrt::cuda::lastError(), "");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double grad = 0;
      for (int64_t l = 0; l < k; ++l)
        grad += double(dz[i * k + l]) * w2[l * n + j];
      EXPECT_NEAR(dx[i * n + j], grad * geluDerivative(pre[i * ld + j]), 1e-5)
          << i << ", " << j;
    }
  // A GELU input of 2 rows for a 3-row product: recorded, nothing queued.
  int before = fake.matmuls;
  gacc_cublaslt_sgemm_gelu_grad(dz, dz, 0, m, k, k, 1, w2, w2, 0, k, n, n, 1,
                                dx, dx, 0, m, n, n, 1, pre, pre, 0, 2, n, ld, 1,
                                0, 0, 0.0f, 0);
  EXPECT_NE(gaccrt::cuda::lastError().find("the GELU input is 2 x 8"),
            std::string::npos);
  EXPECT_EQ(fake.matmuls, before);
  gaccrt::cuda::setCublasLtPlans(nullptr);
}

} // namespace
