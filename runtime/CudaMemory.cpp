//===- CudaMemory.cpp - managed memory and GEMMs of the cuda target -------===//
//
// The managed-memory arena behind gacc_cuda_malloc/free (one
// cuMemAllocManaged reservation carved by DeviceArena, with peak
// accounting, a host-preferred pool for scalars and the small buffers the
// host reads or writes between steps, and ranges of their own for the
// window's inputs, which copyToDevice fills), prefetching, and
// the GEMMs over libcublas (gacc_cublas_sgemm) or libcublasLt
// (gacc_cublaslt_sgemm), both opened at run time.
//
//===----------------------------------------------------------------------===//

#include "abi/MemoryABI.h"
#include "abi/RuntimeABI.h"
#include "runtime/CublasLt.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"
#include "runtime/DeviceArena.h"
#include "runtime/Symbols.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

using namespace gaccrt;
using namespace gaccrt::cuda;

namespace {
std::mutex arenaMutex;
std::unique_ptr<DeviceArena> managed;
/// Blocks of at most kScalarBytes (the step's rank-0 values: the loss, the
/// count, sums to a scalar) come from a pool of their own whose preferred
/// location is host memory, mapped for the device: the host reads a
/// micro-batch's loss without migrating a page that also holds the
/// device's buffers, and the device writes it without a fault.
std::unique_ptr<DeviceArena> scalars;
constexpr uint64_t kScalarBytes = ::gacc::abi::kDeviceScalarBytes;
constexpr uint64_t kScalarPoolBytes = ::gacc::abi::kDeviceScalarPoolBytes;

/// While a graph captures: the blocks handed out, by pool (0 scalars,
/// 1 the arena), with their rounded sizes.
bool recording = false;
std::vector<std::pair<uint64_t, uint64_t>> recorded[2];

uint64_t roundedSize(uint64_t bytes) {
  uint64_t a = DeviceArena::kAlignment;
  return (std::max<uint64_t>(bytes, 1) + a - 1) / a * a;
}

using cublasHandle_t = struct cublasContext *;
struct Cublas {
  int (*create)(cublasHandle_t *);
  int (*setStream)(cublasHandle_t, void *);
  int (*setWorkspace)(cublasHandle_t, void *, size_t);
  int (*sgemm)(cublasHandle_t, int, int, int, int, int, const float *,
               const float *, int, const float *, int, const float *, float *,
               int);
  /// cublasGemmEx: operands of any cudaDataType_t, a cublasComputeType_t
  /// and an algorithm (CUBLAS_GEMM_DEFAULT, -1).
  int (*gemmEx)(cublasHandle_t, int, int, int, int, int, const void *,
                const void *, int32_t, int, const void *, int32_t, int,
                const void *, void *, int32_t, int, int32_t, int32_t);
  cublasHandle_t handle = nullptr;
} cublas;
bool cublasLoaded = false;
/// Device memory of the GEMM libraries' workspaces (counted in the peak).
uint64_t cublasWorkspaceBytes = 0;
/// Bytes of the host-written buffers (mallocHostWritten), counted in the
/// peak.
uint64_t hostWrittenBytes = 0;

/// The cuBLASLt handle's plans (gacc-run --cuda-gemm=cublaslt).
std::unique_ptr<cublaslt::GemmPlans> cublasLt;
/// 32 MiB of workspace per GEMM library, what the cuBLAS documentation
/// recommends for Hopper (as PyTorch sets it).
constexpr size_t kWorkspaceBytes = ::gacc::abi::kCublasWorkspaceBytes;

void report(const std::string &message) {
  std::fprintf(stderr, "gacc-run: cuda: %s\n", message.c_str());
}

/// Device memory for a GEMM library's workspace, counted in the peak.
std::string allocateWorkspace(CUdeviceptr &workspace) {
  std::string reason;
  const Driver *d = load(reason);
  if (!d)
    return reason;
  if (CUresult r = d->cuMemAlloc(&workspace, kWorkspaceBytes))
    return describe("cuMemAlloc (GEMM workspace)", r);
  std::lock_guard<std::mutex> lock(arenaMutex);
  cublasWorkspaceBytes += kWorkspaceBytes;
  return "";
}
} // namespace

