//===- FunctionKey.h - functions equal up to their names --------*- C++ -*-===//
//
// A text that identifies a function up to its name and its locations, so
// that passes that create many small functions (gacc-outline-linalg-ops on
// the CPU, gacc-merge-gpu-modules for kernels) keep one of each: two
// functions with the same key compute the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_FUNCTIONKEY_H
#define GACC_PASSES_ANALYSIS_FUNCTIONKEY_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace mlir::gacc {

/// The function's op name, type, attributes other than its symbol name and
/// every block of its body (arguments, ops, nested regions) in generic
/// form, values numbered once for the whole function (linear in its ops);
/// never locations, never elided constants, whatever the printer flags of
/// the command line.
std::string functionKey(FunctionOpInterface func);

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_FUNCTIONKEY_H
