//===- Passes.h - gacc passes -----------------------------------*- C++ -*-===//
//
// Declarations of every gacc pass (generated from Passes.td) and their
// registration.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_PASSES_H
#define GACC_PASSES_PASSES_H

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::gacc

#endif // GACC_PASSES_PASSES_H