std::string gaccrt::cuda::reserveManagedArena(uint64_t bytes) {
  std::string reason;
  const Driver *d = load(reason);
  if (!d)
    return reason;
  CUdeviceptr base = 0;
  if (CUresult r = d->cuMemAllocManaged(&base, bytes, /*GLOBAL=*/1))
    return describe("cuMemAllocManaged", r);
  CUdeviceptr scalarBase = 0;
  if (CUresult r =
          d->cuMemAllocManaged(&scalarBase, kScalarPoolBytes, /*GLOBAL=*/1)) {
    d->cuMemFree(base);
    return describe("cuMemAllocManaged", r);
  }
  // Best effort: without the advice the pool still keeps scalars off the
  // pages of the device's buffers.
  if (d->cuMemAdvise) {
    CUmemLocation host{/*CU_MEM_LOCATION_TYPE_HOST=*/2, 0};
    CUmemLocation device{/*CU_MEM_LOCATION_TYPE_DEVICE=*/1,
                         deviceInfo().ordinal};
    d->cuMemAdvise(scalarBase, kScalarPoolBytes,
                   /*CU_MEM_ADVISE_SET_PREFERRED_LOCATION=*/3, host);
    d->cuMemAdvise(scalarBase, kScalarPoolBytes,
                   /*CU_MEM_ADVISE_SET_ACCESSED_BY=*/5, device);
  }
  std::lock_guard<std::mutex> lock(arenaMutex);
  managed = std::make_unique<DeviceArena>(base, bytes);
  scalars = std::make_unique<DeviceArena>(scalarBase, kScalarPoolBytes);
  return "";
}

uint64_t gaccrt::cuda::managedPeakBytes() {
  std::lock_guard<std::mutex> lock(arenaMutex);
  return managed ? managed->peak() + scalars->capacity() + hostWrittenBytes +
                       cublasWorkspaceBytes
                 : 0;
}

uint64_t gaccrt::cuda::managedCapacityBytes() {
  std::lock_guard<std::mutex> lock(arenaMutex);
  return managed ? managed->capacity() : 0;
}

extern "C" void *gacc_cuda_malloc(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(arenaMutex);
  if (!managed)
    return nullptr;
  if (bytes <= kScalarBytes)
    if (auto p = scalars->allocate(bytes)) {
      if (recording)
        recorded[0].push_back({*p, roundedSize(bytes)});
      return reinterpret_cast<void *>(*p);
    }
  auto p = managed->allocate(bytes);
  if (p && recording)
    recorded[1].push_back({*p, roundedSize(bytes)});
  if (!p) {
    // Recorded, so that the step's caller reports this as the cause
    // rather than the fault of the kernel that gets the null pointer.
    recordFailure("device memory arena exhausted (" + std::to_string(bytes) +
                  " bytes requested, " + std::to_string(managed->inUse()) +
                  " of " + std::to_string(managed->capacity()) + " in use)");
    return nullptr;
  }
  return reinterpret_cast<void *>(*p);
}

extern "C" void gacc_cuda_free(void *pointer) {
  std::lock_guard<std::mutex> lock(arenaMutex);
  if (!managed || !pointer)
    return;
  // A block of either pool; free() refuses an address that is not one.
  if (!scalars->free(reinterpret_cast<uint64_t>(pointer)))
    managed->free(reinterpret_cast<uint64_t>(pointer));
}

void gaccrt::cuda::beginRecordingAllocations() {
  std::lock_guard<std::mutex> lock(arenaMutex);
  recording = true;
  recorded[0].clear();
  recorded[1].clear();
}

std::string gaccrt::cuda::leaseRecordedAllocations(
    std::vector<uint64_t> &lease) {
  std::lock_guard<std::mutex> lock(arenaMutex);
  recording = false;
  if (!managed)
    return "no device memory arena";
  DeviceArena *pools[2] = {scalars.get(), managed.get()};
  std::string failure;
  for (int k = 0; k < 2 && failure.empty(); ++k)
    for (auto [start, bytes] : unionOfRanges(std::move(recorded[k]))) {
      if (!pools[k]->reserve(start, bytes)) {
        failure = "device memory the captured step used is still in use "
                  "after it returned (" +
                  std::to_string(bytes) + " bytes)";
        break;
      }
      lease.push_back(start);
    }
  recorded[0].clear();
  recorded[1].clear();
  return failure;
}

void gaccrt::cuda::releaseLease(std::vector<uint64_t> &lease) {
  {
    std::lock_guard<std::mutex> lock(arenaMutex);
    if (managed)
      for (uint64_t start : lease)
        if (!scalars->free(start))
          managed->free(start);
  }
  lease.clear();
}

