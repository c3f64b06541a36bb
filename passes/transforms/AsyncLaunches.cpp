//===- AsyncLaunches.cpp - gacc-async-launches ----------------------------===//
//
// Makes the host code's kernel launches asynchronous on one stream and
// synchronizes the host only where it is about to touch memory the device
// may still be using.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCASYNCLAUNCHESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct AsyncLaunchesPass
    : public mlir::gacc::impl::GAccAsyncLaunchesPassBase<AsyncLaunchesPass> {
  using Base::Base;

  /// Whether `op` queues device work on the stream (a launch, or a call of
  /// a stream-ordered function such as the cuBLAS GEMM).
  bool queuesDeviceWork(Operation *op) const {
    if (isa<gpu::LaunchFuncOp>(op))
      return true;
    if (auto call = dyn_cast<func::CallOp>(op))
      return llvm::is_contained(streamOrderedCallees, call.getCallee().str());
    return false;
  }

  bool containsDeviceWork(Operation *op) const {
    return op
        ->walk([&](Operation *inner) {
          return queuesDeviceWork(inner) ? WalkResult::interrupt()
                                         : WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// Whether the host running `op` may read or write memory the device
  /// uses: loads, stores and copies of memrefs, calls of other functions,
  /// anything whose effects are unknown. Allocation and deallocation are
  /// not (the arena allocator only does bookkeeping; the device's uses are
  /// ordered on the one stream).
  static bool touchesMemory(Operation *op) {
    if (isa<gpu::LaunchFuncOp, gpu::WaitOp>(op))
      return false;
    if (isa<func::CallOp, CallOpInterface>(op))
      return true;
    if (op->getNumRegions() > 0 &&
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return op
          ->walk([&](Operation *inner) {
            return inner != op && touchesMemory(inner)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return !isMemoryEffectFree(op);
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    return llvm::any_of(effects, [](const MemoryEffects::EffectInstance &e) {
      return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
    });
  }

  void synchronize(OpBuilder &b, Operation *before) {
    b.setInsertionPoint(before);
    func::CallOp::create(b, before->getLoc(), synchronizeCallee.getValue(),
                         TypeRange{});
  }

  /// Inserts the synchronizations into `block`, entered with device work
  /// possibly pending or not; returns whether work is pending at its end.
  bool threadBlock(OpBuilder &b, Block &block, bool pending) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (queuesDeviceWork(&op)) {
        pending = true;
        continue;
      }
      if (op.getNumRegions() > 0 && containsDeviceWork(&op)) {
        // A loop or branch that launches: each of its blocks may be entered
        // with work pending (from before it or from its last iteration).
        for (Region &region : op.getRegions())
          for (Block &inner : region)
            threadBlock(b, inner, /*pending=*/true);
        pending = true;
        continue;
      }
      bool returns = isa<func::ReturnOp>(op);
      if (pending && (returns || touchesMemory(&op))) {
        synchronize(b, &op);
        pending = false;
      }
    }
    return pending;
  }

  LogicalResult initialize(MLIRContext *ctx) override {
    if (synchronizeCallee.empty())
      return emitError(UnknownLoc::get(ctx))
             << getArgument() << ": option synchronize-callee needs a name";
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    // The callee is called without operands or results: a symbol of
    // another kind or type is an error here, not a call that fails to
    // verify at some memref.load.
    if (Operation *existing = module.lookupSymbol(synchronizeCallee)) {
      auto callee = dyn_cast<func::FuncOp>(existing);
      if (!callee || callee.getFunctionType() != b.getFunctionType({}, {})) {
        existing->emitOpError("is named by synchronize-callee '")
            << synchronizeCallee.getValue()
            << "', which must be a func.func of type () -> ()";
        return signalPassFailure();
      }
    }
    bool declared = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<gpu::LaunchFuncOp> launches;
      func.walk([&](gpu::LaunchFuncOp l) {
        if (!l.getAsyncToken() && l.getAsyncDependencies().empty())
          launches.push_back(l);
      });
      if (func.isExternal() || !containsDeviceWork(func))
        continue;
      // One stream for the whole function: every launch queues on it.
      b.setInsertionPointToStart(&func.getBody().front());
      Value stream =
          launches.empty()
              ? Value()
              : gpu::WaitOp::create(b, func.getLoc(),
                                    gpu::AsyncTokenType::get(b.getContext()),
                                    ValueRange{})
                    .getAsyncToken();
      for (gpu::LaunchFuncOp l : launches) {
        b.setInsertionPoint(l);
        auto async = gpu::LaunchFuncOp::create(
            b, l.getLoc(), l.getKernel(), l.getGridSizeOperandValues(),
            l.getBlockSizeOperandValues(), l.getDynamicSharedMemorySize(),
            l.getKernelOperands(), gpu::AsyncTokenType::get(b.getContext()),
            ValueRange{stream},
            l.hasClusterSize()
                ? std::optional(l.getClusterSizeOperandValues())
                : std::nullopt);
        async->setDiscardableAttrs(l->getDiscardableAttrDictionary());
        l.erase();
      }
      // A block other than the entry may be reached with work pending.
      for (Block &block : func.getBody())
        threadBlock(b, block,
                    /*pending=*/&block != &func.getBody().front());
      declared = true;
    }
    if (declared && !module.lookupSymbol(synchronizeCallee.getValue())) {
      b.setInsertionPointToStart(module.getBody());
      auto decl = func::FuncOp::create(
          b, module.getLoc(), synchronizeCallee.getValue(),
          b.getFunctionType({}, {}));
      decl.setPrivate();
    }
  }
};

} // namespace
