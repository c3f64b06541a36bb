//===- MergeGPUModules.cpp - gacc-merge-gpu-modules -----------------------===//
//
// Moves every outlined kernel into one gpu.module so that a training step
// compiles to a single PTX module / cubin, keeping one of each set of
// identical kernels (the same ops on the same shapes, as the repeated
// blocks of a transformer give): launches of a duplicate launch the first,
// and the device code shrinks by the model's repetition.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/FunctionKey.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "gacc-merge-gpu-modules"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCMERGEGPUMODULESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The first nonempty NameLoc name in `loc` (looking through fused and
/// call-site locations), made a valid identifier (other characters become
/// '_', and one that starts with a digit gets '_' before it).
static std::optional<std::string> findName(Location loc) {
  std::optional<std::string> found;
  loc->walk([&](Location l) {
    auto n = dyn_cast<NameLoc>(l);
    if (!n || n.getName().getValue().empty())
      return WalkResult::advance();
    std::string s = n.getName().str();
    for (char &c : s)
      if (!llvm::isAlnum(c) && c != '_')
        c = '_';
    if (llvm::isDigit(s.front()))
      s.insert(s.begin(), '_');
    found = s;
    return WalkResult::interrupt();
  });
  return found;
}

/// `base`, or `base_<k>` for the first k that is free in `m` and not
/// `reserved`.
static std::string uniqueName(gpu::GPUModuleOp m, StringRef base,
                              const llvm::StringSet<> &reserved) {
  auto taken = [&](StringRef name) {
    return m.lookupSymbol(name) || reserved.contains(name);
  };
  if (!taken(base))
    return base.str();
  unsigned k = 1;
  return SymbolTable::generateSymbolName<64>(base, taken, k).str().str();
}

struct MergeGPUModulesPass
    : public mlir::gacc::impl::GAccMergeGPUModulesPassBase<MergeGPUModulesPass> {
  using Base::Base;
  LogicalResult initialize(MLIRContext *ctx) override {
    // An empty symbol name would make a module no symbol reference names.
    if (moduleName.empty())
      return emitError(UnknownLoc::get(ctx))
             << getArgument() << ": option name must be a symbol name, got ''";
    return success();
  }

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
    // One module compiles for one set of targets (#nvvm.target, ...).
    ArrayAttr targets = modules.front().getTargetsAttr();
    for (gpu::GPUModuleOp m : modules)
      if (m.getTargetsAttr() != targets) {
        m.emitError("gpu.module @")
            << m.getName() << " has other targets than @"
            << modules.front().getName() << ": they cannot be merged";
        return signalPassFailure();
      }
    OpBuilder b(modules.front());
    auto merged = gpu::GPUModuleOp::create(b, modules.front().getLoc(),
                                           "gacc_merged_tmp");
    if (targets)
      merged.setTargetsAttr(targets);
    Block &dest = merged.getBodyRegion().front();
    MLIRContext *ctx = &getContext();
    // Outlining names each kernel after its function, so kernels of
    // different gpu.modules can share a name: a kernel takes its module's
    // (unique) name, or <module>_<kernel> when the module holds several.
    llvm::DenseMap<SymbolRefAttr, StringAttr> renamed;
    // The kernels kept, by functionKey.
    llvm::StringMap<StringAttr> byKey;
    // The names of the symbols that keep theirs (device functions, which
    // calls name): no kernel is renamed to one of them.
    llvm::StringSet<> reserved;
    for (gpu::GPUModuleOp m : modules)
      for (Operation &op : m.getBodyRegion().front())
        if (auto sym = dyn_cast<SymbolOpInterface>(&op)) {
          auto fn = dyn_cast<gpu::GPUFuncOp>(&op);
          if (!fn || !fn.isKernel())
            reserved.insert(sym.getName());
        }
    for (gpu::GPUModuleOp m : modules) {
      Block &body = m.getBodyRegion().front();
      unsigned numKernels = llvm::count_if(
          body.getOps<gpu::GPUFuncOp>(),
          [](gpu::GPUFuncOp f) { return f.isKernel(); });
      for (Operation &op : llvm::make_early_inc_range(body)) {
        // Kernels only: a device function is called by name, and calls are
        // not retargeted, so it keeps its name (and two of the same name
        // are the error below).
        auto fn = dyn_cast<gpu::GPUFuncOp>(&op);
        if (fn && fn.isKernel()) {
          auto ref = SymbolRefAttr::get(
              ctx, m.getName(), {FlatSymbolRefAttr::get(ctx, fn.getName())});
          std::string key = functionKey(fn);
          if (auto kept = byKey.find(key); kept != byKey.end()) {
            renamed[ref] = kept->second;
            continue; // erased with its module
          }
          std::string name = numKernels == 1
                                 ? m.getName().str()
                                 : (m.getName() + "_" + fn.getName()).str();
          // A kernel outlined from an op with a named location (gacc names
          // its accumulate and update ops) takes that name. Either name is
          // made unique among the kernels kept so far (an earlier one may
          // have taken a module's name from its location).
          if (auto named = findName(fn.getLoc()))
            name = *named;
          name = uniqueName(merged, name, reserved);
          renamed[ref] = StringAttr::get(ctx, name);
          byKey[key] = StringAttr::get(ctx, name);
          fn.setName(name);
        }
        if (auto sym = dyn_cast<SymbolOpInterface>(&op))
          if (merged.lookupSymbol(sym.getName())) {
            op.emitError("symbol @")
                << sym.getName() << " is defined in two gpu.modules";
            return signalPassFailure();
          }
        op.moveBefore(&dest, dest.end());
      }
    }
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it == renamed.end()) {
        launch.emitError("launches a kernel outside the merged gpu.modules");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          ctx, moduleName, {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp m : modules)
      m.erase();
    merged.setName(moduleName);
  }
};

} // namespace