void *gaccrt::cuda::mallocHostWritten(uint64_t bytes) {
  std::string reason;
  const Driver *d = load(reason);
  if (!d) {
    recordFailure(reason);
    return nullptr;
  }
  CUdeviceptr p = 0;
  uint64_t rounded = roundedSize(bytes);
  if (CUresult r = d->cuMemAllocManaged(&p, rounded, /*GLOBAL=*/1)) {
    recordFailure(describe("cuMemAllocManaged (a window input)", r));
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(arenaMutex);
  hostWrittenBytes += rounded;
  return reinterpret_cast<void *>(p);
}

void *gaccrt::cuda::mallocHostShared(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(arenaMutex);
  if (!scalars) {
    recordFailure("no device memory arena (host-shared block of " +
                  std::to_string(bytes) + " bytes)");
    return nullptr;
  }
  auto p = scalars->allocate(bytes);
  if (!p) {
    recordFailure("the host-shared pool is full (" + std::to_string(bytes) +
                  " bytes requested, " + std::to_string(scalars->inUse()) +
                  " of " + std::to_string(scalars->capacity()) + " in use)");
    return nullptr;
  }
  if (recording)
    recorded[0].push_back({*p, roundedSize(bytes)});
  return reinterpret_cast<void *>(*p);
}

void gaccrt::cuda::copyToDevice(void *dst, const void *src, uint64_t bytes) {
  std::string reason;
  const Driver *d = load(reason);
  if (!d) {
    recordFailure(reason);
    return;
  }
  if (!bytes)
    return;
  if (CUresult r =
          d->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes,
                               static_cast<CUstream>(processStream())))
    recordFailure(describe("cuMemcpyHtoDAsync (a window input)", r));
}

void gaccrt::cuda::prefetchToDevice(const void *p, uint64_t bytes) {
  // Off after the first failure (a device without concurrent managed
  // access refuses every prefetch): said once, not every step.
  static std::atomic<bool> refused{false};
  std::string reason;
  const Driver *d = load(reason);
  if (!d || !d->cuMemPrefetchAsync || !p || !bytes || refused)
    return;
  CUmemLocation device{/*CU_MEM_LOCATION_TYPE_DEVICE=*/1, deviceInfo().ordinal};
  if (CUresult r = d->cuMemPrefetchAsync(
          reinterpret_cast<CUdeviceptr>(p), bytes, device, 0,
          static_cast<CUstream>(processStream()))) {
    refused = true;
    report(describe("cuMemPrefetchAsync", r) +
           " (inputs are no longer prefetched; kernels fault them in)");
  }
}

std::string gaccrt::cuda::loadCublas() {
  if (cublasLoaded)
    return "";
  void *lib = nullptr;
  for (const char *name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!lib)
    return "no cuBLAS (libcublas.so.13/.12 not found)";
  if (!loadSymbol(lib, cublas.create, "cublasCreate_v2") ||
      !loadSymbol(lib, cublas.setStream, "cublasSetStream_v2") ||
      !loadSymbol(lib, cublas.setWorkspace, "cublasSetWorkspace_v2") ||
      !loadSymbol(lib, cublas.sgemm, "cublasSgemm_v2") ||
      !loadSymbol(lib, cublas.gemmEx, "cublasGemmEx"))
    return "libcublas lacks cublasCreate_v2, cublasSetStream_v2, "
           "cublasSetWorkspace_v2, cublasSgemm_v2 or cublasGemmEx";
  if (int status = cublas.create(&cublas.handle))
    return "cublasCreate failed with status " + std::to_string(status);
  // GEMMs queue behind the kernels on the process's stream (in order, no
  // synchronization between them).
  if (int status = cublas.setStream(cublas.handle, processStream()))
    return "cublasSetStream failed with status " + std::to_string(status);
  // A workspace of its own for the handle, set after the stream (which
  // resets it to the library's default pool), as PyTorch does.
  CUdeviceptr workspace = 0;
  if (std::string problem = allocateWorkspace(workspace); !problem.empty())
    return problem;
  if (int status = cublas.setWorkspace(cublas.handle,
                                       reinterpret_cast<void *>(workspace),
                                       kWorkspaceBytes))
    return "cublasSetWorkspace failed with status " + std::to_string(status);
  cublasLoaded = true;
  return "";
}

std::string gaccrt::cuda::loadCublasLt() {
  if (cublasLt)
    return "";
  static cublaslt::Api api;
  if (std::string problem = cublaslt::loadApi(api); !problem.empty())
    return problem;
  cublaslt::Handle handle = nullptr;
  if (int status = api.create(&handle))
    return "cublasLtCreate failed with status " + std::to_string(status);
  CUdeviceptr workspace = 0;
  if (std::string problem = allocateWorkspace(workspace); !problem.empty())
    return problem;
  cublasLt = std::make_unique<cublaslt::GemmPlans>(
      api, handle, reinterpret_cast<void *>(workspace), kWorkspaceBytes,
      processStream());
  return "";
}

