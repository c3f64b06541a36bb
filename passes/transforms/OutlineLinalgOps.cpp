//===- OutlineLinalgOps.cpp - gacc-outline-linalg-ops ---------------------===//
//
// Moves every linalg op on buffers into a private, never-inlined function of
// its own, called where the op was, and lets identical ops share one such
// function (the CPU path). LLVM then optimizes many small functions with one
// loop nest each instead of one step function with hundreds of loops, whose
// loop analyses cost time quadratic in the loops of a function. The views
// the op reads and writes through move into the function with it, so that
// its memref arguments are whole buffers, which never overlap: their
// pointers are recorded for gacc-mark-noalias-pointers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/BufferPlacement.h"
#include "passes/analysis/FunctionKey.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "gacc-outline-linalg-ops"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCOUTLINELINALGOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// The ops the outlined function computes: the memref views its linalg op
/// reads and writes through (subviews, reshapes, casts: the chain from each
/// operand up to a value that is no view), sources before their views, and
/// the linalg op last. Inside the function every view of one buffer is then
/// an address computation from one pointer, which LLVM's dependence
/// analysis and interleaved accesses see through (two taps of one padded
/// image: x[2·i] and x[2·i + 1]). A buffer placed in the step arena is
/// the chain's end: the function takes it, not the arena.
SmallVector<Operation *> outlinedOps(linalg::LinalgOp op) {
  SetVector<Operation *> views;
  std::function<void(Value)> visit = [&](Value v) {
    auto view = v.getDefiningOp<ViewLikeOpInterface>();
    if (!view || !isa<MemRefType>(v.getType()) || !isPure(view) ||
        isPlacedBuffer(v))
      return;
    visit(view.getViewSource());
    views.insert(view);
  };
  for (Value operand : op->getOperands())
    visit(operand);
  SmallVector<Operation *> ops(views.begin(), views.end());
  ops.push_back(op);
  return ops;
}

/// The values the ops read that their function takes as arguments: what
/// they use that none of them defines, except constants, which the function
/// makes itself (so that LLVM sees constant sizes and factors).
SetVector<Value> capturedValues(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 8> inside(ops.begin(), ops.end());
  SetVector<Value> used;
  for (Operation *op : ops) {
    used.insert(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
  }
  return SetVector<Value>(
      llvm::from_range, llvm::make_filter_range(used, [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !(def && inside.contains(def)) && !matchPattern(v, m_Constant());
      }));
}

/// Whether a memref value is a whole buffer of its own: an allocation, a
/// buffer placed in the step arena (which overlaps no buffer live at the
/// same time), or an argument of its function's entry block (the step's
/// buffers, which never overlap: abi/StepABI.h). Distinct such values used
/// by one op never overlap.
bool isWholeBuffer(Value v) {
  if (isPlacedBuffer(v))
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Block *block = arg.getOwner();
    return block->isEntryBlock() &&
           isa<FunctionOpInterface>(block->getParentOp());
  }
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(v.getDefiningOp());
}

/// The positions, in the function's LLVM signature, of the aligned
/// pointers of its memref arguments (each memref becomes its descriptor's
/// fields: allocated and aligned pointer, offset, sizes, strides; each
/// scalar one argument), when they may be called noalias: every memref
/// argument is a whole buffer, so no two overlap. Otherwise none (an
/// argument of unknown origin, such as a loop-carried buffer, may be
/// another argument's memory).
SmallVector<int64_t> noaliasPointerPositions(const SetVector<Value> &captured) {
  SmallVector<int64_t> positions;
  int64_t next = 0;
  for (Value v : captured) {
    auto memref = dyn_cast<MemRefType>(v.getType());
    if (!memref) {
      ++next;
      continue;
    }
    if (!isWholeBuffer(v))
      return {};
    positions.push_back(next + 1);
    next += 3 + 2 * memref.getRank();
  }
  return positions;
}

/// `func.func private @name(captured…) attributes {passthrough =
/// ["noinline"]}` holding clones of `ops` (and of the constants they use)
/// and a return.
func::FuncOp buildFunction(OpBuilder &b, ArrayRef<Operation *> ops,
                           const SetVector<Value> &captured, StringRef name) {
  Location loc = ops.back()->getLoc();
  SmallVector<Type> types = llvm::to_vector(
      llvm::map_range(captured, [](Value v) { return v.getType(); }));
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(types, {}));
  func.setPrivate();
  func->setAttr("passthrough", b.getStrArrayAttr({"noinline"}));
  Block *entry = func.addEntryBlock();
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip(captured, entry->getArguments()))
    mapping.map(v, arg);
  for (Operation *op : ops) {
    SetVector<Value> used(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value v : used)
      if (!mapping.contains(v))
        mapping.map(v, body.clone(*v.getDefiningOp())->getResult(0));
    body.clone(*op, mapping);
  }
  func::ReturnOp::create(body, loc);
  return func;
}

/// The last word of an op's name: `generic` for `linalg.generic`.
StringRef shortName(Operation *op) {
  return op->getName().getStringRef().rsplit('.').second;
}

struct OutlineLinalgOpsPass
    : public mlir::gacc::impl::GAccOutlineLinalgOpsPassBase<
          OutlineLinalgOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    llvm::StringMap<func::FuncOp> byBody;
    SymbolTable symbols(module);
    for (func::FuncOp parent : funcs) {
      SmallVector<linalg::LinalgOp> ops;
      parent.walk([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics())
          ops.push_back(op);
      });
      unsigned k = 0;
      // The functions follow their caller, in the order of its ops.
      OpBuilder b(parent->getContext());
      b.setInsertionPointAfter(parent);
      for (linalg::LinalgOp op : ops) {
        SmallVector<Operation *> body = outlinedOps(op);
        SetVector<Value> captured = capturedValues(body);
        std::string name = (parent.getSymName() + "_" + shortName(op) + "_" +
                            Twine(k++))
                               .str();
        func::FuncOp callee = buildFunction(b, body, captured, name);
        SmallVector<int64_t> pointers;
        if (hasUnitInnerStrides(op))
          pointers = noaliasPointerPositions(captured);
        if (!pointers.empty())
          callee->setAttr(kNoaliasPointersAttrName,
                          b.getDenseI64ArrayAttr(pointers));
        // The same op with other aliasing facts (an attribute) is another
        // function.
        std::string key = functionKey(callee);
        auto [it, inserted] = byBody.try_emplace(key, callee);
        if (inserted) {
          symbols.insert(callee, Block::iterator(callee));
        } else {
          callee.erase();
          callee = it->second;
        }
        OpBuilder at(op);
        func::CallOp::create(at, op->getLoc(), callee,
                             captured.getArrayRef());
        op->erase();
        // Views that only the op read are dead now.
        for (Operation *view : llvm::reverse(ArrayRef(body).drop_back()))
          if (view->use_empty())
            view->erase();
      }
    }
  }
};

} // namespace
