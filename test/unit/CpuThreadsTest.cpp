//===- CpuThreadsTest.cpp - the CPU team and the GEMMs split over it ------===//
//
// gaccrt::parallelFor on a team of two libomp threads (every task once,
// task i on thread i mod 2, a nested call serial on its caller's thread,
// every task once when libomp gives the region one thread), the default
// team size of a rank, and the runtime's GEMMs with the team: the slab
// plan, a product split into row slabs (m > n) and column slabs (n > m),
// every transpose pair, beta 0 and 1, padded leading dimensions, and a
// batch spread over the threads, against a float64 product (C's padding
// untouched).
//
//===----------------------------------------------------------------------===//

#include "runtime/Blas.h"
#include "runtime/CpuThreads.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <dlfcn.h>
#include <random>
#include <thread>
#include <vector>

namespace {

/// A team of two threads for one test; one thread again after it.
struct TwoThreads : ::testing::Test {
  void SetUp() override { ASSERT_EQ(gaccrt::setCpuThreads(2), ""); }
  void TearDown() override { gaccrt::setCpuThreads(1); }
};

struct Record {
  std::vector<std::atomic<int>> runs;
  std::vector<std::thread::id> thread;
  explicit Record(int64_t n) : runs(n), thread(n) {}
};

TEST_F(TwoThreads, ParallelForRunsEveryTaskOnceOnBothThreads) {
  ASSERT_EQ(gaccrt::cpuThreads(), 2);
  Record r(37);
  gaccrt::parallelFor(
      37,
      [](void *ctx, int64_t i) {
        auto &rec = *static_cast<Record *>(ctx);
        ++rec.runs[i];
        rec.thread[i] = std::this_thread::get_id();
      },
      &r);
  for (int64_t i = 0; i < 37; ++i) {
    EXPECT_EQ(r.runs[i], 1) << "task " << i;
    EXPECT_EQ(r.thread[i], r.thread[i % 2]) << "task " << i;
  }
  EXPECT_EQ(r.thread[0], std::this_thread::get_id())
      << "the caller is thread 0";
  EXPECT_NE(r.thread[0], r.thread[1]);
}

TEST_F(TwoThreads, NestedParallelForRunsOnItsCallersThread) {
  Record outer(2);
  gaccrt::parallelFor(
      2,
      [](void *ctx, int64_t i) {
        auto &rec = *static_cast<Record *>(ctx);
        rec.thread[i] = std::this_thread::get_id();
        Record inner(4);
        gaccrt::parallelFor(
            4,
            [](void *c, int64_t j) {
              static_cast<Record *>(c)->thread[j] = std::this_thread::get_id();
            },
            &inner);
        for (std::thread::id id : inner.thread)
          if (id == rec.thread[i])
            ++rec.runs[i];
      },
      &outer);
  EXPECT_EQ(outer.runs[0], 4);
  EXPECT_EQ(outer.runs[1], 4);
}

TEST_F(TwoThreads, ParallelForRunsEveryTaskWhenTheRegionGetsOneThread) {
  // No active parallel level: libomp runs each region on its caller alone.
  using SetLevels = void (*)(int);
  using GetLevels = int (*)();
  auto set = reinterpret_cast<SetLevels>(
      dlsym(RTLD_DEFAULT, "omp_set_max_active_levels"));
  auto get = reinterpret_cast<GetLevels>(
      dlsym(RTLD_DEFAULT, "omp_get_max_active_levels"));
  ASSERT_TRUE(set && get);
  int levels = get();
  set(0);
  Record r(9);
  gaccrt::parallelFor(
      9, [](void *ctx, int64_t i) { ++static_cast<Record *>(ctx)->runs[i]; },
      &r);
  set(levels);
  for (int64_t i = 0; i < 9; ++i)
    EXPECT_EQ(r.runs[i], 1) << "task " << i;
}

TEST(CpuThreads, DefaultIsTheRanksShareOfTheMachine) {
  // One process on a machine of 16: all of it; bound to 4: those 4.
  EXPECT_EQ(gaccrt::defaultCpuThreads(16, 16, 1), 16);
  EXPECT_EQ(gaccrt::defaultCpuThreads(4, 16, 1), 4);
  // Four ranks sharing the machine (bound to nothing, or to a socket of
  // 8 CPUs each two ranks share): 4 each.
  EXPECT_EQ(gaccrt::defaultCpuThreads(16, 16, 4), 4);
  EXPECT_EQ(gaccrt::defaultCpuThreads(8, 16, 4), 4);
  // Each rank bound to its own core; more ranks than CPUs.
  EXPECT_EQ(gaccrt::defaultCpuThreads(1, 2, 2), 1);
  EXPECT_EQ(gaccrt::defaultCpuThreads(2, 2, 8), 1);
  EXPECT_EQ(gaccrt::defaultCpuThreads(1), gaccrt::availableCpus());
  EXPECT_EQ(gaccrt::setCpuThreads(1), "");
  EXPECT_EQ(gaccrt::cpuThreads(), 1);
}

TEST(CpuThreads, GemmSlabPlan) {
  // Below 2^20 multiply-adds, or one thread: one slab.
  EXPECT_EQ(gaccrt::planGemmSplit(64, 64, 64, 2).slabs, 1);
  EXPECT_EQ(gaccrt::planGemmSplit(301, 67, 64, 1).slabs, 1);
  gaccrt::GemmSplit rows = gaccrt::planGemmSplit(301, 67, 64, 2);
  EXPECT_TRUE(rows.splitRows);
  EXPECT_EQ(rows.chunk, 151);
  EXPECT_EQ(rows.slabs, 2);
  // Columns in whole 16-column blocks: 333 / 2 = 167 -> 176.
  gaccrt::GemmSplit cols = gaccrt::planGemmSplit(40, 333, 96, 2);
  EXPECT_FALSE(cols.splitRows);
  EXPECT_EQ(cols.chunk, 176);
  EXPECT_EQ(cols.slabs, 2);
  // 16 threads over 8000 rows: 16 slabs of 500.
  gaccrt::GemmSplit many = gaccrt::planGemmSplit(8000, 40, 64, 16);
  EXPECT_TRUE(many.splitRows);
  EXPECT_EQ(many.chunk, 500);
  EXPECT_EQ(many.slabs, 16);
  // 16 threads over 40 columns: 3 slabs of 16 columns (the last 8).
  EXPECT_EQ(gaccrt::planGemmSplit(20, 40, 4096, 16).slabs, 3);
}

/// A row-major matrix with a padded leading dimension, filled at random.
struct Matrix {
  int64_t rows, cols, ld;
  std::vector<float> data;
  Matrix(int64_t r, int64_t c, std::mt19937 &rng)
      : rows(r), cols(c), ld(c + 3), data(r * (c + 3)) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float &v : data)
      v = u(rng);
  }
  float at(int64_t i, int64_t j) const { return data[i * ld + j]; }
};