void gaccrt::cuda::setCublasLtPlans(
    std::unique_ptr<cublaslt::GemmPlans> plans) {
  cublasLt = std::move(plans);
}

std::string gaccrt::cuda::cublasLtSummary() {
  return cublasLt ? cublasLt->summary() : "";
}

/// The compute type for what a GEMM's fp32 inputs hold (abi::GemmInputs),
/// or nullopt for a value the ABI does not define.
static std::optional<int32_t> computeTypeOf(int32_t inputs) {
  using ::gacc::abi::GemmInputs;
  switch (static_cast<GemmInputs>(inputs)) {
  case GemmInputs::fp32:
    return cublaslt::kCompute32F;
  case GemmInputs::bf16:
    return cublaslt::kCompute32FFast16BF;
  case GemmInputs::fp16:
    return cublaslt::kCompute32FFast16F;
  }
  return std::nullopt;
}

/// Queues `g` through the plans, or records why it cannot.
static void runCublasLt(const char *caller, cublaslt::RowMajorGemm g,
                        int32_t inputs, const float *a, const float *b,
                        float *c, float beta, const float *bias = nullptr,
                        float *aux = nullptr) {
  if (!cublasLt) {
    recordFailure(std::string(caller) + " called before cuBLASLt was loaded");
    return;
  }
  std::optional<int32_t> compute = computeTypeOf(inputs);
  if (!compute) {
    recordFailure(std::string(caller) + ": unknown inputs " +
                  std::to_string(inputs) + " (0 fp32, 1 bf16, 2 fp16)");
    return;
  }
  g.compute = *compute;
  void *profiled = profileBegin("cublasLtMatmul");
  std::string problem = cublasLt->run(g, a, b, c, beta, bias, aux);
  profileEnd(profiled);
  if (!problem.empty())
    recordFailure(problem);
}

/// The row-major product C = op(A)·op(B) of an entry point's memrefs
/// (their sizes and strides as the descriptors give them); nullopt,
/// recorded, when an inner stride is not 1 (cuBLASLt reads rows of
/// consecutive elements).
static std::optional<cublaslt::RowMajorGemm>
rowMajorGemm(const char *caller, int64_t aS0, int64_t aS1, int64_t aSt0,
             int64_t aSt1, int64_t bSt0, int64_t bSt1, int64_t cS0, int64_t cS1,
             int64_t cSt0, int64_t cSt1, int32_t transA, int32_t transB) {
  if (aSt1 != 1 || bSt1 != 1 || cSt1 != 1) {
    recordFailure(std::string(caller) + " needs unit inner strides");
    return std::nullopt;
  }
  return cublaslt::RowMajorGemm{
      cS0, cS1, transA ? aS0 : aS1, transA != 0, transB != 0, aSt0, bSt0, cSt0};
}

/// Whether a bias of `biasS0` elements `biasSt0` apart is packed and one
/// per column of `g`'s C; recorded otherwise.
static bool packedBias(const char *caller, const cublaslt::RowMajorGemm &g,
                       int64_t biasS0, int64_t biasSt0) {
  if ((biasSt0 == 1 || biasS0 <= 1) && biasS0 == g.n)
    return true;
  recordFailure(std::string(caller) + ": a bias of " + std::to_string(biasS0) +
                " elements " + std::to_string(biasSt0) + " apart for " +
                std::to_string(g.n) + " columns (packed, one per column)");
  return false;
}

extern "C" void gacc_cublaslt_sgemm(float *, float *aAligned, int64_t aOff,
                                    int64_t aS0, int64_t aS1, int64_t aSt0,
                                    int64_t aSt1, float *, float *bAligned,
                                    int64_t bOff, int64_t, int64_t,
                                    int64_t bSt0, int64_t bSt1, float *,
                                    float *cAligned, int64_t cOff,
                                    int64_t cS0, int64_t cS1, int64_t cSt0,
                                    int64_t cSt1, int32_t transA,
                                    int32_t transB, float beta,
                                    int32_t inputs) {
  const char *caller = "gacc_cublaslt_sgemm";
  if (std::optional<cublaslt::RowMajorGemm> g =
          rowMajorGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, cS0, cS1, cSt0,
                       cSt1, transA, transB))
    runCublasLt(caller, *g, inputs, aAligned + aOff, bAligned + bOff,
                cAligned + cOff, beta);
}

