//===- ArenaKernels.h - calling the arena kernels ---------------*- C++ -*-===//
//
// The calls of the functions gacc-build-arena-kernels builds (JIT-compiled
// for the CPU, or host code launching them on a device), over one set of
// arena buffers: what gacc-run's --arena-update and gacc-bench-arena share.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_ARENAKERNELS_H
#define GACC_RUNTIME_ARENAKERNELS_H

#include "runtime/CpuJit.h"

#include <string>
#include <vector>

namespace gaccrt {

/// The buffers of one step's arenas (host, managed or device memory).
struct ArenaBuffers {
  int64_t length = 0; // elements per arena, a multiple of 4
  float *params = nullptr, *accs = nullptr;
  std::vector<float *> states;
  double *partials = nullptr;   // abi::kPartials elements
  double *sumSquares = nullptr; // 1 element
  float *count = nullptr;       // 1 element: the window's count
  int32_t *nonfinite = nullptr; // 1 element: the window's non-finite flag
};

/// acc = weight·grad (first) or acc + weight·grad over the accumulator
/// arena; `gradType` names the gradient's element type (f32, bf16, f16).
llvm::Error callAccumulate(CpuJit &jit, const std::string &step,
                           const std::string &gradType,
                           const ArenaBuffers &a, void *grad, float weight,
                           bool first);
/// sumSquares = Σ acc² (deterministic).
llvm::Error callSumSquares(CpuJit &jit, const std::string &step,
                           const ArenaBuffers &a);
/// The deferred update over every parameter (weight decay below
/// `decayEnd`), reading count, sumSquares and nonfinite from the buffers.
llvm::Error callUpdate(CpuJit &jit, const std::string &step,
                       const ArenaBuffers &a, int64_t decayEnd, float baseLr,
                       int64_t stepIndex, float lossScale);

} // namespace gaccrt

#endif // GACC_RUNTIME_ARENAKERNELS_H
