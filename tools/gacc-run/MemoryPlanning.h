//===- MemoryPlanning.h - the memory plan before a run ----------*- C++ -*-===//
//
// What gacc-run does with the static memory plan before it trains:
// --memory-budget chooses the micro-batch, --memory-plan prints the plan,
// --memory-plan-svg draws it, and a step whose planned peak cannot fit
// this machine's memory (or the device's) stops here.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_MEMORYPLANNING_H
#define GACC_TOOLS_GACCRUN_MEMORYPLANNING_H

#include "passes/Passes.h"
#include "passes/analysis/MemoryPlan.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace gaccrt {

/// What the command line asks of the memory plan.
struct MemoryPlanRequest {
  /// --memory-budget's size in bytes (parseByteSize; none without it).
  std::optional<uint64_t> budget;
  /// --memory-plan: print the plan.
  bool print = false;
  /// --memory-plan-svg: where to draw it ("" for nowhere).
  std::string svgPath;
  /// --recompute was given: the budget's search keeps the model's
  /// recomputation instead of also trying the cheap policy.
  bool recomputeGiven = false;
  /// The CPU step places its transient buffers in the step arena (not with
  /// --no-step-arena, whose plan then has no arena line).
  bool stepArena = true;
  /// The to-buffers pipeline's options of the step that runs (its deferred
  /// weight gradients; the budget's search plans without them).
  mlir::gacc::StepToBuffersOptions toBuffers;
};

/// The memory plan of `step` on `target` ("cpu" or "cuda"): --memory-budget
/// chooses the fewest micro-batches whose planned peak fits the budget
/// (capped at this process's memory on the CPU; with the cheap
/// recomputation policy kept when it lets a larger micro-batch fit, unless
/// --recompute was given) and re-specializes `model` for it; --memory-plan
/// prints the plan and --memory-plan-svg draws it; on the cuda target the
/// model's micro-batch is checked against the device. `plan` is set when
/// any of them asks for it. Errors (reported, exit status 2): a bad budget,
/// no micro-batch within it, a CPU step whose largest tensor, persistent
/// state or planned peak exceeds this process's memory, a device step whose
/// peak exceeds the memory gacc reserves on the device; an SVG that cannot
/// be written (exit status 1, a failure of the machine, not the input).
/// Returns the exit status (0: go on).
int planMemory(mlir::ModuleOp model, mlir::gacc::TrainStepOp step,
               llvm::StringRef target,
               const mlir::gacc::GAccExpandAccumulationPassOptions &expand,
               const MemoryPlanRequest &request,
               std::optional<mlir::gacc::MemoryPlan> &plan);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_MEMORYPLANNING_H
