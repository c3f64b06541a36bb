//===- LinalgBuilders.h - linalg blocks of the layer ops --------*- C++ -*-===//
//
// Small builders that emit upstream linalg/tensor/arith ops for the forward
// lowering of the layer ops (convert-gacc-to-linalg) and for their adjoints
// (gacc-autodiff), so both use one definition of each formula; and the
// matchers of the low-precision rounding and the tanh GELU they build
// (GeluMatchers.cpp), for the passes that recognise them.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_DIALECT_LINALGBUILDERS_H
#define GACC_DIALECT_LINALGBUILDERS_H

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <array>

namespace mlir::gacc {

/// A tensor of `type` filled with `value` (tensor.empty + linalg.fill).
Value buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                  double value);

/// op(A)·op(B) as a `linalg.matmul` (transposes through indexing_maps)
/// accumulated into `init` [M, N] (C += op(A)·op(B)), or into a zero-filled
/// tensor when `init` is null. A, B: rank-2 f32 tensors.
Value buildMatmul(OpBuilder &b, Location loc, Value a, Value bMat,
                  bool transposeA, bool transposeB, Value init = {});

/// op(A[b])·op(B[b]) for every batch index b as a `linalg.batch_matmul`
/// (transposes through indexing_maps) accumulated into `init` [B, M, N]
/// (C[b] += op(A[b])·op(B[b])), or into a zero-filled tensor when `init` is
/// null. A, B: rank-3 f32 tensors.
Value buildBatchMatmul(OpBuilder &b, Location loc, Value a, Value bMat,
                       bool transposeA, bool transposeB, Value init = {});

using ScalarBodyFn =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// An elementwise linalg.generic over same-shaped `inputs`, producing a new
/// tensor of `resultType`; `body` maps the input scalars to the result.
Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       RankedTensorType resultType, ScalarBodyFn body);

/// Philox 4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy
/// as 1, 2, 3", the generator of Random123, cuRAND and PyTorch's CUDA
/// kernels) on i32 scalars at the builder's insertion point: the four
/// output words of `counter` under `key`. Ten rounds, each two 32 × 32 →
/// 64-bit products (arith.mului_extended) with the multipliers 0xD2511F53
/// and 0xCD9E8D57, the key bumped by the Weyl constants 0x9E3779B9 and
/// 0xBB67AE85 between rounds.
std::array<Value, 4> buildPhilox4x32(OpBuilder &b, Location loc,
                                     std::array<Value, 4> counter,
                                     std::array<Value, 2> key);

/// x with its floating-point elements converted to `elemType` (truncf or
/// extf), elementwise.
Value buildConvertElements(OpBuilder &b, Location loc, Value x,
                           Type elemType);

/// True if `v` is the result of a `linalg.fill` of a floating-point zero.
bool isZeroFill(Value v);

/// True if `op` is elementwise in the strict sense: every loop parallel and
/// every indexing map the identity.
bool isIdentityElementwise(linalg::GenericOp op);

/// An f32 tensor x rounded to `computeType` (bf16 or f16) and back to f32,
/// elementwise (arith.extf(arith.truncf x) in one linalg.generic): the
/// values a low-precision tensor would hold, how a bf16/fp16 step rounds
/// what its body computes (gacc-narrow-stored-values stores them narrow).
Value buildRoundToCompute(OpBuilder &b, Location loc, Value x,
                          FloatType computeType);
/// The x that `v` is buildRoundToCompute's rounding of: `v` is the result
/// of an elementwise linalg.generic on tensors (one input, identity maps)
/// yielding arith.extf(arith.truncf(x)) through `computeType`. Null
/// otherwise.
Value matchRoundToCompute(Value v, FloatType computeType);

/// Whether `op` is the elementwise sum of two tensors (an elementwise
/// linalg.generic on tensors, two inputs, identity maps, yielding
/// arith.addf of its two inputs): how gacc-autodiff sums the adjoint
/// contributions of a value used more than once.
bool isElementwiseSum(Operation *op);

/// Whether `value` converts to `type` without loss (round to nearest, ties
/// to even, leaves it unchanged).
bool isExactIn(const APFloat &value, FloatType type);

/// Σ over dimension 0 of a rank-2 tensor x [m, n] -> [n], summed in f64
/// and rounded once to f32.
Value buildSumRows(OpBuilder &b, Location loc, Value x);

/// Σ over dimension 0 of x [m, n] added to `partial` (f64 [n]; zero when
/// null), in f64 and not rounded: blocks of rows chain their sums through
/// `partial`, in row order, and round once (buildConvertElements).
Value buildSumRowsF64(OpBuilder &b, Location loc, Value x,
                      Value partial = {});

/// x [m, n] + b [n] broadcast over rows (or, with `biasDim` 0, b [m]
/// broadcast over columns), in place into x's value.
Value buildAddBias(OpBuilder &b, Location loc, Value x, Value bias,
                   unsigned biasDim = 1);

