//===- BufferPlacement.cpp - transient buffers at compile-time offsets ----===//
//
// Program order and live ranges of a function's buffers, the greedy-by-size
// packing of live ranges into one arena, and the choice of the buffers the
// arena holds.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/BufferPlacement.h"
#include "passes/Passes.h"

#include "abi/MemoryABI.h"
#include "abi/RuntimeABI.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <numeric>

using namespace mlir;
using namespace mlir::gacc;
namespace abi = ::gacc::abi;

namespace {

/// An op of the memory plan's timeline: one that reads or writes a buffer
/// (or calls), at the level of the step's control flow (not inside a
/// linalg body).
bool isTimelineOp(Operation *op) {
  if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
          ViewLikeOpInterface, PhaseBeginOp>(op) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (isa<RegionBranchOpInterface>(op))
    return false; // its body's ops stand for it
  Operation *parent = op->getParentOp();
  if (!isa<func::FuncOp, RegionBranchOpInterface>(parent))
    return false;
  return llvm::any_of(op->getOperandTypes(),
                      [](Type t) { return isa<MemRefType>(t); }) ||
         isa<CallOpInterface>(op);
}

/// Bytes of a buffer the arena can hold, in host blocks, or nothing.
std::optional<uint64_t> placeableBytes(memref::AllocOp alloc,
                                       const DataLayout &layout) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrIndexOrFloat() || type.getMemorySpace())
    return std::nullopt;
  std::optional<uint64_t> bytes = bufferBytes(type, layout);
  if (!bytes)
    return std::nullopt;
  return abi::roundToBlocks(*bytes, abi::kHostAlignment);
}

} // namespace

std::optional<uint64_t> mlir::gacc::bufferBytes(MemRefType type,
                                                const DataLayout &layout) {
  if (!type.hasStaticShape())
    return std::nullopt;
  // A size past 2^63 bytes is none (2^62 f32 wrapped to a small arena
  // whose views overlapped).
  std::optional<int64_t> bytes =
      int64_t(layout.getTypeSize(type.getElementType()));
  for (int64_t extent : type.getShape())
    if (bytes)
      bytes = llvm::checkedMul(*bytes, extent);
  if (!bytes)
    return std::nullopt;
  return uint64_t(*bytes);
}

Linearized mlir::gacc::linearize(func::FuncOp func) {
  Linearized l;
  unsigned next = 0;
  std::optional<StepPhase> phase; // setup, before the first marker
  std::function<void(Operation *)> visit = [&](Operation *op) {
    l.position[op] = next++;
    if (auto marker = dyn_cast<PhaseBeginOp>(op))
      phase = marker.getPhase();
    if (isTimelineOp(op)) {
      l.timeline.push_back(op);
      l.phases.push_back(phase);
    }
    if (op->getNumRegions()) {
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (Operation &inner : b)
            visit(&inner);
      l.lastInside[op] = next - 1;
    }
  };
  for (Operation &op : func.getBody().front())
    visit(&op);
  return l;
}

LiveInterval mlir::gacc::liveIntervalOf(Operation *alloc,
                                        const Linearized &order,
                                        func::FuncOp func, uint64_t bytes) {
  LiveInterval interval;
  interval.bytes = bytes;
  interval.begin = order.position.lookup(alloc);
  Operation *holder = alloc->getBlock()->getParentOp();
  interval.end = holder == func.getOperation()
                     ? unsigned(order.position.size())
                     : order.lastInside.lookup(holder);
  for (Operation *user : alloc->getResult(0).getUsers())
    if (isa<memref::DeallocOp>(user) && user->getBlock() == alloc->getBlock())
      interval.end = order.position.lookup(user);
  return interval;
}

