//===- GAccDialect.h - the gacc dialect -------------------------*- C++ -*-===//
//
// Declares the gacc dialect, its attributes, interfaces and ops. Include
// this header to use any of them.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_DIALECT_GACCDIALECT_H
#define GACC_DIALECT_GACCDIALECT_H

#include "abi/Initializer.h"
#include "abi/RuntimeABI.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

namespace mlir {
/// Parses a floating-point parameter of a gacc attribute (`lr = 0.05`) as
/// an IEEE double.
template <>
struct FieldParser<llvm::APFloat> {
  static FailureOr<llvm::APFloat> parse(AsmParser &parser) {
    llvm::APFloat value(0.0);
    if (parser.parseFloat(llvm::APFloat::IEEEdouble(), value))
      return failure();
    return value;
  }
};
} // namespace mlir

#include "dialect/GAccDialect.h.inc"
#include "dialect/GAccEnums.h.inc"
#include "dialect/GAccAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/GAccAttrs.h.inc"

#include "dialect/GAccInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialect/GAccOps.h.inc"

namespace mlir::gacc {
/// Registers the external models gacc attaches: bufferization of
/// gacc.matmul_accumulate and gacc.all_reduce, and the adjoint rules of
/// upstream arith, math, linalg and tensor ops (StructuredAdjoints.h).
void registerGAccExternalModels(DialectRegistry &registry);
/// The bufferization models alone (GAccBufferization.cpp).
void registerGAccBufferizationModels(DialectRegistry &registry);
/// The element type a micro-batch body of `precision` rounds its values
/// to: bf16 or f16; null for fp32 (no rounding).
FloatType getLowPrecisionType(MLIRContext *ctx, Precision precision);

/// The discardable attribute (a #gacc.precision) that gacc-expand-
/// accumulation puts on a function whose micro-batch body computes in bf16
/// or fp16: every value the body computes is rounded to that precision
/// where it is produced (inside a layer op's decomposition only where the
/// op says so: gacc.attention_backward's probabilities and their adjoint).
constexpr llvm::StringLiteral kComputePrecisionAttrName =
    "gacc.compute_precision";
/// The type the low-precision step around `op` rounds to: that of the
/// nearest enclosing op marked kComputePrecisionAttrName (bf16 or f16);
/// null where none is (an fp32 step, a function outside any step).
FloatType getEnclosingComputeType(Operation *op);
} // namespace mlir::gacc

#endif // GACC_DIALECT_GACCDIALECT_H