/// The row-major product of an epilogue entry point's operands
/// (rowMajorGemm), with the cuBLASLt epilogue of abi::GemmEpilogue
/// `epilogue`; nullopt, recorded, when the strides are not unit, the bias
/// is not packed or not one per column (packedBias), or the ABI does not
/// define `epilogue`.
static std::optional<cublaslt::RowMajorGemm>
epilogueGemm(const char *caller, int64_t aS0, int64_t aS1, int64_t aSt0,
             int64_t aSt1, int64_t bSt0, int64_t bSt1, int64_t cS0, int64_t cS1,
             int64_t cSt0, int64_t cSt1, int64_t biasS0, int64_t biasSt0,
             int32_t transA, int32_t transB, int32_t epilogue) {
  using ::gacc::abi::GemmEpilogue;
  std::optional<cublaslt::RowMajorGemm> g =
      rowMajorGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, cS0, cS1, cSt0,
                   cSt1, transA, transB);
  if (!g || !packedBias(caller, *g, biasS0, biasSt0))
    return std::nullopt;
  if (epilogue != int32_t(GemmEpilogue::bias) &&
      epilogue != int32_t(GemmEpilogue::reluBias)) {
    recordFailure(std::string(caller) + ": unknown epilogue " +
                  std::to_string(epilogue) + " (0 bias, 1 bias and ReLU)");
    return std::nullopt;
  }
  g->epilogue = epilogue == int32_t(GemmEpilogue::bias)
                    ? cublaslt::kEpilogueBias
                    : cublaslt::kEpilogueReluBias;
  return g;
}

extern "C" void gacc_cublaslt_sgemm_epilogue(
    float *, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, float *, float *bAligned, int64_t bOff, int64_t,
    int64_t, int64_t bSt0, int64_t bSt1, float *, float *cAligned, int64_t cOff,
    int64_t cS0, int64_t cS1, int64_t cSt0, int64_t cSt1, float *,
    float *biasAligned, int64_t biasOff, int64_t biasS0, int64_t biasSt0,
    int32_t transA, int32_t transB, float beta, int32_t inputs,
    int32_t epilogue) {
  const char *caller = "gacc_cublaslt_sgemm_epilogue";
  if (std::optional<cublaslt::RowMajorGemm> g =
          epilogueGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, cS0, cS1, cSt0,
                       cSt1, biasS0, biasSt0, transA, transB, epilogue))
    runCublasLt(caller, *g, inputs, aAligned + aOff, bAligned + bOff,
                cAligned + cOff, beta, biasAligned + biasOff);
}

/// The auxiliary matrix of a GELU epilogue: X, [m, n] as the product's
/// `g` with unit inner stride, sets g.ldAux; false, recorded, otherwise.
static bool auxMatrix(const char *caller, cublaslt::RowMajorGemm &g,
                      int64_t xS0, int64_t xS1, int64_t xSt0, int64_t xSt1) {
  if (xS0 != g.m || xS1 != g.n || (xSt1 != 1 && xS1 > 1)) {
    recordFailure(std::string(caller) + ": the GELU input is " +
                  std::to_string(xS0) + " x " + std::to_string(xS1) +
                  " (inner stride " + std::to_string(xSt1) + ") for a " +
                  std::to_string(g.m) + " x " + std::to_string(g.n) +
                  " product (unit inner stride)");
    return false;
  }
  g.ldAux = xSt0;
  return true;
}

extern "C" void gacc_cublaslt_sgemm_gelu_bias(
    float *, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, float *, float *bAligned, int64_t bOff, int64_t,
    int64_t, int64_t bSt0, int64_t bSt1, float *, float *yAligned, int64_t yOff,
    int64_t yS0, int64_t yS1, int64_t ySt0, int64_t ySt1, float *,
    float *biasAligned, int64_t biasOff, int64_t biasS0, int64_t biasSt0,
    float *, float *xAligned, int64_t xOff, int64_t xS0, int64_t xS1,
    int64_t xSt0, int64_t xSt1, int32_t transA, int32_t transB, float beta,
    int32_t inputs) {
  const char *caller = "gacc_cublaslt_sgemm_gelu_bias";
  std::optional<cublaslt::RowMajorGemm> g =
      rowMajorGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, yS0, yS1, ySt0,
                   ySt1, transA, transB);
  if (!g || !packedBias(caller, *g, biasS0, biasSt0) ||
      !auxMatrix(caller, *g, xS0, xS1, xSt0, xSt1))
    return;
  g->epilogue = cublaslt::kEpilogueGeluAuxBias;
  runCublasLt(caller, *g, inputs, aAligned + aOff, bAligned + bOff,
              yAligned + yOff, beta, biasAligned + biasOff, xAligned + xOff);
}

