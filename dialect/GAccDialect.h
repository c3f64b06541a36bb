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
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>
#include <limits>

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

namespace mlir::gacc {
/// Verifies that `op` carries no discardable attribute without a dialect
/// prefix (those of other dialects, `dialect.name`, are left alone): the
/// error names the attribute and the op's own attributes.
LogicalResult verifyNoUnknownAttributes(Operation *op);

/// What one op's decomposition may unroll, so that compile time stays
/// bounded (the verifiers refuse more; the defaults never give more):
/// - attention's query blocks (each block's ops are its own; T = 8192 in
///   the default blocks of 128 compiles in about 10 s);
/// - linear_cross_entropy's row blocks (GPT-2 small's head takes 50);
/// - the taps of a conv2d or pooling window (kh · kw, one slice each).
inline constexpr int64_t kMaxQueryBlocks = 64;
inline constexpr int64_t kMaxRowBlocks = 128;
inline constexpr int64_t kMaxWindowTaps = 1024;

/// Whether `v` is finite once rounded to f32, where every attribute value
/// is applied (1e300 is inf there).
inline bool isFiniteF32(double v) {
  return std::isfinite(v) &&
         std::fabs(v) <= double(std::numeric_limits<float>::max());
}

/// Whether a normalization's `eps` is positive, finite and normal in f32
/// (1e-300 is 0 there, 1e-40 subnormal, which kernels that flush them make
/// 0, 1e300 inf), as attention's scale.
inline bool isNormEps(const llvm::APFloat &eps) {
  double v = eps.convertToDouble();
  return v >= double(std::numeric_limits<float>::min()) && isFiniteF32(v);
}

/// Which ends of an interval belong to it: [lo, hi], (lo, hi), [lo, hi)
/// or (lo, hi].
enum class Interval { Closed, Open, ClosedOpen, OpenClosed };

/// Verifies that `value`, named `name` in `attr`, lies in the interval
/// from `lo` to `hi` (its ends as `ends` says) both as written and as the f32
/// the step computes with: "#gacc.adam needs beta2 in [0, 1), got 1.5"; a value
/// that only f32 rounds out of it (beta2 = 0.99999999999 is 1 in f32, where
/// Adam's bias correction 1 - beta2^t is 0) names the rounding.
LogicalResult verifyRangeInF32(function_ref<InFlightDiagnostic()> emitError,
                               StringRef attr, StringRef name,
                               const llvm::APFloat &value, double lo, double hi,
                               Interval ends);

/// Verifies that every named value of attribute `attr` is finite in f32
/// (isFiniteF32): "#gacc.sgd needs a finite lr (in f32), got inf"; and
/// that none is a nonzero value f32 rounds to 0 (1e-50, or a hexadecimal
/// f32 bit pattern, which reads as the bits of a tiny f64).
LogicalResult
verifyFiniteF32(function_ref<InFlightDiagnostic()> emitError, StringRef attr,
                ArrayRef<std::pair<StringRef, llvm::APFloat>> values);

/// Verifies that a loss's `ignore_index` is a value of its labels'
/// integer element type (compared in that type, a wider one would wrap
/// onto a real class).
LogicalResult verifyIgnoreIndex(Operation *op, int64_t ignoreIndex,
                                ShapedType labels);

/// The trait of every gacc op (GAcc_NoUnknownAttributes): a misspelt
/// attribute (`{casual}`, `max_grad_nrom`) is an error, not a no-op.
template <typename ConcreteType>
class NoUnknownAttributes
    : public OpTrait::TraitBase<ConcreteType, NoUnknownAttributes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyNoUnknownAttributes(op);
  }
};

/// Marks the ops gacc-autodiff builds into a step's backward
/// (GAcc_BuiltByAutodiff): a model's body, which yields only its loss,
/// holds none of them.
template <typename ConcreteType>
class BuiltByAutodiff
    : public OpTrait::TraitBase<ConcreteType, BuiltByAutodiff> {};

/// The order of a training step's phases (GAcc_PhaseResource): a resource
/// of its own, which gacc.phase_begin and gacc.recompute_inputs write, so
/// that the markers are never erased or merged, and the recomputed clones
/// never merged back into the forward.
struct PhaseResource : public SideEffects::Resource::Base<PhaseResource> {
  StringRef getName() final { return "gacc::Phase"; }
};
} // namespace mlir::gacc

#include "dialect/GAccDialect.h.inc"
#include "dialect/GAccEnums.h.inc"
#include "dialect/GAccAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/GAccAttrs.h.inc"

#include "dialect/GAccInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialect/GAccOps.h.inc"

namespace mlir::gacc {
/// Whether `op` (null or not) is a gacc.phase_begin marking `phase`.
bool isPhaseBegin(Operation *op, StepPhase phase);

/// Verifies that the forward of `step` (its body up to
/// `gacc.phase_begin backward`)
/// computes each sample from that sample alone up to the loss: no op
/// reduces over the samples' dimension (the inputs' leading one, followed
/// through the ops whose layout is known: structured ops and the layer ops
/// by their indexing maps, elementwise ops, tensor reshapes, slices, pads,
/// concatenations and casts), reads it through anything but one loop index,
/// reads one element of it (tensor.extract), or combines two different
/// samples; a random op draws by sample index along its input's dimension
/// 0, which must hold the samples. The loss sums over the samples, pairing
/// each with its own target, and an op that declares batch statistics
/// mixes them as it declares. Errors: at the op, naming the operand and
/// dimension.
LogicalResult verifySampleIndependence(TrainStepOp step);

/// Verifies that the forward of `step` reads no tensor.empty: its contents
/// are undefined (it gives a shape). A use is a read unless it is a
/// destination-style init the op does not read (a linalg op whose payload
/// does not use it, or any other destination-style op's), the destination
/// of tensor.insert_slice or tensor.insert, or a cast, reshape or slice,
/// whose result is then followed the same way. Ops with regions of their
/// own (other than linalg's payload) are not looked into. Errors: at the
/// reading op, naming the operand.
LogicalResult verifyNoUndefinedReads(TrainStepOp step);

/// Whether the slice `op` (tensor.extract_slice, insert_slice) takes or
/// writes dimension `dim` of a tensor of `extent` there whole: offset 0,
/// size `extent`, stride 1, all static.
bool coversWhole(OffsetSizeAndStrideOpInterface op, int64_t dim,
                 int64_t extent);

/// Whether the payload of `op` (a linalg op) reads the index of its loop
/// `loop` (a linalg.index of `op`'s own, also inside a region of the
/// payload): its values then depend on the position along that loop.
bool readsLoopIndex(linalg::LinalgOp op, unsigned loop);

/// Registers the external models gacc attaches: bufferization of
/// gacc.matmul_accumulate and gacc.all_reduce, the adjoint rules of
/// upstream arith, math, linalg and tensor ops (StructuredAdjoints.h), and
/// linalg.softmax's iteration space (shard::ShardingInterface), and
/// linalg.index's integer range (InferIntRangeInterface).
void registerGAccExternalModels(DialectRegistry &registry);
/// The bufferization models alone (GAccBufferization.cpp).
void registerGAccBufferizationModels(DialectRegistry &registry);
/// linalg.softmax's loops and indexing maps as shard::ShardingInterface
/// states them for the layer ops (GAccShardingInterface.cpp).
void registerSoftmaxShardingModel(DialectRegistry &registry);
/// linalg.index's range, [0, its loop's static range - 1], for upstream
/// integer range analysis (LinalgIndexRange.cpp).
void registerLinalgIndexRangeModel(DialectRegistry &registry);
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