/// The adjoint of y = softmax(x) over dimension `dim` of an f32 tensor, times
/// `scale`: dx = y ⊙ (dy − Σ_dim dy ⊙ y)·scale (torch's
/// _softmax_backward_data; the product by `scale` only when it is not 1).
/// One reduction over `dim`, then one elementwise map; dx has y's type.
Value buildSoftmaxGrad(OpBuilder &b, Location loc, Value y, Value dy,
                       int64_t dim, double scale = 1.0);

/// Per-row statistics of softmax cross-entropy for logits z [m, C] and
/// labels y [m]: rowMax = max_j z_ij, sumExp = Σ_j exp(z_ij − rowMax),
/// labelLogit = z_i,y_i (0 where y_i is out of [0, C)).
struct CrossEntropyStats {
  Value rowMax, sumExp, labelLogit;
};
///
/// With label smoothing ε (torch.nn.functional.cross_entropy's
/// label_smoothing) over C classes, `labelLogit` holds the smoothed target
/// term Σ_j w_ij z_ij, w_ij = (1 − ε)·[j = y_i] + ε/C, so that
/// rowMax + log sumExp − labelLogit = (1 − ε)·(−log p_iy) + (ε/C)·Σ_j
/// (−log p_ij); ε = 0 reads the label's logit alone.
CrossEntropyStats buildCrossEntropyStats(OpBuilder &b, Location loc,
                                         Value logits, Value labels,
                                         double labelSmoothing = 0.0);

/// Σ_i [y_i ≠ ignore] (rowMax_i + log sumExp_i − labelLogit_i) : tensor<f32>.
Value buildCrossEntropySum(OpBuilder &b, Location loc,
                           const CrossEntropyStats &stats, Value labels,
                           int64_t ignoreIndex);

/// The same sum in f64, not rounded, added to `partial` (tensor<f64>; zero
/// when null): blocks of rows chain their sums through `partial`.
Value buildCrossEntropySumF64(OpBuilder &b, Location loc,
                              const CrossEntropyStats &stats, Value labels,
                              int64_t ignoreIndex, Value partial = {});

/// dz_ij = [y_i ≠ ignore] · dL · (exp(z_ij − rowMax_i)/sumExp_i − w_ij),
/// w_ij = [j = y_i] without label smoothing, (1 − ε)·[j = y_i] + ε/C with.
Value buildCrossEntropyGrad(OpBuilder &b, Location loc, Value logits,
                            Value labels, const CrossEntropyStats &stats,
                            Value lossAdjoint, int64_t ignoreIndex,
                            double labelSmoothing = 0.0);

/// Elements [offset, offset + size) of dimension `dim` of `v`
/// (tensor.extract_slice; `v` itself when that is all of it).
Value buildSliceAlong(OpBuilder &b, Location loc, Value v, int64_t dim,
                      int64_t offset, int64_t size);

/// `part` written over elements [offset, …) of dimension `dim` of `whole`
/// (tensor.insert_slice; `part` itself when it is all of it).
Value buildInsertAlong(OpBuilder &b, Location loc, Value part, Value whole,
                       int64_t dim, int64_t offset);

/// The elements of a [rows, width] intermediate that one block of rows
/// holds where an op builds it blockwise without being told how
/// (gacc.linear_cross_entropy's logits, gacc.embedding's one-hot rows):
/// 2^24, 64 MiB in fp32.
inline constexpr int64_t kRowBlockElements = int64_t(1) << 24;

/// The rows per block that keep a [rows, width] intermediate within
/// kRowBlockElements: at least 1, at most `rows`.
int64_t getRowsPerBlock(int64_t rows, int64_t width);

/// Calls `fn(row0, n)` for each block of `block` rows of `rows`, in order
/// (the last one shorter when `block` does not divide `rows`).
template <typename Fn>
void forEachRowBlock(int64_t rows, int64_t block, Fn fn) {
  for (int64_t r = 0; r < rows; r += block)
    fn(r, std::min(block, rows - r));
}

/// Assembles a tensor of `type` from blocks along dimension `dim` that each
/// write their own elements once: one block's product when it has them
/// all, else a tensor.empty that is only ever a tensor.insert_slice
/// destination. (Never slices of a shared zero tensor, which CSE would
/// merge across the ops that build them.)
class RowsWriter {
public:
  RowsWriter(RankedTensorType type, int64_t dim) : type(type), dim(dim) {}
  void write(OpBuilder &b, Location loc, Value part, int64_t offset);
  Value get() const { return whole; }

private:
  RankedTensorType type;
  int64_t dim;
  Value whole;
};

/// The transposes (of A, of B) of a linalg.matmul whose indexing maps are
/// one of the four plain matrix products C[i, j] += op(A)·op(B), or of a
/// linalg.batch_matmul with one of the four per batch index b
/// (C[b, i, j] += op(A[b])·op(B[b])); failure for any other op or maps.
/// The inverse of buildMatmul's maps.
FailureOr<std::pair<bool, bool>> getMatmulTransposes(Operation *matmul);

/// x [d0, …, dk−1, n] as the matrix [d0·…·dk−1, n] (tensor.collapse_shape;
/// x itself when rank 2; a vector [n] as the one row [1, n]).
Value buildCollapseToMatrix(OpBuilder &b, Location loc, Value x);

