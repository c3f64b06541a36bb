//===- FunctionKey.cpp - functions equal up to their names ----------------===//
//
// functionKey: the printed form of a function without its name and
// locations (passes/analysis/FunctionKey.h).
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/FunctionKey.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mlir::gacc::functionKey(FunctionOpInterface func) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // The attributes include the function's type.
  os << func->getName();
  for (NamedAttribute a : func->getAttrs())
    if (a.getName() != SymbolTable::getSymbolAttrName())
      os << " " << a.getName() << "=" << a.getValue();
  os << "\n";
  // One AsmState numbers the function's values for every op printed: an
  // op printed on its own numbers (and verifies) its whole function each
  // time, quadratic in the ops of a large step.
  OpPrintingFlags flags =
      OpPrintingFlags().printGenericOpForm().skipRegions().assumeVerified();
  AsmState state(func, flags);
  for (Block &block : func.getFunctionBody())
    block.walk<WalkOrder::PreOrder>([&](Operation *op) {
      op->print(os, state);
      os << "\n";
    });
  return text;
}
