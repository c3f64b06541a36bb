//===- CudaGraph.cpp - a stream's work captured once, replayed ------------===//
//
// Stream capture (cuStreamBeginCapture_v2 .. cuStreamEndCapture),
// cuGraphInstantiateWithFlags and cuGraphLaunch, with every failure named
// and nothing left half-built.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaGraph.h"

using namespace gaccrt::cuda;

namespace {
thread_local bool capturingNow = false;

/// Sets capturingNow for its scope.
struct CaptureScope {
  CaptureScope() { capturingNow = true; }
  ~CaptureScope() { capturingNow = false; }
};
} // namespace

bool gaccrt::cuda::capturing() { return capturingNow; }

CapturedWork::~CapturedWork() { release(); }

void CapturedWork::release() {
  if (exec)
    d.cuGraphExecDestroy(exec);
  if (graph)
    d.cuGraphDestroy(graph);
  exec = nullptr;
  graph = nullptr;
}

std::string CapturedWork::capture(CUstream stream,
                                  llvm::function_ref<std::string()> enqueue) {
  if (!d.cuStreamBeginCapture || !d.cuStreamEndCapture ||
      !d.cuGraphInstantiateWithFlags || !d.cuGraphLaunch ||
      !d.cuGraphExecDestroy || !d.cuGraphDestroy)
    return "the CUDA driver has no graph entry points "
           "(cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags, ...)";
  if (CUresult r = d.cuStreamBeginCapture(stream, kCaptureModeThreadLocal))
    return describe(d, "cuStreamBeginCapture_v2", r);
  std::string failure;
  {
    CaptureScope scope;
    failure = enqueue();
  }
  // The capture ends whatever happened, so the stream runs work again.
  CUgraph captured = nullptr;
  CUresult ended = d.cuStreamEndCapture(stream, &captured);
  if (failure.empty() && ended)
    failure = describe(d, "cuStreamEndCapture", ended);
  if (failure.empty() && !captured)
    failure = "cuStreamEndCapture returned no graph";
  CUgraphExec instance = nullptr;
  if (failure.empty())
    if (CUresult r = d.cuGraphInstantiateWithFlags(&instance, captured, 0))
      failure = describe(d, "cuGraphInstantiateWithFlags", r);
  if (!failure.empty()) {
    if (captured)
      d.cuGraphDestroy(captured);
    return failure;
  }
  release();
  graph = captured;
  exec = instance;
  return "";
}

std::string CapturedWork::launch(CUstream stream) {
  if (!exec)
    return "no captured graph to launch";
  if (CUresult r = d.cuGraphLaunch(exec, stream))
    return describe(d, "cuGraphLaunch", r);
  return "";
}
