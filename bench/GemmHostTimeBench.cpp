//===- GemmHostTimeBench.cpp - gacc-bench-gemm ----------------------------===//
//
// Finds where the host time of the cuda target's GEMMs goes (issue 15:
// cublasSgemm and cublasLtMatmul took 108-158 us of host time per call in
// gacc-run on an H200, and the device waited for it) by timing one
// micro-batch's GEMMs of fashion_mlp alone, through gacc's own runtime
// entry points (gacc_cublas_sgemm, gacc_cublaslt_sgemm), with the operands
// in each kind of memory gacc could use:
//
//   device          cuMemAlloc; the input copied with cuMemcpyHtoD
//   managed         a cuMemAllocManaged range per buffer, prefetched; the
//                   host writes the input, which is prefetched again
//   arena           gacc-run's layout: buffers carved from the managed
//                   arena (cuda::reserveManagedArena), the input in a
//                   managed range of its own (cuda::mallocHostWritten)
//   arena+input     the layout before 2026-12-06: the input carved from the
//                   arena too, next to the weights
//
// Each round is one micro-batch as gacc-run queues it: the host writes the
// input, a fill of the output gradient (cuMemsetD32Async, the "first
// kernel" of the 2026-12-04 profile), then three GEMMs (forward, weight
// gradient accumulated with beta 1, a small product), then a wait. Prints
// the device's managed-memory attributes and, per memory kind and GEMM
// library, the medians of the fill's stream time, the GEMMs' host time per
// call and stream time per call, and the round's wall time.
//
//   gacc-bench-gemm [--rounds 200]
//
// Exit status 2 where no CUDA device or cuBLAS is found (named).
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

using namespace gaccrt;
using namespace gaccrt::cuda;
namespace cl = llvm::cl;

static cl::OptionCategory cat("gacc-bench-gemm options");
static cl::opt<int> rounds("rounds",
                           cl::desc("Micro-batches timed per row (after 10 "
                                    "not timed; default 200)"),
                           cl::init(200), cl::cat(cat));