extern "C" void gacc_cublaslt_sgemm_gelu_grad(
    float *, float *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, float *, float *bAligned, int64_t bOff, int64_t,
    int64_t, int64_t bSt0, int64_t bSt1, float *, float *yAligned, int64_t yOff,
    int64_t yS0, int64_t yS1, int64_t ySt0, int64_t ySt1, float *,
    float *xAligned, int64_t xOff, int64_t xS0, int64_t xS1, int64_t xSt0,
    int64_t xSt1, int32_t transA, int32_t transB, float beta, int32_t inputs) {
  const char *caller = "gacc_cublaslt_sgemm_gelu_grad";
  std::optional<cublaslt::RowMajorGemm> g =
      rowMajorGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, yS0, yS1, ySt0,
                   ySt1, transA, transB);
  if (!g || !auxMatrix(caller, *g, xS0, xS1, xSt0, xSt1))
    return;
  g->epilogue = cublaslt::kEpilogueDGelu;
  runCublasLt(caller, *g, inputs, aAligned + aOff, bAligned + bOff,
              yAligned + yOff, beta, nullptr, xAligned + xOff);
}

extern "C" void gacc_cublaslt_sgemm_batched(
    float *, float *aAligned, int64_t aOff, int64_t, int64_t aS1,
    int64_t aS2, int64_t aSt0, int64_t aSt1, int64_t aSt2, float *,
    float *bAligned, int64_t bOff, int64_t, int64_t, int64_t, int64_t bSt0,
    int64_t bSt1, int64_t bSt2, float *, float *cAligned, int64_t cOff,
    int64_t cS0, int64_t cS1, int64_t cS2, int64_t cSt0, int64_t cSt1,
    int64_t cSt2, int32_t transA, int32_t transB, float beta,
    int32_t inputs) {
  if (aSt2 != 1 || bSt2 != 1 || cSt2 != 1) {
    recordFailure("gacc_cublaslt_sgemm_batched needs unit inner strides");
    return;
  }
  cublaslt::RowMajorGemm g{cS1,  cS2,  transA ? aS1 : aS2, transA != 0,
                           transB != 0, aSt1, bSt1,        cSt1};
  g.batch = cS0;
  g.strideA = aSt0;
  g.strideB = bSt0;
  g.strideC = cSt0;
  runCublasLt("gacc_cublaslt_sgemm_batched", g, inputs, aAligned + aOff,
              bAligned + bOff, cAligned + cOff, beta);
}

extern "C" void gacc_cublas_sgemm(float *, float *aAligned, int64_t aOff,
                                  int64_t aS0, int64_t aS1, int64_t aSt0,
                                  int64_t aSt1, float *, float *bAligned,
                                  int64_t bOff, int64_t bS0, int64_t bS1,
                                  int64_t bSt0, int64_t bSt1, float *,
                                  float *cAligned, int64_t cOff, int64_t cS0,
                                  int64_t cS1, int64_t cSt0, int64_t cSt1,
                                  int32_t transA, int32_t transB,
                                  float beta) {
  if (!cublasLoaded) {
    recordFailure("gacc_cublas_sgemm called before cuBLAS was loaded");
    return;
  }
  if (aSt1 != 1 || bSt1 != 1 || cSt1 != 1) {
    recordFailure("gacc_cublas_sgemm needs unit inner strides");
    return;
  }
  int64_t m = cS0, n = cS1, k = transA ? aS0 : aS1;
  (void)bS0;
  if (m == 0 || n == 0)
    return;
  const float alpha = 1.0f;
  void *profiled = profileBegin("cublasSgemm");
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: B's
  // memory read column-major is Bᵀ, so the operands swap and each keeps its
  // own transpose flag (CUBLAS_OP_N = 0, CUBLAS_OP_T = 1).
  int status = cublas.sgemm(
      cublas.handle, transB ? 1 : 0, transA ? 1 : 0, int(n), int(m), int(k),
      &alpha, bAligned + bOff, int(std::max<int64_t>(bSt0, 1)),
      aAligned + aOff, int(std::max<int64_t>(aSt0, 1)), &beta,
      cAligned + cOff, int(std::max<int64_t>(cSt0, 1)));
  profileEnd(profiled);
  if (status)
    recordFailure("cublasSgemm failed with status " +
                  std::to_string(status));
  (void)aS0;
  (void)bS1;
}

