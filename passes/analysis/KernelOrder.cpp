//===- KernelOrder.cpp - a kernel's work past later ops -------------------===//
//
// bufferOf and classifyCrossing (KernelOrder.h).
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/KernelOrder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

Value mlir::gacc::bufferOf(Value v) {
  auto memref = dyn_cast<TypedValue<MemRefType>>(v);
  return memref ? Value(memref::skipViewLikeOps(memref)) : Value();
}

mlir::gacc::Crossing
mlir::gacc::classifyCrossing(Operation &between,
                             function_ref<bool(Value)> earlierViews) {
  if (isa<memref::AllocOp, memref::AllocaOp>(between))
    return Crossing::Free;
  if (auto free = dyn_cast<memref::DeallocOp>(between))
    return earlierViews(bufferOf(free.getMemref())) ? Crossing::DelayFree
                                                    : Crossing::Free;
  return isMemoryEffectFree(&between) && between.getNumRegions() == 0
             ? Crossing::Free
             : Crossing::Blocks;
}