namespace {
/// fashion_mlp's first layer at micro-batch 32: X [32, 784], W [256, 784],
/// H = X·Wᵀ [32, 256], dH [32, 256], G += dHᵀ·X [256, 784]; and the second
/// layer's forward, Y [32, 10] = H·Vᵀ with V [10, 256].
constexpr int64_t kM = 32, kIn = 784, kHidden = 256, kOut = 10;

struct Buffers {
  float *x, *w, *h, *dh, *g, *v, *y;
};

/// How the input reaches the device before each round.
enum class InputWrite { Copy, HostWrite };

struct Layout {
  const char *name;
  InputWrite write;
  /// Allocates a buffer of `floats` elements (the input first).
  std::function<float *(int64_t floats, bool isInput)> alloc;
  /// Whether gacc_cuda_free takes the blocks back after the row.
  bool fromArena;
};

struct Row {
  double fillUs, hostUs, streamUs, roundUs;
};

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

CUdeviceptr ptr(const float *p) { return reinterpret_cast<CUdeviceptr>(p); }

/// One row-major product through gacc's entry point: C = beta·C +
/// op(A)·op(B), A [aRows, aCols], B [bRows, bCols], C [cRows, cCols].
void gemm(bool lt, float *a, int64_t aRows, int64_t aCols, float *b,
          int64_t bRows, int64_t bCols, float *c, int64_t cRows, int64_t cCols,
          bool transA, bool transB, float beta) {
  if (lt)
    gacc_cublaslt_sgemm(a, a, 0, aRows, aCols, aCols, 1, b, b, 0, bRows, bCols,
                        bCols, 1, c, c, 0, cRows, cCols, cCols, 1, transA,
                        transB, beta, /*fp32=*/0);
  else
    gacc_cublas_sgemm(a, a, 0, aRows, aCols, aCols, 1, b, b, 0, bRows, bCols,
                      bCols, 1, c, c, 0, cRows, cCols, cCols, 1, transA, transB,
                      beta);
}

/// Times `rounds` micro-batches (after 10 untimed) with the buffers of
/// `layout`, or returns the first failure.
llvm::Expected<Row> timeLayout(const Driver &d, const Layout &layout, bool lt,
                               std::vector<float *> &owned) {
  auto fail = [](const std::string &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
  };
  Buffers b{};
  b.x = layout.alloc(kM * kIn, true);
  b.w = layout.alloc(kHidden * kIn, false);
  b.h = layout.alloc(kM * kHidden, false);
  b.dh = layout.alloc(kM * kHidden, false);
  b.g = layout.alloc(kHidden * kIn, false);
  b.v = layout.alloc(kOut * kHidden, false);
  b.y = layout.alloc(kM * kOut, false);
  for (float *p : {b.x, b.w, b.h, b.dh, b.g, b.v, b.y}) {
    if (!p)
      return fail(std::string(layout.name) +
                  ": allocation failed: " + lastError());
    owned.push_back(p);
  }
  CUstream stream = static_cast<CUstream>(processStream());
  CUevent e[3];
  for (CUevent &ev : e)
    if (CUresult r = d.cuEventCreate(&ev, 0))
      return fail(describe(d, "cuEventCreate", r));
  std::vector<float> input(kM * kIn, 0.5f);
  std::vector<double> fill, host, streamPer, round;
  for (int k = 0; k < rounds + 10; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    if (layout.write == InputWrite::Copy) {
      if (CUresult r = d.cuMemcpyHtoD(ptr(b.x), input.data(),
                                      input.size() * sizeof(float)))
        return fail(describe(d, "cuMemcpyHtoD", r));
    } else {
      std::copy(input.begin(), input.end(), b.x);
      prefetchToDevice(b.x, input.size() * sizeof(float));
    }
    d.cuEventRecord(e[0], stream);
    d.cuMemsetD32Async(ptr(b.dh), 0x3c23d70a /* 0.01f */, kM * kHidden, stream);
    d.cuEventRecord(e[1], stream);
    double hostUs = 0;
    auto timed = [&](auto &&call) {
      auto s = std::chrono::steady_clock::now();
      call();
      hostUs += std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - s)
                    .count();
    };
    timed([&] {
      gemm(lt, b.x, kM, kIn, b.w, kHidden, kIn, b.h, kM, kHidden, false, true,
           0.0f);
    });
    timed([&] {
      gemm(lt, b.dh, kM, kHidden, b.x, kM, kIn, b.g, kHidden, kIn, true, false,
           1.0f);
    });
    timed([&] {
      gemm(lt, b.h, kM, kHidden, b.v, kOut, kHidden, b.y, kM, kOut, false, true,
           0.0f);
    });
    d.cuEventRecord(e[2], stream);
    if (CUresult r = d.cuStreamSynchronize(stream))
      return fail(describe(d, "cuStreamSynchronize", r));
    if (std::string err = lastError(); !err.empty())
      return fail(std::string(layout.name) + ": " + err);
    double roundUs = std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    float fillMs = 0, gemmMs = 0;
    d.cuEventElapsedTime(&fillMs, e[0], e[1]);
    d.cuEventElapsedTime(&gemmMs, e[1], e[2]);
    if (k < 10)
      continue;
    fill.push_back(1000.0 * fillMs);
    host.push_back(hostUs / 3);
    streamPer.push_back(1000.0 * gemmMs / 3);
    round.push_back(roundUs);
  }
  for (CUevent ev : e)
    d.cuEventDestroy(ev);
  return Row{median(fill), median(host), median(streamPer), median(round)};
}

