//===- GAccToBLAS.cpp - convert-gacc-to-blas ------------------------------===//
//
// Conversion patterns that lower memref gacc.matmul_accumulate and fp32
// linalg.matmul to calls of the runtime's gacc_sgemm (OpenBLAS cblas_sgemm
// with beta = 0 or 1; 0 also where a fill of zeros only this GEMM reads
// set C, and the fill goes) or, on the cuda target, gacc_cublas_sgemm (cuBLAS)
// or gacc_cublaslt_sgemm (cuBLASLt), and fp32 linalg.batch_matmul to
// gacc_sgemm_batched or gacc_cublaslt_sgemm_batched, applied with a
// ConversionTarget on which they are illegal. cuBLASLt's calls also say
// what their operands hold: bf16 or fp16 values where gacc-mark-gemm-inputs
// proved it (kGemmInputsAttrName), which tensor cores multiply exactly.
// Products whose A and B are bf16 (fp16) memrefs, a narrowed step's stored
// values (gacc-narrow-stored-values), call the same entry points for those
// operand types (abi::lowOperandsGemm: gacc_sgemm_bf16, ...).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "abi/RuntimeABI.h"
#include "dialect/LinalgBuilders.h"
#include "passes/analysis/InitializingFill.h"
#include "passes/conversion/RuntimeCalls.h"

#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "convert-gacc-to-blas"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOBLASPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;
namespace abi = ::gacc::abi;

namespace {

/// A rank-2 (rank-3 with `batched`) memref of `elem` of any sizes and
/// strides.
MemRefType dynamicStrided(Type elem, bool batched) {
  return getDynamicStridedMemRefType(elem, batched ? 3 : 2);
}

/// The element type of the A and B operands of a product whose C is fp32,
/// where an entry point takes it: f32, or bf16 or f16 for both.
std::optional<Type> factorType(Value a, Value b, Value c) {
  Type ta = cast<MemRefType>(a.getType()).getElementType();
  Type tb = cast<MemRefType>(b.getType()).getElementType();
  if (!cast<MemRefType>(c.getType()).getElementType().isF32() || ta != tb ||
      !(ta.isF32() || ta.isBF16() || ta.isF16()))
    return std::nullopt;
  return ta;
}

/// The entry point of `callee`'s family for products of `factor`
/// operands (abi::lowOperandsGemm).
std::string entryPoint(StringRef callee, Type factor) {
  if (factor.isF32())
    return callee.str();
  return abi::lowOperandsGemm(callee.str().c_str(), factor.isBF16()
                                                        ? abi::kBF16Operands
                                                        : abi::kF16Operands);
}

/// Whether `callee` takes the inputs' format (abi::GemmInputs) after beta.
bool takesInputs(StringRef callee) {
  return callee == abi::kCublasLtSgemm || callee == abi::kCublasLtSgemmBatched;
}

/// The private declaration of `callee`'s entry point for the product of
/// `a` and `b` into `c` (`op`'s operands): `<name>(A, B, C, transA: i32,
/// transB: i32, beta: f32)`, and `inputs: i32` for cuBLASLt's fp32
/// products, at the start of the module unless it exists. Failure when
/// no entry point takes the operands' element types (factorType) or the
/// name is taken by a function of another type; nothing is created then.
FailureOr<func::FuncOp> declareGemm(RewriterBase &rewriter, Operation *op,
                                    StringRef callee, Value a, Value b,
                                    Value c) {
  std::optional<Type> factor = factorType(a, b, c);
  if (!factor)
    return failure();
  bool batched = cast<MemRefType>(c.getType()).getRank() == 3;
  std::string name = entryPoint(callee, *factor);
  Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
  MemRefType ab = dynamicStrided(*factor, batched);
  SmallVector<Type> types = {ab,  ab,  dynamicStrided(f32, batched),
                             i32, i32, f32};
  if (takesInputs(name))
    types.push_back(i32);
  return getOrDeclareRuntimeFunction(rewriter, op, name,
                                     rewriter.getFunctionType(types, {}));
}

/// What the operands of the product `op` hold: the precision
/// gacc-mark-gemm-inputs proved (kGemmInputsAttrName), fp32 without it.
abi::GemmInputs gemmInputs(Operation *op) {
  auto precision = op->getAttrOfType<PrecisionAttr>(kGemmInputsAttrName);
  if (!precision)
    return abi::GemmInputs::fp32;
  switch (precision.getValue()) {
  case Precision::bf16:
    return abi::GemmInputs::bf16;
  case Precision::fp16:
    return abi::GemmInputs::fp16;
  case Precision::fp32:
    break;
  }
  return abi::GemmInputs::fp32;
}

/// Calls the entry point `f` (declareGemm) for `op`: C = beta·C +
/// op(A)·op(B).
void emitCall(RewriterBase &rewriter, Operation *op, func::FuncOp f, Value a,
              Value b, Value c, bool transA, bool transB, Value beta) {
  Location loc = op->getLoc();
  bool batched = cast<MemRefType>(c.getType()).getRank() == 3;
  auto toDynamic = [&](Value v) -> Value {
    auto type =
        dynamicStrided(cast<MemRefType>(v.getType()).getElementType(), batched);
    return memref::CastOp::create(rewriter, loc, type, v);
  };
  auto i32 = [&](bool v) -> Value {
    return arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getI32IntegerAttr(v));
  };
  SmallVector<Value> operands = {toDynamic(a), toDynamic(b), toDynamic(c),
                                 i32(transA),  i32(transB),  beta};
  if (takesInputs(f.getName()))
    operands.push_back(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getI32IntegerAttr(static_cast<int32_t>(gemmInputs(op)))));
  func::CallOp::create(rewriter, loc, f, operands);
}

