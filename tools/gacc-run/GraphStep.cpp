//===- GraphStep.cpp - the optimizer step as one CUDA graph ---------------===//
//
// Binding the graph form's scalar and result buffers, the eager first
// step, the capture (with its transient memory leased) and the replays.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/GraphStep.h"

#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"

#include <cassert>
#include <cstring>

using namespace gaccrt;

static llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--cuda-graph: " + message);
}

GraphStep::~GraphStep() {
  // The graph first: its kernels are the leased memory's only users.
  work.reset();
  cuda::releaseLease(lease);
  for (void *p : scalars)
    gacc_cuda_free(p);
  gacc_cuda_free(resultsBuffer);
}

llvm::Error GraphStep::bind(const std::vector<JitArg> &eager,
                            unsigned numResults) {
  for (const JitArg &a : eager) {
    if (a.kind != JitArg::F32 && a.kind != JitArg::I64) {
      scalars.push_back(nullptr);
      args.push_back(a);
      continue;
    }
    // The host writes them before every step: host-shared blocks.
    void *p = cuda::mallocHostShared(8);
    if (!p)
      return failure(cuda::lastError());
    scalars.push_back(p);
    args.push_back(JitArg::buffer(p, std::vector<int64_t>{}));
  }
  if (numResults) {
    // The host reads it after every step.
    resultsBuffer = static_cast<float *>(
        cuda::mallocHostShared(numResults * sizeof(float)));
    if (!resultsBuffer)
      return failure(cuda::lastError());
    args.push_back(JitArg::buffer(resultsBuffer, int64_t(numResults)));
  }
  std::string reason;
  driver = cuda::load(reason);
  if (!driver)
    return failure(reason);
  work = std::make_unique<cuda::CapturedWork>(*driver);
  return llvm::Error::success();
}

/// The host code once: its kernels queued (or captured) on the stream.
llvm::Error GraphStep::callOnce(CpuJit &jit, const std::string &step) {
  if (llvm::Error e = jit.call(step, args, {}))
    return e;
  if (std::string e = cuda::lastError(); !e.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cuda: " + e);
  return llvm::Error::success();
}

llvm::Error GraphStep::run(CpuJit &jit, const std::string &step,
                           const std::vector<JitArg> &eager,
                           llvm::MutableArrayRef<float> results) {
  assert(eager.size() == scalars.size() && "arguments other than bind's");
  // The previous step has finished (run waits below): its scalars may be
  // overwritten.
  for (size_t k = 0; k < eager.size(); ++k) {
    if (!scalars[k])
      continue;
    if (eager[k].kind == JitArg::F32)
      std::memcpy(scalars[k], &eager[k].f, sizeof(float));
    else
      std::memcpy(scalars[k], &eager[k].i, sizeof(int64_t));
  }
  void *stream = cuda::processStream();
  if (callsDone == 0) {
    // Eagerly, once: the GEMM libraries choose their plans and the module
    // loads outside the capture.
    if (llvm::Error e = callOnce(jit, step))
      return e;
  } else {
    if (!work->ready()) {
      cuda::beginRecordingAllocations();
      std::string captureFailure = work->capture(
          static_cast<cuda::CUstream>(stream), [&] {
            llvm::Error e = callOnce(jit, step);
            return e ? llvm::toString(std::move(e)) : std::string();
          });
      std::string leaseFailure = cuda::leaseRecordedAllocations(lease);
      if (!captureFailure.empty() || !leaseFailure.empty()) {
        // No graph without its memory, and no memory held for none.
        work = std::make_unique<cuda::CapturedWork>(*driver);
        cuda::releaseLease(lease);
        return failure(!captureFailure.empty()
                           ? "capturing the step failed: " + captureFailure +
                                 " (run without --cuda-graph)"
                           : leaseFailure);
      }
    }
    if (std::string e = work->launch(static_cast<cuda::CUstream>(stream));
        !e.empty())
      return failure(e);
  }
  gacc_cuda_synchronize();
  if (std::string e = cuda::lastError(); !e.empty())
    return failure(e);
  ++callsDone;
  if (resultsBuffer)
    for (size_t r = 0; r < results.size(); ++r)
      results[r] = resultsBuffer[r];
  return llvm::Error::success();
}
