//===- PlaceTransientBuffers.cpp - gacc-place-transient-buffers -----------===//
//
// Rewrites the buffers of each entry function that one arena can hold
// (passes/analysis/BufferPlacement.h chooses them and their offsets) into
// views of the step arena the runtime hands the function at its entry.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/BufferPlacement.h"

#include "abi/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#define DEBUG_TYPE "gacc-place-transient-buffers"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCPLACETRANSIENTBUFFERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;
namespace abi = ::gacc::abi;

namespace {

/// (index) -> memref<?xi8>.
FunctionType arenaType(MLIRContext *ctx) {
  auto bytes = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
  return FunctionType::get(ctx, {IndexType::get(ctx)}, {bytes});
}

/// The runtime's declaration of gacc_step_arena, made when missing; null
/// (with an error) when the name is taken by something else.
func::FuncOp getOrDeclareArena(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Operation *existing = module.lookupSymbol(abi::kStepArena);
  if (auto func = dyn_cast_or_null<func::FuncOp>(existing))
    if (func.isExternal() && func.getFunctionType() == arenaType(ctx))
      return func;
  if (existing) {
    existing->emitError("@")
        << abi::kStepArena
        << " is the runtime's step arena, (index) -> memref<?xi8>";
    return nullptr;
  }
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), abi::kStepArena,
                                   arenaType(ctx));
  func.setPrivate();
  // The runtime defines it in C: the result comes back through a
  // descriptor pointer (_mlir_ciface_gacc_step_arena).
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(ctx));
  return func;
}

/// Takes the arena at `func`'s entry and makes each placed buffer a view
/// of it.
void placeBuffers(func::FuncOp func, func::FuncOp arena,
                  const TransientPlacement &placement) {
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  Location loc = func.getLoc();
  Value bytes = arith::ConstantIndexOp::create(
      b, loc, int64_t(placement.layout.bytes));
  Value base = func::CallOp::create(b, loc, arena, ValueRange{bytes})
                   .getResult(0);
  for (auto [i, offset] : llvm::enumerate(placement.layout.offsets)) {
    memref::AllocOp alloc = placement.allocs[i];
    memref::DeallocOp dealloc = placement.deallocs[i];
    b.setInsertionPoint(alloc);
    Value shift = arith::ConstantIndexOp::create(b, alloc.getLoc(),
                                                 int64_t(offset));
    Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                        base, shift, ValueRange{});
    alloc.getResult().replaceAllUsesWith(view);
    dealloc.erase();
    alloc.erase();
  }
}

struct PlaceTransientBuffersPass
    : public mlir::gacc::impl::GAccPlaceTransientBuffersPassBase<
          PlaceTransientBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, TransientPlacement>> work;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (!isEntryFunction(func))
        continue;
      TransientPlacement placement = placeTransientBuffers(func);
      if (!placement.allocs.empty())
        work.push_back({func, std::move(placement)});
    }
    if (work.empty())
      return;
    func::FuncOp arena = getOrDeclareArena(module);
    if (!arena)
      return signalPassFailure();
    for (auto &[func, placement] : work)
      placeBuffers(func, arena, placement);
  }
};

} // namespace