/// Checks C = beta·C + op(A)·op(B) for matrix `b` of a batch (of one when
/// `batch` is 1) against float64: within a few float32 roundings of
/// sum |a·b|, C's padding unchanged.
void expectProduct(const std::vector<Matrix> &as, const std::vector<Matrix> &bs,
                   const std::vector<Matrix> &before,
                   const std::vector<Matrix> &after, bool transA, bool transB,
                   float beta) {
  for (size_t q = 0; q < as.size(); ++q) {
    const Matrix &a = as[q], &b = bs[q], &c0 = before[q], &c = after[q];
    int64_t k = transA ? a.rows : a.cols;
    for (int64_t i = 0; i < c.rows; ++i)
      for (int64_t j = 0; j < c.ld; ++j) {
        if (j >= c.cols) {
          ASSERT_EQ(c.at(i, j), c0.at(i, j)) << "padding " << i << ", " << j;
          continue;
        }
        double sum = beta == 0.0f ? 0.0 : double(c0.at(i, j));
        double magnitude = std::fabs(sum);
        for (int64_t r = 0; r < k; ++r) {
          double p = double(transA ? a.at(r, i) : a.at(i, r)) *
                     (transB ? b.at(j, r) : b.at(r, j));
          sum += p;
          magnitude += std::fabs(p);
        }
        ASSERT_NEAR(c.at(i, j), sum, 4e-7 * (magnitude + 1))
            << "matrix " << q << " at " << i << ", " << j;
      }
  }
}

