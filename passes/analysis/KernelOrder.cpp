//===- KernelOrder.cpp - a kernel's work past later ops -------------------===//
//
// bufferOf, mayAlias, touchesMemoryOf, collectAccesses and classifyCrossing
// (KernelOrder.h).
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/KernelOrder.h"

#include "abi/RuntimeABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

Value mlir::gacc::bufferOf(Value v) {
  auto memref = dyn_cast<TypedValue<MemRefType>>(v);
  return memref ? Value(memref::skipViewLikeOps(memref)) : Value();
}

/// Whether `buffer` is memory of its own: an allocation of the function.
static bool isAllocation(Value buffer) {
  return buffer.getDefiningOp<memref::AllocOp>() ||
         buffer.getDefiningOp<memref::AllocaOp>();
}

/// Whether `buffer` is an argument of the function (not of a nested
/// region's block).
static bool isFunctionArgument(Value buffer) {
  auto arg = dyn_cast<BlockArgument>(buffer);
  return arg && arg.getOwner()->isEntryBlock() &&
         isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

bool mlir::gacc::mayAlias(Value a, Value b, bool distinctArguments) {
  Value ra = bufferOf(a), rb = bufferOf(b);
  if (!ra || !rb)
    return false;
  if (ra == rb)
    return true;
  bool apartA =
      isAllocation(ra) || (distinctArguments && isFunctionArgument(ra));
  bool apartB =
      isAllocation(rb) || (distinctArguments && isFunctionArgument(rb));
  if (apartA && apartB)
    return false;
  if (isAllocation(ra))
    return !isFunctionArgument(rb);
  if (isAllocation(rb))
    return !isFunctionArgument(ra);
  return true;
}

bool mlir::gacc::touchesMemoryOf(Operation *op, Value buffer,
                                 bool distinctArguments) {
  return op
      ->walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          if (mayAlias(v, buffer, distinctArguments))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether a GEMM call's operands and the earlier work may conflict: the
/// call writes C (its third memref operand), reads A, B and any further
/// memref (an epilogue's bias).
static bool conflicts(func::CallOp call,
                      const mlir::gacc::EarlierWork &earlier) {
  unsigned memref = 0;
  std::string callee = call.getCallee().str();
  for (Value v : call.getOperands()) {
    if (!isa<MemRefType>(v.getType()))
      continue;
    bool written = ::gacc::abi::gemmWritesMemref(callee, memref++);
    if (earlier.writes(v) || (written && earlier.views(v)))
      return true;
  }
  return memref < 3;
}

bool mlir::gacc::collectAccesses(Operation *op, SmallVectorImpl<Value> &reads,
                                 SmallVectorImpl<Value> &writes) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return false;
  for (const MemoryEffects::EffectInstance &e : *effects) {
    Value buffer = e.getValue() ? bufferOf(e.getValue()) : Value();
    if (!buffer)
      return false;
    // A buffer allocated (and freed) inside `op` is its own.
    if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(e.getEffect()) &&
        isAllocation(buffer) && op->isProperAncestor(buffer.getDefiningOp()))
      continue;
    (isa<MemoryEffects::Read>(e.getEffect()) ? reads : writes)
        .push_back(buffer);
  }
  return true;
}

/// Whether an op with regions (another kernel's loop) and the earlier work
/// may conflict: it writes memory the earlier work views or reads memory
/// the earlier work writes (collectAccesses); effects it cannot place
/// conflict.
static bool effectsConflict(Operation &op,
                            const mlir::gacc::EarlierWork &earlier) {
  SmallVector<Value> reads, writes;
  if (!mlir::gacc::collectAccesses(&op, reads, writes))
    return true;
  return llvm::any_of(reads, [&](Value v) { return earlier.writes(v); }) ||
         llvm::any_of(writes, [&](Value v) { return earlier.views(v); });
}

mlir::gacc::Crossing
mlir::gacc::classifyCrossing(Operation &between, const EarlierWork &earlier,
                             ArrayRef<std::string> gemmCallees) {
  if (isa<memref::AllocOp, memref::AllocaOp>(between))
    return Crossing::Free;
  if (auto free = dyn_cast<memref::DeallocOp>(between))
    return earlier.views(bufferOf(free.getMemref())) ? Crossing::DelayFree
                                                     : Crossing::Free;
  if (auto call = dyn_cast<func::CallOp>(between))
    return llvm::is_contained(gemmCallees, call.getCallee().str()) &&
                   !conflicts(call, earlier)
               ? Crossing::Free
               : Crossing::Blocks;
  return isMemoryEffectFree(&between) || (between.getNumRegions() > 0 &&
                                          !effectsConflict(between, earlier))
             ? Crossing::Free
             : Crossing::Blocks;
}