void printAttributes(const Driver &d) {
  DeviceInfo info = deviceInfo();
  llvm::outs() << "device " << info.ordinal << ": " << info.name << ", "
               << info.memoryBytes / (1 << 20) << " MiB\n";
  struct {
    int attribute;
    const char *name;
  } attributes[] = {{83, "managed memory"},
                    {89, "concurrent managed access"},
                    {88, "pageable memory access"},
                    {100, "pageable access through host page tables"},
                    {101, "host reads managed memory on the device directly"}};
  for (auto [attribute, name] : attributes) {
    int value = -1;
    d.cuDeviceGetAttribute(&value, attribute, info.ordinal);
    llvm::outs() << "  " << name << ": " << value << "\n";
  }
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "gacc-bench-gemm: host and stream time of the cuda target's GEMMs "
      "with their operands in device, managed and arena memory\n");
  if (rounds < 1) {
    llvm::errs() << "gacc-bench-gemm: --rounds must be at least 1\n";
    return 1;
  }
  std::string reason;
  const Driver *d = load(reason);
  if (!d) {
    llvm::errs() << "gacc-bench-gemm: " << reason << "\n";
    return 2;
  }
  printAttributes(*d);
  if (std::string problem = reserveManagedArena(stepMemoryBytes());
      !problem.empty()) {
    llvm::errs() << "gacc-bench-gemm: " << problem << "\n";
    return 1;
  }
  std::string cublas = loadCublas(), cublasLt = loadCublasLt();
  if (!cublas.empty() || !cublasLt.empty()) {
    llvm::errs() << "gacc-bench-gemm: " << cublas << " " << cublasLt << "\n";
    return 2;
  }
  auto deviceAlloc = [&](int64_t floats, bool) -> float * {
    CUdeviceptr p = 0;
    return d->cuMemAlloc(&p, floats * sizeof(float))
               ? nullptr
               : reinterpret_cast<float *>(p);
  };
  auto managedAlloc = [&](int64_t floats, bool) -> float * {
    CUdeviceptr p = 0;
    if (d->cuMemAllocManaged(&p, floats * sizeof(float), /*GLOBAL=*/1))
      return nullptr;
    prefetchToDevice(reinterpret_cast<void *>(p), floats * sizeof(float));
    return reinterpret_cast<float *>(p);
  };
  auto arenaAlloc = [](int64_t floats, bool isInput) -> float * {
    return static_cast<float *>(isInput ? mallocHostWritten(floats * 4)
                                        : gacc_cuda_malloc(floats * 4));
  };
  auto arenaInputAlloc = [](int64_t floats, bool) -> float * {
    return static_cast<float *>(gacc_cuda_malloc(floats * 4));
  };
  Layout layouts[] = {
      {"device", InputWrite::Copy, deviceAlloc, false},
      {"managed", InputWrite::HostWrite, managedAlloc, false},
      {"arena", InputWrite::HostWrite, arenaAlloc, true},
      {"arena+input", InputWrite::HostWrite, arenaInputAlloc, true}};
  llvm::outs() << llvm::format(
      "fashion_mlp's micro-batch (32 x 784 -> 256 -> 10), medians of %d "
      "rounds: fill = cuMemsetD32Async of [32, 256] after the host wrote "
      "the input\n%-12s %-10s %10s %14s %16s %10s\n",
      int(rounds), "memory", "library", "fill (us)", "GEMM host (us)",
      "GEMM stream (us)", "round (us)");
  int failures = 0;
  for (const Layout &layout : layouts)
    for (bool lt : {false, true}) {
      std::vector<float *> owned;
      llvm::Expected<Row> row = timeLayout(*d, layout, lt, owned);
      // The arena's blocks go back for the next row; the other ranges stay
      // (a few MiB in all).
      if (layout.fromArena)
        for (float *p : owned)
          gacc_cuda_free(p);
      if (!row) {
        llvm::errs() << "gacc-bench-gemm: " << llvm::toString(row.takeError())
                     << "\n";
        ++failures;
        continue;
      }
      llvm::outs() << llvm::format("%-12s %-10s %10.2f %14.2f %16.2f %10.1f\n",
                                   layout.name, lt ? "cuBLASLt" : "cuBLAS",
                                   row->fillUs, row->hostUs, row->streamUs,
                                   row->roundUs);
    }
  return failures ? 1 : 0;
}