struct Shape {
  int64_t m, n, k;
};

/// One product of each transpose pair and beta, through gacc_sgemm, or a
/// batch of `batch` through gacc_sgemm_batched (matrices of a batch at a
/// batch stride of one padded matrix).
void checkGemms(Shape s, int64_t batch) {
  std::mt19937 rng(unsigned(s.m * 7919 + s.n * 31 + s.k + batch));
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (float beta : {0.0f, 1.0f}) {
        SCOPED_TRACE(::testing::Message()
                     << "m " << s.m << " n " << s.n << " k " << s.k
                     << " transA " << ta << " transB " << tb << " beta "
                     << beta << " batch " << batch);
        std::vector<Matrix> a, b, c;
        for (int64_t q = 0; q < batch; ++q) {
          a.emplace_back(ta ? s.k : s.m, ta ? s.m : s.k, rng);
          b.emplace_back(tb ? s.n : s.k, tb ? s.k : s.n, rng);
          c.emplace_back(s.m, s.n, rng);
        }
        // One buffer per operand, the matrices one after another.
        auto pack = [](const std::vector<Matrix> &ms) {
          std::vector<float> all;
          for (const Matrix &x : ms)
            all.insert(all.end(), x.data.begin(), x.data.end());
          return all;
        };
        std::vector<float> pa = pack(a), pb = pack(b), pc = pack(c);
        const Matrix &a0 = a[0], &b0 = b[0], &c0 = c[0];
        int64_t sa = a0.data.size(), sb = b0.data.size(), sc = c0.data.size();
        if (batch == 1)
          gacc_sgemm(pa.data(), pa.data(), 0, a0.rows, a0.cols, a0.ld, 1,
                     pb.data(), pb.data(), 0, b0.rows, b0.cols, b0.ld, 1,
                     pc.data(), pc.data(), 0, c0.rows, c0.cols, c0.ld, 1, ta,
                     tb, beta);
        else
          gacc_sgemm_batched(pa.data(), pa.data(), 0, batch, a0.rows, a0.cols,
                             sa, a0.ld, 1, pb.data(), pb.data(), 0, batch,
                             b0.rows, b0.cols, sb, b0.ld, 1, pc.data(),
                             pc.data(), 0, batch, c0.rows, c0.cols, sc, c0.ld,
                             1, ta, tb, beta);
        std::vector<Matrix> after = c;
        for (int64_t q = 0; q < batch; ++q)
          std::copy(pc.begin() + q * sc, pc.begin() + (q + 1) * sc,
                    after[q].data.begin());
        expectProduct(a, b, c, after, ta, tb, beta);
      }
}

// 301 × 67 × 64: 1.3 M multiply-adds, rows split 151 + 150.
TEST_F(TwoThreads, GemmSplitIntoRowSlabs) { checkGemms({301, 67, 64}, 1); }

// 40 × 333 × 96: 1.3 M multiply-adds, columns split 176 + 157 (whole
// 16-column blocks).
TEST_F(TwoThreads, GemmSplitIntoColumnSlabs) { checkGemms({40, 333, 96}, 1); }

// 8 × 300 × 512: 1.2 M multiply-adds of a few-row product (SmallGemm's
// kernels where A is not transposed), columns split 160 + 140.
TEST_F(TwoThreads, FewRowGemmSplitIntoColumnSlabs) {
  checkGemms({8, 300, 512}, 1);
}

// Three matrices of 33 × 20 × 17 spread over two threads.
TEST_F(TwoThreads, BatchedGemmOneMatrixPerThread) {
  checkGemms({33, 20, 17}, 3);
}

} // namespace