// --- Products of bf16 or fp16 operands (abi::lowOperandsGemm) -------------

namespace {
/// Queues C = beta·C + op(A)·op(B) for A and B of cudaDataType_t `type`
/// (kR16BF, kR16F), C fp32, through cublasGemmEx with fp32 compute (each
/// product of the operands extended to fp32, exact; fp32 sums, on tensor
/// cores), or records why it cannot.
void cublasLowOperands(const char *caller, int32_t type, const void *a,
                       int64_t aS0, int64_t aS1, int64_t aSt0, int64_t aSt1,
                       const void *b, int64_t bSt0, int64_t bSt1, float *c,
                       int64_t cS0, int64_t cS1, int64_t cSt0, int64_t cSt1,
                       int32_t transA, int32_t transB, float beta) {
  if (!cublasLoaded) {
    recordFailure(std::string(caller) + " called before cuBLAS was loaded");
    return;
  }
  if (aSt1 != 1 || bSt1 != 1 || cSt1 != 1) {
    recordFailure(std::string(caller) + " needs unit inner strides");
    return;
  }
  int64_t m = cS0, n = cS1, k = transA ? aS0 : aS1;
  if (m == 0 || n == 0)
    return;
  const float alpha = 1.0f;
  void *profiled = profileBegin("cublasGemmEx");
  // Row-major as column-major, as gacc_cublas_sgemm.
  int status = cublas.gemmEx(
      cublas.handle, transB ? 1 : 0, transA ? 1 : 0, int(n), int(m), int(k),
      &alpha, b, type, int(std::max<int64_t>(bSt0, 1)), a, type,
      int(std::max<int64_t>(aSt0, 1)), &beta, c, cublaslt::kR32F,
      int(std::max<int64_t>(cSt0, 1)), cublaslt::kCompute32F,
      /*CUBLAS_GEMM_DEFAULT=*/-1);
  profileEnd(profiled);
  if (status)
    recordFailure("cublasGemmEx failed with status " +
                  std::to_string(status));
}

/// The same through cuBLASLt's plans (runCublasLt's, with the operands'
/// type).
void cublasLtLowOperands(const char *caller, int32_t type,
                         cublaslt::RowMajorGemm g, const void *a, const void *b,
                         void *c, float beta, const void *bias = nullptr) {
  if (!cublasLt) {
    recordFailure(std::string(caller) + " called before cuBLASLt was loaded");
    return;
  }
  g.aType = g.bType = type;
  g.compute = cublaslt::kCompute32F;
  void *profiled = profileBegin("cublasLtMatmul");
  std::string problem = cublasLt->run(g, a, b, c, beta, bias);
  profileEnd(profiled);
  if (!problem.empty())
    recordFailure(problem);
}
} // namespace

namespace {
/// cublasLtLowOperands for one row-major product, with
/// cublasLowOperands's arguments.
void cublasLtLowOperands(const char *caller, int32_t type, const void *a,
                         int64_t aS0, int64_t aS1, int64_t aSt0, int64_t aSt1,
                         const void *b, int64_t bSt0, int64_t bSt1, float *c,
                         int64_t cS0, int64_t cS1, int64_t cSt0, int64_t cSt1,
                         int32_t transA, int32_t transB, float beta) {
  if (std::optional<cublaslt::RowMajorGemm> g =
          rowMajorGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, cS0, cS1, cSt0,
                       cSt1, transA, transB))
    cublasLtLowOperands(caller, type, *g, a, b, c, beta);
}
} // namespace

// gacc_cublas_sgemm's and gacc_cublaslt_sgemm's descriptor ABI, for 16-bit
// A and B, through IMPL (cublasLowOperands or cublasLtLowOperands).
#define GACC_LOW_OPERANDS_ENTRY(NAME, TYPE, IMPL)                              \
  extern "C" void NAME(uint16_t *, uint16_t *aAligned, int64_t aOff,           \
                       int64_t aS0, int64_t aS1, int64_t aSt0, int64_t aSt1,   \
                       uint16_t *, uint16_t *bAligned, int64_t bOff, int64_t,  \
                       int64_t, int64_t bSt0, int64_t bSt1, float *,           \
                       float *cAligned, int64_t cOff, int64_t cS0,             \
                       int64_t cS1, int64_t cSt0, int64_t cSt1,                \
                       int32_t transA, int32_t transB, float beta) {           \
    IMPL(#NAME, TYPE, aAligned + aOff, aS0, aS1, aSt0, aSt1, bAligned + bOff,  \
         bSt0, bSt1, cAligned + cOff, cS0, cS1, cSt0, cSt1, transA, transB,    \
         beta);                                                                \
  }
