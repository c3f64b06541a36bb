//===- StructuredAdjoints.h - adjoints of structured ops --------*- C++ -*-===//
//
// Reverse-mode differentiation of upstream ops for gacc-autodiff: the
// general rule for structured (linalg) ops, used by every named linalg op
// and linalg.generic and, through an equivalent elementwise linalg.generic,
// by arith/math ops on tensors; and the registration of the external
// models that attach gacc's interfaces to upstream ops.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_DIALECT_STRUCTUREDADJOINTS_H
#define GACC_DIALECT_STRUCTUREDADJOINTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::gacc {

/// The adjoints of the operands of a structured op on tensors, at the
/// builder's insertion point, from the adjoints of its results (null: zero).
///
/// The adjoint of input k is one `linalg.generic` over the op's iteration
/// space whose output is indexed by input k's map (which must be a
/// projected permutation): the dimensions the input does not index become
/// reductions. Its body recomputes the op's body and differentiates it in
/// reverse with each scalar op's ScalarAdjointOpInterface rule, seeded with
/// the result adjoints. Outputs of an op with reduction dimensions must be
/// a sum (`init + term`), a maximum or a minimum of a term that does not
/// read the init; a maximum passes its adjoint to the terms equal to the
/// result, split evenly among ties (torch.amax). The adjoint of an init is
/// the result's adjoint for a sum, zero when the body does not read it.
/// Sums over reduced dimensions of f32 values are accumulated in f64 and
/// rounded once, unless the adjoint is a contraction (a product of two
/// operands, like a matmul's), which accumulates in f32 like a GEMM.
///
/// `needed[i]` says which operands (inputs, then inits) need an adjoint;
/// `operandAdjoints` gets one entry per operand (null: not needed, zero).
/// Fails with a diagnostic on `op` when the body holds an op without a
/// scalar rule on the path from a needed operand, or when a needed
/// operand's map or an output's combination is not supported.
LogicalResult buildStructuredAdjoints(OpBuilder &b, linalg::LinalgOp op,
                                      ValueRange resultAdjoints,
                                      ArrayRef<bool> needed,
                                      SmallVectorImpl<Value> &operandAdjoints);

/// The same for an elementwise-mappable arith/math op on ranked tensors
/// (scalar operands, such as a select's i1 condition, are allowed).
LogicalResult buildElementwiseAdjoints(OpBuilder &b, Operation *op,
                                       ValueRange resultAdjoints,
                                       ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &operandAdjoints);

/// The registered ops that carry a scalar adjoint rule
/// (ScalarAdjointOpInterface), sorted and comma-separated, for diagnostics.
std::string opsWithScalarRules(MLIRContext *ctx);

/// ScalarAdjointOpInterface on the scalar arith and math ops and
/// DifferentiableOpInterface on the same ops applied to tensors.
void registerArithMathAdjointModels(DialectRegistry &registry);
/// DifferentiableOpInterface on every structured linalg op (matmul and
/// batch_matmul keep matrix products in their adjoints) and linalg.softmax.
void registerLinalgAdjointModels(DialectRegistry &registry);
/// DifferentiableOpInterface on tensor.expand_shape, collapse_shape,
/// extract_slice, insert_slice, concat, pad (a constant pad) and cast.
void registerTensorAdjointModels(DialectRegistry &registry);

} // namespace mlir::gacc

#endif // GACC_DIALECT_STRUCTUREDADJOINTS_H
