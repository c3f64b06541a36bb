//===- MemoryPlan.cpp - the static peak-memory plan of a step -------------===//
//
// Reads the live buffers of a bufferized training step over its ops, and
// the driver that compiles a copy of the model for a micro-batch size to
// plan it. The table, JSON and picture are in MemoryPlanOutput.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/MemoryPlan.h"
#include "passes/analysis/BufferPlacement.h"
#include "passes/Pipelines.h"

#include "abi/MemoryABI.h"
#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::gacc;
namespace abi = ::gacc::abi;

uint64_t mlir::gacc::total(const MemoryBytes &bytes) {
  uint64_t sum = 0;
  for (uint64_t b : bytes)
    sum += b;
  return sum;
}

namespace {

/// Bytes of a buffer of `type` on `target`, as the runtime allocates it,
/// its elements sized by the step's data layout (bufferBytes). Scalars on
/// the device come from the scalar pool (counted whole as workspace), so
/// they add nothing here.
FailureOr<uint64_t> blockBytes(MemRefType type, const DataLayout &layout,
                               bool device) {
  std::optional<uint64_t> bytes = bufferBytes(type, layout);
  if (!bytes)
    return failure();
  if (!device)
    return abi::roundToBlocks(*bytes, abi::kHostAlignment);
  if (*bytes <= abi::kDeviceScalarBytes)
    return uint64_t(0);
  return abi::roundToBlocks(*bytes, abi::kDeviceAlignment);
}

/// The fp32 elements a buffer of `type` spans (its strided layout's reach
/// from the first element to the last), where its layout is static.
std::optional<uint64_t> spannedElements(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  uint64_t span = 1;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0)
      return uint64_t(0);
    if (ShapedType::isDynamic(stride))
      return std::nullopt;
    span += uint64_t(size - 1) * uint64_t(std::abs(stride));
  }
  return span;
}

/// The CPU's GEMM workspace: the fp32 copies of the bf16 or fp16 factors
/// of the step's products (the runtime widens them, gacc_sgemm_bf16, into
/// one buffer per factor that grows to the largest and is kept).
uint64_t widenedFactorBytes(func::FuncOp step) {
  uint64_t most[2] = {0, 0};
  step.walk([&](Operation *op) {
    if (!isa<MatmulAccumulateOp, linalg::MatmulOp, linalg::BatchMatmulOp>(op))
      return;
    for (auto [i, factor] : llvm::enumerate(op->getOperands().take_front(2))) {
      auto type = dyn_cast<MemRefType>(factor.getType());
      if (!type || type.getElementTypeBitWidth() != 16)
        return;
      uint64_t elements = spannedElements(type).value_or(
          uint64_t(type.hasStaticShape() ? type.getNumElements() : 0));
      most[i] = std::max(most[i], elements * sizeof(float));
    }
  });
  uint64_t bytes = 0;
  for (uint64_t m : most)
    if (m)
      bytes += abi::roundToBlocks(m, abi::kHostAlignment);
  return bytes;
}

} // namespace