ArenaLayout mlir::gacc::packIntervals(ArrayRef<LiveInterval> intervals,
                                      uint64_t alignment) {
  ArenaLayout layout;
  size_t n = intervals.size();
  layout.offsets.assign(n, 0);
  auto size = [&](unsigned i) {
    return abi::roundToBlocks(intervals[i].bytes, alignment);
  };
  auto overlap = [&](unsigned a, unsigned b) {
    return intervals[a].begin < intervals[b].end &&
           intervals[b].begin < intervals[a].end;
  };
  SmallVector<unsigned> order(n);
  std::iota(order.begin(), order.end(), 0u);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return intervals[a].bytes > intervals[b].bytes;
  });
  SmallVector<unsigned> placed;
  for (unsigned i : order) {
    SmallVector<unsigned> neighbours;
    for (unsigned j : placed)
      if (overlap(i, j))
        neighbours.push_back(j);
    llvm::sort(neighbours, [&](unsigned a, unsigned b) {
      return std::make_pair(layout.offsets[a], a) <
             std::make_pair(layout.offsets[b], b);
    });
    // The smallest gap between the neighbours that fits, else above them.
    uint64_t top = 0, best = 0, bestGap = UINT64_MAX;
    for (unsigned j : neighbours) {
      uint64_t gap = layout.offsets[j] > top ? layout.offsets[j] - top : 0;
      if (gap >= size(i) && gap < bestGap)
        best = top, bestGap = gap;
      top = std::max(top, layout.offsets[j] + size(j));
    }
    uint64_t offset = bestGap != UINT64_MAX ? best : top;
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, offset + size(i));
    placed.push_back(i);
  }
  return layout;
}

TransientPlacement mlir::gacc::placeTransientBuffers(func::FuncOp func) {
  TransientPlacement placement;
  SmallVector<memref::DeallocOp> allDeallocs;
  func.walk([&](memref::DeallocOp d) { allDeallocs.push_back(d); });
  BufferViewFlowAnalysis aliasing(func);
  Linearized order = linearize(func);
  SmallVector<LiveInterval> intervals;
  DataLayout dataLayout = DataLayout::closest(func);
  // The arena is at most the sum of its buffers: where that passes 2^63 - 1
  // bytes, its offsets (index constants) would wrap, so nothing is placed.
  std::optional<int64_t> sum = 0;
  func.walk([&](memref::AllocOp alloc) {
    std::optional<uint64_t> bytes = placeableBytes(alloc, dataLayout);
    if (!bytes)
      return;
    // Exactly one dealloc may free the buffer or a view of it: its own,
    // in its block.
    BufferViewFlowAnalysis::ValueSetT aliases =
        aliasing.resolve(alloc.getResult());
    memref::DeallocOp own;
    unsigned freeing = 0;
    for (memref::DeallocOp d : allDeallocs) {
      if (!aliases.contains(d.getMemref()))
        continue;
      ++freeing;
      if (d.getMemref() == alloc.getResult() &&
          d->getBlock() == alloc->getBlock())
        own = d;
    }
    if (freeing != 1 || !own)
      return;
    placement.allocs.push_back(alloc);
    placement.deallocs.push_back(own);
    intervals.push_back(liveIntervalOf(alloc, order, func, *bytes));
    if (sum && *bytes <= uint64_t(INT64_MAX))
      sum = llvm::checkedAdd(*sum, int64_t(*bytes));
    else
      sum = std::nullopt;
  });
  if (!sum)
    return TransientPlacement();
  placement.layout = packIntervals(intervals, abi::kHostAlignment);
  return placement;
}

namespace {
/// Whether `func` may run code outside its module: it calls (itself or
/// through the functions it calls) a function declared but not defined
/// here, or calls indirectly.
bool mayCallOutside(func::FuncOp func, ModuleOp module,
                    llvm::SmallPtrSetImpl<Operation *> &visited) {
  if (!visited.insert(func).second)
    return false;
  WalkResult walk = func.walk([&](CallOpInterface call) {
    auto symbol = dyn_cast_or_null<SymbolRefAttr>(call.getCallableForCallee());
    auto callee =
        symbol ? module.lookupSymbol<func::FuncOp>(symbol) : func::FuncOp();
    if (!callee || callee.isExternal() ||
        mayCallOutside(callee, module, visited))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}
} // namespace

bool mlir::gacc::isEntryFunction(func::FuncOp func) {
  if (func.isExternal() || !func.isPublic())
    return false;
  auto module = func->getParentOfType<ModuleOp>();
  if (!module)
    return false;
  llvm::SmallPtrSet<Operation *, 8> visited;
  return SymbolTable::symbolKnownUseEmpty(func, module) &&
         !mayCallOutside(func, module, visited);
}

bool mlir::gacc::isPlacedBuffer(Value v) {
  auto view = v.getDefiningOp<memref::ViewOp>();
  if (!view || !matchPattern(view.getByteShift(), m_Constant()))
    return false;
  auto call = view.getSource().getDefiningOp<func::CallOp>();
  return call && call.getCallee() == abi::kStepArena;
}
