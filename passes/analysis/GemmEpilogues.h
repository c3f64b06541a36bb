//===- GemmEpilogues.h - ops a GEMM's cuBLASLt epilogue runs ----*- C++ -*-===//
//
// What convert-gacc-to-blas folds into a cuBLASLt call on the cuda target:
// the elementwise ops on buffers right after an fp32 (or bf16) product
// that cuBLASLt's epilogues compute as they write the product (a linear
// layer's bias add, its ReLU or tanh GELU, a 16-bit step's rounding, and
// the tanh GELU's gradient after a data-gradient product), with the
// conditions under which the call computes the same values. Each matcher
// returns failure with the reason in `why`; nothing is rewritten here.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_GEMMEPILOGUES_H
#define GACC_PASSES_ANALYSIS_GEMMEPILOGUES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::gacc {

/// A linear layer's bias add after a product into C, and the ReLU after
/// it, as one elementwise generic (what gacc-fuse-elementwise leaves):
/// what cuBLASLt's epilogue applies as it writes the product.
struct BiasAdd {
  linalg::GenericOp generic;
  /// The packed bias [n], read by column: fp32, or of the operands' 16-bit
  /// type.
  Value bias;
  /// The generic's output C (fp32: C[i, j] + bias[j]) and, if it has one,
  /// its second output Y: max(that, 0) (`relu`) or its tanh GELU (`gelu`)
  /// of fp32 operands, or, of 16-bit ones, that sum (or its ReLU) rounded
  /// to their type.
  OpOperand *sum = nullptr, *result = nullptr;
  bool relu = false, gelu = false;
};

/// The bias add after `matmul` (A and B fp32, or both bf16; C fp32; fp16
/// products are left alone): the next op with memory effects is a generic with
/// two parallel loops over C's static [m, n], whose payload is pure, that reads
/// one packed bias [n] by column (of the operands' type, extended) and writes
/// C[i, j] + bias[j] back into C, and may write its ReLU (fp32 operands),
/// or its rounding to the operands' type or that of its ReLU (16-bit ones,
/// which must), to a second output Y of C's shape; the bias may not share
/// memory with C. Failure, with `why`, for anything else.
FailureOr<BiasAdd> matchBiasAdd(linalg::MatmulOp matmul, StringRef &why);

/// Whether the call may write the second output Y of `add` instead of C:
/// zeros start C (`zeros`, the product's initializing fill), C is a buffer
/// that nothing but the product, that fill, the generic and frees uses (so
/// that the sum need not be written: the relu adjoint reads Y), and Y is
/// apart from A, B, the bias and C. Otherwise `why`.
bool canWriteResult(linalg::MatmulOp matmul, const BiasAdd &add,
                    linalg::FillOp zeros, StringRef &why);

/// The tanh GELU of a bias add's sum C and where it goes: the bias add's
/// own second output (matchBiasAdd's `gelu`, the 2-D form that
/// gacc-fuse-elementwise joins), or, after a bias add into C alone, the
/// next op with memory effects: an elementwise generic with one input, C
/// or a reshape of it, that yields isTanhGelu of it to its output Y (a
/// linear layer on [m, T, d], whose GELU a reshape keeps apart).
struct GeluOfSum {
  /// The generic that computes the GELU (the bias add's, or its own).
  linalg::GenericOp generic;
  Value output;
};
/// GeluOfSum, where Y is a contiguous fp32 buffer of C's elements in rows
/// of n apart from A, B, the bias and C, C's rows are a multiple of 8
/// (takesGeluEpilogue) and zeros start C (GELU_AUX_BIAS writes Y, not C,
/// so beta cannot read C). Failure, with `why`, for anything else.
FailureOr<GeluOfSum> matchGeluOfSum(linalg::MatmulOp matmul, const BiasAdd &add,
                                    linalg::FillOp zeros, StringRef &why);

/// A tanh GELU's gradient after a product into zeros: the next op with
/// memory effects after `matmul` is an elementwise generic with two
/// inputs, the gradient dy (C or a reshape of C, which nothing but the
/// product, its fill, those reshapes and frees uses) and the GELU's input
/// X (contiguous fp32 rows of C's shape apart from C), and one output Y
/// (the same, apart from A, B, X and C), to which it yields
/// isTanhGeluGrad: dy · gelu'(X).
struct GeluGrad {
  linalg::GenericOp generic;
  Value input;
  /// C's reshapes, read by the generic alone.
  SmallVector<Operation *> views;
};
FailureOr<GeluGrad> matchGeluGrad(linalg::MatmulOp matmul, linalg::FillOp zeros,
                                  StringRef &why);

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_GEMMEPILOGUES_H
