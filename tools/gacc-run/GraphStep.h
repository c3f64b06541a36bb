//===- GraphStep.h - the optimizer step as one CUDA graph -------*- C++ -*-===//
//
// --cuda-graph: the step's graph form (abi/StepABI.h; NVVM pipeline
// cuda-graph=true) called with its scalars in device buffers, eagerly on
// the first optimizer step, captured into a CUDA graph on the second and
// replayed from then on, the transient memory it used held for the
// graph's life.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_GRAPHSTEP_H
#define GACC_TOOLS_GACCRUN_GRAPHSTEP_H

#include "runtime/CpuJit.h"
#include "runtime/CudaGraph.h"

#include <memory>
#include <vector>

namespace gaccrt {

class GraphStep {
public:
  GraphStep() = default;
  ~GraphStep();
  GraphStep(const GraphStep &) = delete;
  GraphStep &operator=(const GraphStep &) = delete;

  /// Binds the graph form's arguments to `eager` (the step's arguments
  /// on the device: buffers, with lr, step, first_sample and the loss
  /// scale as values): each scalar becomes a rank-0 buffer of the device's
  /// scalar pool, and `numResults` f32 results (the step's, abi::StepResult)
  /// a buffer after them.
  llvm::Error bind(const std::vector<JitArg> &eager, unsigned numResults);

  /// One optimizer step of `step` with the scalars of `eager` (the
  /// arguments bind saw, their values updated): the first call runs the
  /// host code, the second captures it and launches the graph, later ones
  /// launch it; then waits for the device and reads the results. Errors:
  /// a failed capture (named; rerun without --cuda-graph) or launch.
  llvm::Error run(CpuJit &jit, const std::string &step,
                  const std::vector<JitArg> &eager,
                  llvm::MutableArrayRef<float> results);

  /// Optimizer steps run, and whether a graph replays them.
  int64_t calls() const { return callsDone; }
  bool captured() const { return work && work->ready(); }

private:
  std::vector<JitArg> args;
  /// Per eager argument: its scalar's buffer (null for buffers).
  std::vector<void *> scalars;
  float *resultsBuffer = nullptr;
  const cuda::Driver *driver = nullptr;
  std::unique_ptr<cuda::CapturedWork> work;
  std::vector<uint64_t> lease;
  int64_t callsDone = 0;

  llvm::Error callOnce(CpuJit &jit, const std::string &step);
};

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_GRAPHSTEP_H