/// Whether `callee` can take the operands of `op`: OpenBLAS's calls take
/// any strides; cuBLAS and cuBLASLt read rows of consecutive elements, so
/// an operand whose innermost stride is not known to be 1 stays a loop nest
/// (convert-gacc-to-scf, or linalg's lowering).
bool takesOperands(StringRef callee, Operation *op) {
  return callee == abi::kSgemm || callee == abi::kSgemmBatched ||
         hasUnitInnerStrides(op);
}

/// A linalg.matmul or linalg.batch_matmul on memrefs with an fp32 C and
/// A and B of one type an entry point takes (factorType), whose maps are a
/// plain product per batch index (getMatmulTransposes) and whose operands
/// `callee` takes: what the GEMM call computes.
bool isBLASMatmul(linalg::LinalgOp op, StringRef callee) {
  return op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2 &&
         factorType(op.getDpsInputs()[0], op.getDpsInputs()[1],
                    op.getDpsInits()[0]) &&
         succeeded(getMatmulTransposes(op)) && takesOperands(callee, op);
}

/// gacc.matmul_accumulate (memref): β = first ? 0 : 1, so BLAS never reads
/// the accumulator on the first micro-batch.
struct MatmulAccumulateToCall
    : public OpConversionPattern<MatmulAccumulateOp> {
  MatmulAccumulateToCall(MLIRContext *ctx, StringRef callee)
      : OpConversionPattern(ctx), callee(callee.str()) {}
  LogicalResult
  matchAndRewrite(MatmulAccumulateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getResult())
      return rewriter.notifyMatchFailure(op, "the tensor form");
    if (!takesOperands(callee, op))
      return rewriter.notifyMatchFailure(op, "an inner stride not 1");
    FailureOr<func::FuncOp> f =
        declareGemm(rewriter, op, callee, adaptor.getA(), adaptor.getB(),
                    adaptor.getAccumulator());
    if (failed(f))
      return rewriter.notifyMatchFailure(op, "no entry point of this type");
    Location loc = op.getLoc();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0));
    Value one = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getF32FloatAttr(1.0));
    Value beta =
        arith::SelectOp::create(rewriter, loc, adaptor.getFirst(), zero, one);
    emitCall(rewriter, op, *f, adaptor.getA(), adaptor.getB(),
             adaptor.getAccumulator(), op.getTransposeA(), op.getTransposeB(),
             beta);
    rewriter.eraseOp(op);
    return success();
  }
  std::string callee;
};

