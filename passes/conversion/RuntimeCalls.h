//===- RuntimeCalls.h - calls of runtime entry points -----------*- C++ -*-===//
//
// What the conversions to runtime calls share (convert-gacc-to-blas,
// convert-gacc-to-cudnn, convert-gacc-to-runtime): the memref type an entry
// point takes, and its private declaration at the start of the module
// (upstream's func::lookupFnDecl and func::createFnDecl).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_CONVERSION_RUNTIMECALLS_H
#define GACC_PASSES_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::gacc {

/// A memref of `elem` of rank `rank` with dynamic sizes, strides and
/// offset: what an entry point takes (MLIR's expanded descriptor: pointers,
/// offset, `rank` sizes, `rank` strides), so one declaration serves every
/// shape and layout.
inline MemRefType getDynamicStridedMemRefType(Type elem, int64_t rank) {
  int64_t d = ShapedType::kDynamic;
  SmallVector<int64_t> dims(rank, d);
  return MemRefType::get(dims, elem,
                         StridedLayoutAttr::get(elem.getContext(), d, dims));
}

/// Whether `type` casts to getDynamicStridedMemRefType's type: a strided
/// layout in the default memory space (what the host's entry points
/// address). Others stay for the loop lowering.
inline bool isRuntimeCallable(MemRefType type) {
  return !type.getMemorySpace() && type.isStrided();
}

/// Whether every memref operand of `op` is one an entry point can take
/// (isRuntimeCallable); scalars pass as they are.
inline bool takesRuntimeOperands(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), [](Type t) {
    auto memref = dyn_cast<MemRefType>(t);
    return !memref || isRuntimeCallable(memref);
  });
}

/// The private declaration `name` of type `type` in the module holding
/// `op`, created at the module's start unless it exists; failure when the
/// name is taken by a function of another type.
inline FailureOr<func::FuncOp> getOrDeclareRuntimeFunction(OpBuilder &b,
                                                           Operation *op,
                                                           StringRef name,
                                                           FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  FailureOr<func::FuncOp> existing = func::lookupFnDecl(module, name, type);
  if (failed(existing) || *existing)
    return existing;
  return func::createFnDecl(b, module, name, type, /*setPrivate=*/true);
}

} // namespace mlir::gacc

#endif // GACC_PASSES_CONVERSION_RUNTIMECALLS_H
