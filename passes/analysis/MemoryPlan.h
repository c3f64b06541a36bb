//===- MemoryPlan.h - the static peak-memory plan of a step -----*- C++ -*-===//
//
// What a compiled training step holds in memory, and when: the persistent
// buffers (parameters, gradient accumulators, optimizer state, persistent
// statistics, the window's inputs), the buffers each micro-batch allocates
// (activations, live across the forward/backward boundary; temporaries),
// and the target's workspaces, over the ops of the bufferized step; the
// peak and the op where it occurs. Computed before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_MEMORYPLAN_H
#define GACC_PASSES_ANALYSIS_MEMORYPLAN_H

#include "passes/Passes.h"
#include "passes/StepSignature.h"

#include "llvm/Support/JSON.h"

#include <array>
#include <string>
#include <vector>

namespace mlir::gacc {

/// What a byte of the plan is for.
enum class MemoryKind : unsigned {
  Parameters,
  Accumulators,
  OptimizerState,
  Statistics,
  WindowInputs,
  Activations,
  Temporaries,
  Workspace,
};
constexpr unsigned kNumMemoryKinds = 8;

/// The table's name of `kind` ("gradient accumulators", ...) and the JSON
/// key ("accumulators", ...).
llvm::StringRef describe(MemoryKind kind);
llvm::StringRef jsonKey(MemoryKind kind);

/// "file:line:col" of the first file location in `loc`, or "".
std::string describeLocation(Location loc);
/// The picture's series: persistent, activations, temporaries, workspace.
llvm::StringRef seriesOf(MemoryKind kind);

/// Bytes per kind.
using MemoryBytes = std::array<uint64_t, kNumMemoryKinds>;
uint64_t total(const MemoryBytes &bytes);

/// One op of the step's timeline: the ops that touch memory, in program
/// order (one micro-batch of the loop stands for all of them).
struct MemoryPoint {
  std::string op;       // "linalg.matmul"
  std::string location; // "examples/fashion_mlp.mlir:20:8", or ""
  /// "setup", "forward" or "backward" (of a micro-batch), "update".
  std::string phase;
  MemoryBytes live{};   // bytes live while the op runs
};

struct MemoryPlan {
  std::string step, target;
  int64_t microBatch = 0, accumSteps = 0;
  std::vector<MemoryPoint> timeline;
  /// Index of the peak in `timeline` (the first op where the live bytes
  /// are largest).
  size_t peakPoint = 0;
  /// Activations: bytes written in the forward and live at the
  /// forward/backward boundary.
  uint64_t activationsAcrossBoundary = 0;

  /// On the CPU: the bytes of the step arena, which holds the transient
  /// buffers at offsets chosen at compile time (BufferPlacement.h); at
  /// least the transient bytes live at the peak, more where the buffers do
  /// not pack without gaps. 0 on cuda.
  uint64_t arenaBytes = 0;
  /// The most the step holds at once: on the CPU the persistent bytes, the
  /// arena and the largest live bytes of the buffers outside it; never
  /// less than the peak. What a memory budget must cover.
  uint64_t heldPeakBytes = 0;

  const MemoryBytes &atPeak() const { return timeline[peakPoint].live; }
  uint64_t peakBytes() const { return total(atPeak()); }
};

/// Reads the plan off `step`, the step function of `sig` after the
/// to-buffers pipeline (buildTrainingStepToBuffersPipeline), for `target`
/// ("cpu": host blocks rounded to 64 bytes, the fp32 copies of the largest
/// bf16/fp16 product's factors as workspace; "cuda": arena
/// blocks rounded to 256 bytes, scalars in the scalar pool, the cuBLAS
/// workspace). Buffers live from their memref.alloc to their
/// memref.dealloc (to the end of the step without one). Fails with a
/// diagnostic on a buffer whose size is not static.
FailureOr<MemoryPlan> analyzeMemoryPlan(func::FuncOp step,
                                        const StepSignature &sig,
                                        llvm::StringRef target);

/// Compiles a copy of `model` for micro-batch `m` (0: the model's; the
/// number of accumulation steps becomes ceil(effective batch / m)) through
/// the to-buffers pipeline with `expand`'s and `options`' options (as the
/// step that runs: deferred weight gradients, fp32 storage, fused
/// attention) and plans the memory of training step `stepName`. `model` is not changed. Fails with a
/// diagnostic (an m the step cannot be re-typed for, a compile error).
FailureOr<MemoryPlan>
planTrainingStepMemory(ModuleOp model, llvm::StringRef stepName, int64_t m,
                       llvm::StringRef target,
                       const GAccExpandAccumulationPassOptions &expand = {},
                       const StepToBuffersOptions &options = {});

/// The plan as a table (bytes and MiB per kind at the peak, the peak and
/// its op) and as JSON.
void printMemoryPlan(const MemoryPlan &plan, llvm::raw_ostream &os);
llvm::json::Value toJSON(const MemoryPlan &plan);

/// The live bytes over the step's ops as an SVG picture, stacked by
/// series.
void drawMemoryPlanSvg(const MemoryPlan &plan, llvm::raw_ostream &os);

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_MEMORYPLAN_H
