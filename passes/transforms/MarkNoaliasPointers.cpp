//===- MarkNoaliasPointers.cpp - gacc-mark-noalias-pointers ---------------===//
//
// Marks `llvm.noalias` the pointer arguments of LLVM functions that
// gacc-outline-linalg-ops recorded (gacc.noalias_pointers), once the
// function has its LLVM signature: convert-func-to-llvm drops the argument
// attributes of the memrefs it expands into descriptor fields.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#define DEBUG_TYPE "gacc-mark-noalias-pointers"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMARKNOALIASPOINTERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct MarkNoaliasPointersPass
    : public mlir::gacc::impl::GAccMarkNoaliasPointersPassBase<
          MarkNoaliasPointersPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto positions =
          func->getAttrOfType<DenseI64ArrayAttr>(kNoaliasPointersAttrName);
      if (!positions)
        return WalkResult::advance();
      // The function type's inputs: a declaration has no block arguments.
      ArrayRef<Type> inputs = func.getArgumentTypes();
      for (int64_t p : positions.asArrayRef()) {
        if (p < 0 || p >= int64_t(inputs.size()) ||
            !isa<LLVM::LLVMPointerType>(inputs[p])) {
          func.emitOpError("argument ")
              << p << " named by " << kNoaliasPointersAttrName
              << " is not a pointer argument";
          return WalkResult::interrupt();
        }
        func.setArgAttr(p, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(func.getContext()));
      }
      func->removeAttr(kNoaliasPointersAttrName);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
