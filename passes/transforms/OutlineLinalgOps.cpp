//===- OutlineLinalgOps.cpp - gacc-outline-linalg-ops ---------------------===//
//
// Moves every linalg op on buffers into a private, never-inlined function of
// its own, called where the op was, and lets identical ops share one such
// function (the CPU path). LLVM then optimizes many small functions with one
// loop nest each instead of one step function with hundreds of loops, whose
// loop analyses cost time quadratic in the loops of a function.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// The values `op` reads that its function takes as arguments: its
/// operands, then what its regions use from above, except constants, which
/// the function makes itself (so that LLVM sees constant sizes and
/// factors).
SetVector<Value> capturedValues(Operation *op) {
  SetVector<Value> captured(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return SetVector<Value>(
      llvm::from_range, llvm::make_filter_range(captured, [](Value v) {
        return !matchPattern(v, m_Constant());
      }));
}

/// `func.func private @name(captured…) attributes {passthrough =
/// ["noinline"]}` holding a clone of `op` (and of the constants its regions
/// use) and a return.
func::FuncOp buildFunction(OpBuilder &b, Operation *op,
                           const SetVector<Value> &captured, StringRef name) {
  Location loc = op->getLoc();
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
  SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  for (Value v : used)
    if (!mapping.contains(v))
      mapping.map(v, body.clone(*v.getDefiningOp())->getResult(0));
  body.clone(*op, mapping);
  func::ReturnOp::create(body, loc);
  return func;
}

/// The text that identifies a function up to its name and locations: two
/// ops with the same text compute the same thing.
std::string bodyKey(func::FuncOp func) {
  std::string text;
  llvm::raw_string_ostream os(text);
  func.getFunctionType().print(os);
  func.getBody().front().walk<WalkOrder::PreOrder>([&](Operation *op) {
    op->print(os, OpPrintingFlags().printGenericOpForm().skipRegions());
    os << "\n";
  });
  return text;
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
        SetVector<Value> captured = capturedValues(op);
        std::string name = (parent.getSymName() + "_" + shortName(op) + "_" +
                            Twine(k++))
                               .str();
        func::FuncOp callee = buildFunction(b, op, captured, name);
        auto [it, inserted] = byBody.try_emplace(bodyKey(callee), callee);
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
      }
    }
  }
};

} // namespace