/// linalg.matmul (memref, fp32): C += op(A)·op(B), β = 1; and
/// linalg.batch_matmul: C[b] += op(A[b])·op(B[b]) through the batched GEMM
/// (OpenBLAS's or cuBLASLt's; with cuBLAS, batch products stay loops).
/// Where C is a fresh buffer that a fill with zeros set for the product
/// alone (getInitializingFill), β = 0 and the fill is erased: the GEMM
/// writes C without reading it, and no fill kernel or loop runs before it.
template <typename ProductOp>
struct ProductToCall : public OpConversionPattern<ProductOp> {
  using Adaptor = typename OpConversionPattern<ProductOp>::OpAdaptor;
  ProductToCall(MLIRContext *ctx, StringRef callee)
      : OpConversionPattern<ProductOp>(ctx), callee(callee.str()) {}
  LogicalResult
  matchAndRewrite(ProductOp op, Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isBLASMatmul(op, callee))
      return rewriter.notifyMatchFailure(op, "not a memref product a GEMM "
                                             "call takes");
    Value a = adaptor.getInputs()[0], b = adaptor.getInputs()[1],
          c = adaptor.getOutputs()[0];
    FailureOr<func::FuncOp> f = declareGemm(rewriter, op, callee, a, b, c);
    if (failed(f))
      return rewriter.notifyMatchFailure(op, "its entry point's name is "
                                             "taken");
    auto [ta, tb] = *getMatmulTransposes(op);
    linalg::FillOp zeros =
        getInitializingFill(op, op.getDpsInits()[0], /*writesAll=*/true);
    if (zeros && !matchPattern(zeros.getInputs()[0], m_AnyZeroFloat()))
      zeros = nullptr;
    Value beta = arith::ConstantOp::create(
        rewriter, op.getLoc(), rewriter.getF32FloatAttr(zeros ? 0.0 : 1.0));
    emitCall(rewriter, op, *f, a, b, c, ta, tb, beta);
    if (zeros)
      rewriter.eraseOp(zeros);
    rewriter.eraseOp(op);
    return success();
  }
  std::string callee;
};

/// The batched GEMM that goes with `callee`, if there is one.
std::optional<StringRef> batchedCallee(StringRef callee) {
  if (callee == abi::kSgemm)
    return StringRef(abi::kSgemmBatched);
  if (callee == abi::kCublasLtSgemm)
    return StringRef(abi::kCublasLtSgemmBatched);
  return std::nullopt;
}

struct ConvertGAccToBLASPass
    : public mlir::gacc::impl::ConvertGAccToBLASPassBase<
          ConvertGAccToBLASPass> {
  using Base::Base;
  LogicalResult initialize(MLIRContext *ctx) override {
    if (callee != abi::kSgemm && callee != abi::kCublasSgemm &&
        callee != abi::kCublasLtSgemm)
      return emitError(UnknownLoc::get(ctx))
             << "convert-gacc-to-blas: callee must be " << abi::kSgemm
             << ", " << abi::kCublasSgemm << " or " << abi::kCublasLtSgemm
             << ", got '" << callee << "'";
    return success();
  }
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    StringRef gemm = callee;
    target.addDynamicallyLegalOp<MatmulAccumulateOp>(
        [gemm](MatmulAccumulateOp op) {
          return op.getResult() != nullptr || !takesOperands(gemm, op);
        });
    target.addDynamicallyLegalOp<linalg::MatmulOp>(
        [gemm](linalg::MatmulOp op) { return !isBLASMatmul(op, gemm); });
    if (std::optional<StringRef> batched = batchedCallee(callee))
      target.addDynamicallyLegalOp<linalg::BatchMatmulOp>(
          [b = *batched](linalg::BatchMatmulOp op) {
            return !isBLASMatmul(op, b);
          });
    RewritePatternSet patterns(ctx);
    populateGAccToBLASConversionPatterns(patterns, callee);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateGAccToBLASConversionPatterns(
    RewritePatternSet &patterns, StringRef callee) {
  patterns.add<MatmulAccumulateToCall, ProductToCall<linalg::MatmulOp>>(
      patterns.getContext(), callee);
  if (std::optional<StringRef> batched = batchedCallee(callee))
    patterns.add<ProductToCall<linalg::BatchMatmulOp>>(patterns.getContext(),
                                                       *batched);
}