/// A [R, n] matrix back to `type` ([…, n], R = product of the leading dims;
/// [n] from one row).
Value buildExpandFromMatrix(OpBuilder &b, Location loc, Value m,
                            RankedTensorType type);

/// x as a rank-1 tensor (x itself when rank 1).
Value buildFlatten(OpBuilder &b, Location loc, Value x);

/// y[…, d] = weight[indices[…], d] for weight [V, D].
Value buildEmbedding(OpBuilder &b, Location loc, Value indices, Value weight);

/// onehot[r, v] = (indices[r] == v) ? 1 : 0 for flat indices [R], f32 [R, V].
Value buildOneHot(OpBuilder &b, Location loc, Value flatIndices,
                  int64_t vocabulary);

/// Per-row mean and 1/sqrt(biased variance + eps) of x [R, D].
struct LayerNormStats {
  Value mean, rstd;
};
LayerNormStats buildLayerNormStats(OpBuilder &b, Location loc, Value x,
                                   double eps);

/// The body of a normalization's affine map: block arguments (x, mean,
/// rstd, weight, bias, out) yield (x − mean)·rstd·weight + bias.
void buildNormalizeBody(OpBuilder &b, Location loc, ValueRange a);

/// (x − mean)·rstd·weight + bias for x [R, D], weight and bias [D].
Value buildLayerNorm(OpBuilder &b, Location loc, Value x,
                     const LayerNormStats &stats, Value weight, Value bias);

/// Adjoints of layer_norm for x, dy [R, D]: dx [R, D] (null unless
/// `needX`), dweight = Σ_r dy·x̂ and dbias = Σ_r dy ([D]).
struct LayerNormGrads {
  Value dx, dweight, dbias;
};
LayerNormGrads buildLayerNormGrad(OpBuilder &b, Location loc, Value x,
                                  const LayerNormStats &stats, Value weight,
                                  Value dy, bool needX);

/// The tanh GELU's constants: gelu(x) = 0.5·x·(1 + tanh(√(2/π)·(x +
/// 0.044715·x³))) (Hendrycks and Gimpel 2016, eq. 2;
/// torch.nn.functional.gelu with approximate="tanh").
constexpr double kGeluSqrt2OverPi = 0.7978845608028654, kGeluCubic = 0.044715;

/// gelu(x), exact (erf) or tanh form.
Value buildGelu(OpBuilder &b, Location loc, Value x, bool tanhForm);

/// dy · gelu'(x).
Value buildGeluGrad(OpBuilder &b, Location loc, Value x, Value dy,
                    bool tanhForm);

/// Whether the fp32 scalar `y` is buildGelu's tanh form of `x`, as an
/// elementwise generic's payload holds it (canonicalization may swap the
/// operands of additions and products): for passes that hand the GELU to
/// a library (convert-gacc-to-blas, cuBLASLt's GELU epilogues).
bool isTanhGelu(Value y, Value x);
/// Whether the fp32 scalar `y` is buildGeluGrad's tanh form, dy · gelu'(x),
/// in the same sense.
bool isTanhGeluGrad(Value y, Value x, Value dy);

/// Σ (x · scale)² over every element of an f32 tensor x, accumulated in
/// f64; `scale` is an f32 scalar. Returns the f64 scalar.
Value buildScaledSumOfSquares(OpBuilder &b, Location loc, Value x,
                              Value scale);

/// [m] f32: 1 for a sample (row of `labels` [m, ...]) with a target that is
/// not `ignoreIndex`, 0 for padding.
Value buildSampleMask(OpBuilder &b, Location loc, Value labels,
                      int64_t ignoreIndex);

/// The f32 count of targets ≠ ignore (`perToken`), or of leading-dimension
/// rows with at least one such target, of `labels` (any rank ≥ 1).
Value buildNonIgnoredCount(OpBuilder &b, Location loc, Value labels,
                           int64_t ignoreIndex, bool perToken);

/// The one normalization of the deferred update: the divisor of the
/// window's summed gradients, max(count, 1) (a window of padding only adds
/// a zero gradient instead of dividing by zero), times the loss scale when
/// `lossScale` (f32) is given (unscaling folded into the same division).
Value buildUpdateDivisor(OpBuilder &b, Location loc, Value count,
                         Value lossScale);

/// The clipping coefficient of torch.nn.utils.clip_grad_norm_,
/// min(1, maxNorm / (norm + 1e-6)), for the global L2 norm `norm` (f32) of
/// the normalized gradient.
Value buildClipCoefficient(OpBuilder &b, Location loc, Value norm,
                           double maxNorm);

/// The learning rate of optimizer step `step` (i64, steps already taken)
/// under `schedule` (see #gacc.lr_schedule) from the base rate `baseLr`
/// (f32): scalar arith/math ops, usable on the host and inside kernels.
Value buildScheduledLR(OpBuilder &b, Location loc, LRScheduleAttr schedule,
                       Value baseLr, Value step);

} // namespace mlir::gacc

#endif // GACC_DIALECT_LINALGBUILDERS_H
