//===- CudaGraph.h - a stream's work captured once, replayed ----*- C++ -*-===//
//
// CUDA graphs through the driver API (stream capture, instantiation,
// replay) for the cuda target's whole optimizer step: the host code of the
// step's graph form (abi/StepABI.h) queues its kernels and GEMMs on the
// process's stream while the stream captures, and each later optimizer
// step replays them with one launch. The driver is passed in, so the call
// sequence is unit-tested against a fake one.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CUDAGRAPH_H
#define GACC_RUNTIME_CUDAGRAPH_H

#include "runtime/CudaDriver.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace gaccrt::cuda {

/// cuStreamBeginCapture_v2's mode: a call of this thread that is unsafe
/// during capture (a synchronization, a synchronous copy) fails and
/// invalidates the capture instead of running.
constexpr int kCaptureModeThreadLocal = 1;

/// One captured stream of work: empty until capture() succeeds, then
/// replayed by launch(); destroys its graph with it.
class CapturedWork {
public:
  explicit CapturedWork(const Driver &driver) : d(driver) {}
  ~CapturedWork();
  CapturedWork(const CapturedWork &) = delete;
  CapturedWork &operator=(const CapturedWork &) = delete;

  /// Captures what `enqueue` queues on `stream` (thread-local capture) and
  /// instantiates it. `enqueue` returns "" or why it failed; while it runs,
  /// capturing() is true. Returns "" or the reason: no graph entry points
  /// in the driver, the failing driver call and its error (an unsafe call
  /// during capture shows as cuStreamEndCapture's
  /// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), or `enqueue`'s failure. On a
  /// failure nothing is kept, the stream is not left capturing, and a
  /// previous capture stays in place.
  std::string capture(CUstream stream,
                      llvm::function_ref<std::string()> enqueue);
  /// Queues one replay on `stream`; "" or the reason.
  std::string launch(CUstream stream);
  bool ready() const { return exec != nullptr; }

private:
  const Driver &d;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  void release();
};

/// Whether this thread is capturing a stream (CapturedWork::capture): the
/// host code's waits (gacc_cuda_synchronize) then wait for nothing, since
/// capture runs nothing and a wait would invalidate it.
bool capturing();

} // namespace gaccrt::cuda

#endif // GACC_RUNTIME_CUDAGRAPH_H