GACC_LOW_OPERANDS_ENTRY(gacc_cublas_sgemm_bf16, cublaslt::kR16BF,
                        cublasLowOperands)
GACC_LOW_OPERANDS_ENTRY(gacc_cublas_sgemm_f16, cublaslt::kR16F,
                        cublasLowOperands)
GACC_LOW_OPERANDS_ENTRY(gacc_cublaslt_sgemm_bf16, cublaslt::kR16BF,
                        cublasLtLowOperands)
GACC_LOW_OPERANDS_ENTRY(gacc_cublaslt_sgemm_f16, cublaslt::kR16F,
                        cublasLtLowOperands)
#undef GACC_LOW_OPERANDS_ENTRY

// gacc_cublaslt_sgemm_epilogue for bf16 A, B, C and bias: the bias and ReLU
// computed in fp32 and C rounded once to bf16 (convert-gacc-to-blas leaves
// fp16 steps' layers alone).
extern "C" void gacc_cublaslt_sgemm_epilogue_bf16(
    uint16_t *, uint16_t *aAligned, int64_t aOff, int64_t aS0, int64_t aS1,
    int64_t aSt0, int64_t aSt1, uint16_t *, uint16_t *bAligned, int64_t bOff,
    int64_t, int64_t, int64_t bSt0, int64_t bSt1, uint16_t *,
    uint16_t *cAligned, int64_t cOff, int64_t cS0, int64_t cS1, int64_t cSt0,
    int64_t cSt1, uint16_t *, uint16_t *biasAligned, int64_t biasOff,
    int64_t biasS0, int64_t biasSt0, int32_t transA, int32_t transB, float beta,
    int32_t epilogue) {
  const char *caller = "gacc_cublaslt_sgemm_epilogue_bf16";
  std::optional<cublaslt::RowMajorGemm> g =
      epilogueGemm(caller, aS0, aS1, aSt0, aSt1, bSt0, bSt1, cS0, cS1, cSt0,
                   cSt1, biasS0, biasSt0, transA, transB, epilogue);
  if (!g)
    return;
  g->cType = cublaslt::kR16BF;
  cublasLtLowOperands(caller, cublaslt::kR16BF, *g, aAligned + aOff,
                      bAligned + bOff, cAligned + cOff, beta,
                      biasAligned + biasOff);
}

#define GACC_CUBLASLT_LOW_OPERANDS_BATCHED(NAME, TYPE)                         \
  extern "C" void NAME(                                                        \
      uint16_t *, uint16_t *aAligned, int64_t aOff, int64_t, int64_t aS1,      \
      int64_t aS2, int64_t aSt0, int64_t aSt1, int64_t aSt2, uint16_t *,       \
      uint16_t *bAligned, int64_t bOff, int64_t, int64_t, int64_t,             \
      int64_t bSt0, int64_t bSt1, int64_t bSt2, float *, float *cAligned,      \
      int64_t cOff, int64_t cS0, int64_t cS1, int64_t cS2, int64_t cSt0,       \
      int64_t cSt1, int64_t cSt2, int32_t transA, int32_t transB,              \
      float beta) {                                                            \
    if (aSt2 != 1 || bSt2 != 1 || cSt2 != 1) {                                 \
      recordFailure(#NAME " needs unit inner strides");                        \
      return;                                                                  \
    }                                                                          \
    cublaslt::RowMajorGemm g{cS1,         cS2,         transA ? aS1 : aS2,     \
                             transA != 0, transB != 0, aSt1,                   \
                             bSt1,        cSt1};                               \
    g.batch = cS0;                                                             \
    g.strideA = aSt0;                                                          \
    g.strideB = bSt0;                                                          \
    g.strideC = cSt0;                                                          \
    cublasLtLowOperands(#NAME, TYPE, g, aAligned + aOff, bAligned + bOff,      \
                        cAligned + cOff, beta);                                \
  }
GACC_CUBLASLT_LOW_OPERANDS_BATCHED(gacc_cublaslt_sgemm_batched_bf16,
                                   cublaslt::kR16BF)
GACC_CUBLASLT_LOW_OPERANDS_BATCHED(gacc_cublaslt_sgemm_batched_f16,
                                   cublaslt::kR16F)
#undef GACC_CUBLASLT_LOW_OPERANDS_BATCHED