std::string mlir::gacc::describeLocation(Location loc) {
  std::string text;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      text = (file.getFilename().strref() + ":" +
              llvm::Twine(file.getLine()) + ":" +
              llvm::Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

FailureOr<MemoryPlan> mlir::gacc::analyzeMemoryPlan(func::FuncOp step,
                                                    const StepSignature &sig,
                                                    StringRef target) {
  bool device = target == "cuda";
  MemoryPlan plan;
  plan.step = sig.name;
  plan.target = target.str();
  plan.microBatch = sig.microBatch;
  plan.accumSteps = sig.accumSteps;
  DataLayout layout = DataLayout::closest(step);

  // Persistent: the step's buffer arguments, by their place in the ABI.
  MemoryBytes persistent{};
  for (BlockArgument arg : step.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      continue;
    FailureOr<uint64_t> bytes = blockBytes(type, layout, device);
    if (failed(bytes))
      return step.emitError("the memory plan needs static shapes, argument ")
             << arg.getArgNumber() << " is " << type;
    unsigned i = arg.getArgNumber();
    MemoryKind kind = i < sig.numParams         ? MemoryKind::Parameters
                      : i < sig.stateArg(0, 0)  ? MemoryKind::Accumulators
                      : i < sig.statisticArg(0) ? MemoryKind::OptimizerState
                      : i < sig.inputArg(0)     ? MemoryKind::Statistics
                                                : MemoryKind::WindowInputs;
    persistent[unsigned(kind)] += *bytes;
  }
  if (device)
    persistent[unsigned(MemoryKind::Workspace)] +=
        abi::kCublasWorkspaceBytes + abi::kDeviceScalarPoolBytes;
  else
    persistent[unsigned(MemoryKind::Workspace)] += widenedFactorBytes(step);

  // Transient: every allocation of the step, live from its alloc to its
  // dealloc in the same block (to the end of the step without one).
  Linearized l = linearize(step);
  struct Range {
    unsigned begin, end;
    uint64_t bytes;
    MemoryKind kind;
    bool inArena;
  };
  // On the CPU most of them lie in the step arena at offsets of their own
  // (gacc-place-transient-buffers); the others are allocated as they run.
  llvm::DenseSet<Operation *> inArena;
  if (!device && isEntryFunction(step)) {
    TransientPlacement placed = placeTransientBuffers(step);
    plan.arenaBytes = placed.layout.bytes;
    for (memref::AllocOp alloc : placed.allocs)
      inArena.insert(alloc);
  }
  SmallVector<Range> ranges;
  SmallVector<unsigned> boundaries;
  step.walk([&](PhaseBeginOp op) {
    if (op.getPhase() == StepPhase::backward)
      boundaries.push_back(l.position[op]);
  });
  WalkResult walk = step.walk([&](Operation *op) {
    if (!isa<memref::AllocOp, memref::AllocaOp>(op))
      return WalkResult::advance();
    auto type = cast<MemRefType>(op->getResult(0).getType());
    FailureOr<uint64_t> bytes = blockBytes(type, layout, device);
    if (failed(bytes)) {
      op->emitError("the memory plan needs static shapes, got ") << type;
      return WalkResult::interrupt();
    }
    LiveInterval interval = liveIntervalOf(op, l, step, *bytes);
    unsigned begin = interval.begin, end = interval.end;
    bool activation = llvm::any_of(boundaries, [&](unsigned b) {
      return begin < b && b < end;
    });
    ranges.push_back({begin, end, *bytes,
                      activation ? MemoryKind::Activations
                                 : MemoryKind::Temporaries,
                      inArena.contains(op)});
    if (activation)
      plan.activationsAcrossBoundary += *bytes;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  for (auto [op, phase] : llvm::zip(l.timeline, l.phases)) {
    MemoryPoint point;
    point.op = op->getName().getStringRef().str();
    point.location = describeLocation(op->getLoc());
    point.phase = phase ? stringifyStepPhase(*phase).str() : "setup";
    point.live = persistent;
    unsigned at = l.position[op];
    uint64_t outsideArena = 0;
    for (const Range &r : ranges)
      if (r.begin < at && at < r.end) {
        point.live[unsigned(r.kind)] += r.bytes;
        if (!r.inArena)
          outsideArena += r.bytes;
      }
    plan.heldPeakBytes = std::max(
        plan.heldPeakBytes, total(persistent) + plan.arenaBytes + outsideArena);
    plan.timeline.push_back(std::move(point));
  }
  if (plan.timeline.empty()) {
    MemoryPoint point;
    point.op = "func.return";
    point.phase = "update";
    point.live = persistent;
    plan.timeline.push_back(point);
  }
  for (size_t i = 0; i < plan.timeline.size(); ++i)
    if (total(plan.timeline[i].live) > plan.peakBytes())
      plan.peakPoint = i;
  plan.heldPeakBytes = std::max(plan.heldPeakBytes, plan.peakBytes());
  return plan;
}

FailureOr<MemoryPlan> mlir::gacc::planTrainingStepMemory(
    ModuleOp model, StringRef stepName, int64_t m, StringRef target,
    const GAccExpandAccumulationPassOptions &expand,
    const StepToBuffersOptions &options) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(model->clone()));
  PassManager pm(model->getContext());
  GAccSetAccumulationSchedulePassOptions schedule;
  schedule.microBatch = m > 0 ? uint64_t(m) : 0;
  schedule.ragged = true;
  pm.addPass(createGAccSetAccumulationSchedulePass(schedule));
  if (failed(pm.run(*copy)))
    return failure();
  // The signature is read after re-specializing, before differentiating.
  auto step = copy->lookupSymbol<TrainStepOp>(stepName);
  if (!step)
    return model.emitError("no gacc.train_step @") << stepName;
  FailureOr<StepSignature> sig = getStepSignature(step);
  if (failed(sig))
    return failure();
  PassManager lower(model->getContext());
  buildTrainingStepToBuffersPipeline(lower, expand, options);
  if (failed(lower.run(*copy)))
    return failure();
  auto func = copy->lookupSymbol<func::FuncOp>(stepName);
  if (!func)
    return model.emitError("the step function @")
           << stepName << " is missing after bufferization";
  return analyzeMemoryPlan(func, *sig, target);
}
