//===- BufferPlacement.h - transient buffers at compile-time offsets -*- C++ -*-===//
//
// The live ranges of the buffers a bufferized function allocates, over its
// ops in program order, and their placement in one arena at offsets chosen
// at compile time, so that buffers live at the same time never overlap.
// Shared by the memory plan (passes/analysis/MemoryPlan.h), which reports
// the arena's size, and gacc-place-transient-buffers, which rewrites the
// allocations into views of the arena: the plan's arena is the step's.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_BUFFERPLACEMENT_H
#define GACC_PASSES_ANALYSIS_BUFFERPLACEMENT_H

#include "dialect/GAccDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

#include <string>

namespace mlir::gacc {

/// A function's ops in program order, one position each (the ops nested in
/// an op's regions right after it), the last position inside each op with
/// regions, and the timeline ops of the memory plan (those that touch a
/// buffer or call, at the level of the step's control flow) with the phase
/// of each: that of the last gacc.phase_begin before it (forward or
/// backward of a micro-batch, update), or none (the setup) before the
/// first.
/// The weight gradients gacc-defer-weight-gradients computes once per
/// window, right after the micro-batch loop, are backward too.
struct Linearized {
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, unsigned> lastInside;
  SmallVector<Operation *> timeline;
  SmallVector<std::optional<StepPhase>> phases;
};
Linearized linearize(func::FuncOp func);

/// Where a buffer is live, in linearize's positions: from its allocation
/// (`begin`) to its memref.dealloc in the same block (`end`); without one,
/// to the last position of the op that holds the block (the end of the
/// function for its own block). Two ranges overlap when
/// a.begin < b.end && b.begin < a.end.
struct LiveInterval {
  unsigned begin = 0, end = 0;
  uint64_t bytes = 0;
};
LiveInterval liveIntervalOf(Operation *alloc, const Linearized &order,
                            func::FuncOp func, uint64_t bytes);

/// Offsets for `intervals` in one arena, each a multiple of `alignment`,
/// such that overlapping intervals occupy disjoint bytes; `bytes` is the
/// arena's size (the largest offset + size). The largest buffer is placed
/// first, each at the smallest gap among the already placed buffers that
/// overlap it in time where it fits, else above them: the greedy-by-size
/// offset calculation of Pisarchyk and Lee, "Efficient Memory Management
/// for Deep Neural Net Inference" (2020), TensorFlow Lite's
/// GreedyMemoryPlanner. Ties go to the earlier interval, so the layout is
/// a function of the intervals alone.
struct ArenaLayout {
  SmallVector<uint64_t> offsets;
  uint64_t bytes = 0;
};
ArenaLayout packIntervals(ArrayRef<LiveInterval> intervals,
                          uint64_t alignment);

/// Bytes of the elements of a buffer of `type`, each sized by `layout`
/// (an index buffer, such as a loop's bounds, is as wide as the target's
/// index type); nothing for a dynamic shape. The one definition the memory
/// plan and the arena's placement share; each rounds it to its blocks
/// (abi/MemoryABI.h). Nothing also for a size past 2^63 - 1 bytes.
std::optional<uint64_t> bufferBytes(MemRefType type, const DataLayout &layout);

/// The buffers of `func` that one arena can hold, in program order, and
/// their layout: each memref.alloc of a static shape, identity layout and
/// an integer, index or float element type that one memref.dealloc in its own
/// block frees, where no other dealloc may free it or a view of it
/// (BufferViewFlowAnalysis). Sizes are host blocks (abi/MemoryABI.h's
/// kHostAlignment), offsets multiples of that alignment. None where their
/// sizes sum past 2^63 - 1 bytes (the arena's offsets would wrap).
struct TransientPlacement {
  SmallVector<memref::AllocOp> allocs;
  SmallVector<memref::DeallocOp> deallocs;
  ArenaLayout layout;
};
TransientPlacement placeTransientBuffers(func::FuncOp func);

/// Whether `func` is one the runtime calls and nothing in its module does
/// (a public definition without symbol uses) and that runs no code from
/// outside its module (no call, direct or through its callees, of a
/// function only declared here: another module's step, which takes the
/// same arena). Only such a function may take the arena at its entry: no
/// two of them run at once on a thread.
bool isEntryFunction(func::FuncOp func);

/// Whether `v` is a view of the step arena at a constant offset made by
/// gacc-place-transient-buffers: one placed buffer, which (like an
/// allocation) overlaps no other buffer live at the same time.
bool isPlacedBuffer(Value v);

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_BUFFERPLACEMENT_H
