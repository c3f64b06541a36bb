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

#include <limits>

using namespace mlir;

std::string mlir::gacc::functionKey(FunctionOpInterface func) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Fixed flags, whatever the command line asks of the printer: no
  // locations, no elided constants (two functions whose constants differ
  // must not print alike). One AsmState numbers the function's values for
  // everything printed: an op printed on its own numbers (and verifies)
  // its whole function each time, quadratic in the ops of a large step.
  OpPrintingFlags flags = OpPrintingFlags()
                              .printGenericOpForm()
                              .enableDebugInfo(false)
                              .elideLargeElementsAttrs(
                                  std::numeric_limits<int64_t>::max())
                              .assumeVerified();
  AsmState state(func, flags);
  // The attributes include the function's type.
  os << func->getName();
  for (NamedAttribute a : func->getAttrs())
    if (a.getName() != SymbolTable::getSymbolAttrName()) {
      os << " " << a.getName() << "=";
      a.getValue().print(os, state);
    }
  os << "\n";
  // Each block whole: its arguments and their types, its ops and their
  // nested regions.
  for (Block &block : func.getFunctionBody())
    block.print(os, state);
  return text;
}
