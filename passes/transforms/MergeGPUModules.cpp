//===- MergeGPUModules.cpp - gacc-merge-gpu-modules -----------------------===//
//
// Moves every outlined kernel into one gpu.module so that a training step
// compiles to a single PTX module / cubin.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#define DEBUG_TYPE "gacc-merge-gpu-modules"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMERGEGPUMODULESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct MergeGPUModulesPass
    : public mlir::gacc::impl::GAccMergeGPUModulesPassBase<MergeGPUModulesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    if (module.lookupSymbol(moduleName) &&
        !isa<gpu::GPUModuleOp>(module.lookupSymbol(moduleName))) {
      module.emitError("symbol @") << moduleName << " already exists";
      return signalPassFailure();
    }
    OpBuilder b(modules.front());
    auto merged = gpu::GPUModuleOp::create(b, modules.front().getLoc(),
                                           "gacc_merged_tmp");
    Block &dest = merged.getBodyRegion().front();
    for (gpu::GPUModuleOp m : modules) {
      for (Operation &op :
           llvm::make_early_inc_range(m.getBodyRegion().front())) {
        if (auto sym = dyn_cast<SymbolOpInterface>(&op))
          if (merged.lookupSymbol(sym.getName())) {
            op.emitError("kernel symbol @")
                << sym.getName() << " is defined in two gpu.modules";
            return signalPassFailure();
          }
        op.moveBefore(&dest, dest.end());
      }
    }
    MLIRContext *ctx = &getContext();
    module.walk([&](gpu::LaunchFuncOp launch) {
      launch.setKernelAttr(SymbolRefAttr::get(
          ctx, moduleName,
          {FlatSymbolRefAttr::get(ctx, launch.getKernelName())}));
    });
    for (gpu::GPUModuleOp m : modules)
      m.erase();
    merged.setName(moduleName);
  }
};

} // namespace
