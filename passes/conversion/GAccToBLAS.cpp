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
// operand types (abi::lowOperandsGemm: gacc_sgemm_bf16, ...). With
// cuBLASLt, an fp32 product followed by its bias add (and ReLU) is one call
// with cuBLASLt's epilogue (gacc_cublaslt_sgemm_epilogue), one followed by
// its bias add and a tanh GELU is one call with GELU_AUX_BIAS
// (gacc_cublaslt_sgemm_gelu_bias), and a product into zeros that a tanh
// GELU's gradient multiplies is one call with DGELU
// (gacc_cublaslt_sgemm_gelu_grad).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "abi/RuntimeABI.h"
#include "dialect/LinalgBuilders.h"
#include "passes/analysis/GemmEpilogues.h"
#include "passes/analysis/InitializingFill.h"
#include "passes/analysis/KernelOrder.h"
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
  return callee == abi::kCublasLtSgemm ||
         callee == abi::kCublasLtSgemmBatched ||
         callee == abi::kCublasLtSgemmEpilogue ||
         callee == abi::kCublasLtSgemmGeluBias ||
         callee == abi::kCublasLtSgemmGeluGrad;
}

/// Whether `callee` takes an abi::GemmEpilogue last (the epilogue's entry
/// point, for fp32 or 16-bit operands).
bool takesEpilogue(StringRef callee) {
  return callee.starts_with(abi::kCublasLtSgemmEpilogue);
}
/// Whether `callee` takes a rank-1 bias after C.
bool takesBias(StringRef callee) {
  return takesEpilogue(callee) || callee == abi::kCublasLtSgemmGeluBias;
}
/// Whether `callee` takes the GELU's input X, rank 2 fp32, after C (and
/// the bias).
bool takesGeluInput(StringRef callee) {
  return callee == abi::kCublasLtSgemmGeluBias ||
         callee == abi::kCublasLtSgemmGeluGrad;
}

/// The private declaration of `callee`'s entry point for the product of
/// `a` and `b` into `c` (`op`'s operands): `<name>(A, B, C, transA: i32,
/// transB: i32, beta: f32)`, and `inputs: i32` for cuBLASLt's fp32
/// products; the epilogue's entry point takes a rank-1 bias after C and
/// `epilogue: i32` last, and its C and bias are fp32 for fp32 operands and
/// of the operands' type for 16-bit ones (a narrowed step's rounded
/// output); the GELU's entry points take the bias (GELU_AUX_BIAS) and the
/// GELU's input X after C. At the start of the module unless it exists.
/// Failure when no entry point takes the operands' element types
/// (factorType) or the name is taken by a function of another type;
/// nothing is created then.
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
  Type out = takesEpilogue(name) ? *factor : f32;
  SmallVector<Type> types = {ab, ab, dynamicStrided(out, batched)};
  if (takesBias(name))
    types.push_back(getDynamicStridedMemRefType(out, 1));
  if (takesGeluInput(name))
    types.push_back(dynamicStrided(f32, /*batched=*/false));
  types.append({i32, i32, f32});
  if (takesInputs(name))
    types.push_back(i32);
  if (takesEpilogue(name))
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

/// What a call of an epilogue's entry point adds to the product: the
/// bias, the GELU's input and the abi::GemmEpilogue, where it takes them.
struct EpilogueOperands {
  Value bias;
  Value geluInput = nullptr;
  abi::GemmEpilogue epilogue = abi::GemmEpilogue::bias;
};

/// Calls the entry point `f` (declareGemm) for `op`: C = beta·C +
/// op(A)·op(B), followed by `epilogue` where `f` takes one: its bias and
/// the GELU's input X after C, its abi::GemmEpilogue last, as `f` takes
/// them.
void emitCall(RewriterBase &rewriter, Operation *op, func::FuncOp f, Value a,
              Value b, Value c, bool transA, bool transB, Value beta,
              std::optional<EpilogueOperands> epilogue = std::nullopt) {
  Location loc = op->getLoc();
  auto toDynamic = [&](Value v) -> Value {
    auto memref = cast<MemRefType>(v.getType());
    auto type =
        getDynamicStridedMemRefType(memref.getElementType(), memref.getRank());
    return memref::CastOp::create(rewriter, loc, type, v);
  };
  auto i32 = [&](bool v) -> Value {
    return arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getI32IntegerAttr(v));
  };
  StringRef name = f.getName();
  assert((epilogue || !(takesBias(name) || takesGeluInput(name))) &&
         "an epilogue's entry point takes its operands");
  SmallVector<Value> operands = {toDynamic(a), toDynamic(b), toDynamic(c),
                                 i32(transA),  i32(transB),  beta};
  if (takesInputs(name))
    operands.push_back(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getI32IntegerAttr(static_cast<int32_t>(gemmInputs(op)))));
  // The epilogue's memrefs follow C.
  SmallVector<Value> epilogueMemrefs;
  if (takesBias(name))
    epilogueMemrefs.push_back(toDynamic(epilogue->bias));
  if (takesGeluInput(name))
    epilogueMemrefs.push_back(toDynamic(epilogue->geluInput));
  operands.insert(operands.begin() + 3, epilogueMemrefs.begin(),
                  epilogueMemrefs.end());
  if (takesEpilogue(name))
    operands.push_back(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getI32IntegerAttr(static_cast<int32_t>(epilogue->epilogue))));
  func::CallOp::create(rewriter, loc, f, operands);
}

/// Whether `callee` can take the operands of `op`: OpenBLAS's calls take
/// any strides; cuBLAS and cuBLASLt read rows of consecutive elements, so
/// an operand whose innermost stride is not known to be 1 stays a loop nest
/// (convert-gacc-to-scf, or linalg's lowering); as does one no entry point
/// addresses (another memory space, a layout that is not strided).
bool takesOperands(StringRef callee, Operation *op) {
  return takesRuntimeOperands(op) &&
         (callee == abi::kSgemm || callee == abi::kSgemmBatched ||
          hasUnitInnerStrides(op));
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

/// The fill of zeros that a product's fresh output C starts from and only
/// the product reads (getInitializingFill; the product writes every
/// element of C), or null: the GEMM may then write C with β = 0 and the
/// fill go.
linalg::FillOp getZeroStart(linalg::LinalgOp product) {
  linalg::FillOp fill = getInitializingFill(product, product.getDpsInits()[0],
                                            /*writesAll=*/true);
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ? fill
                                                                     : nullptr;
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
    linalg::FillOp zeros = getZeroStart(op);
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

/// `v` (holdsRows) as a rank-2 [m, n] memref: itself, or its leading
/// dimensions collapsed into one.
Value asRows(RewriterBase &rewriter, Location loc, Value v) {
  auto type = cast<MemRefType>(v.getType());
  if (type.getRank() == 2)
    return v;
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < type.getRank(); ++d)
    groups[0].push_back(d);
  groups[1].push_back(type.getRank() - 1);
  return memref::CollapseShapeOp::create(rewriter, loc, v, groups);
}

/// linalg.matmul (memref, fp32) into zeros whose next op is a tanh GELU's
/// gradient (matchGeluGrad): one call with cuBLASLt's DGELU epilogue
/// (abi::kCublasLtSgemmGeluGrad) that writes the generic's output, reading
/// the GELU's input as its auxiliary matrix; C's buffer goes.
struct MatmulWithGeluGradToCall : public OpConversionPattern<linalg::MatmulOp> {
  MatmulWithGeluGradToCall(MLIRContext *ctx)
      : OpConversionPattern(ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(linalg::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef callee = abi::kCublasLtSgemmGeluGrad;
    Value a = adaptor.getInputs()[0], b = adaptor.getInputs()[1],
          c = adaptor.getOutputs()[0];
    if (!isBLASMatmul(op, abi::kCublasLtSgemm))
      return rewriter.notifyMatchFailure(op, "not a product cuBLASLt takes");
    linalg::FillOp zeros = getZeroStart(op);
    StringRef why;
    FailureOr<GeluGrad> grad = matchGeluGrad(op, zeros, why);
    if (failed(grad))
      return rewriter.notifyMatchFailure(op, why);
    Value y = grad->generic.getDpsInits()[0];
    FailureOr<func::FuncOp> f = declareGemm(rewriter, op, callee, a, b, c);
    if (failed(f))
      return rewriter.notifyMatchFailure(op, "its entry point's name is "
                                             "taken");
    auto [ta, tb] = *getMatmulTransposes(op);
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(grad->generic);
    Value beta =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0));
    EpilogueOperands operands{nullptr, asRows(rewriter, loc, grad->input)};
    emitCall(rewriter, op, *f, a, b, asRows(rewriter, loc, y), ta, tb, beta,
             operands);
    rewriter.eraseOp(grad->generic);
    for (Operation *view : grad->views)
      rewriter.eraseOp(view);
    rewriter.eraseOp(zeros);
    rewriter.eraseOp(op);
    // C's other users were erased above, and its frees (matchGeluGrad).
    for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.eraseOp(c.getDefiningOp());
    return success();
  }
};

/// linalg.matmul (memref; fp32 operands, or bf16 ones) followed
/// by its bias add (matchBiasAdd), through cuBLASLt's epilogue: one call
/// (abi::kCublasLtSgemmEpilogue, with the operands' type) instead of a GEMM
/// and a kernel, BIAS into C, or, where the generic has a second output
/// (canWriteResult), BIAS or RELU_BIAS into that output, and C's buffer
/// goes with the product; or, with `gelu` and a tanh GELU of C next
/// (matchGeluOfSum), GELU_AUX_BIAS (abi::kCublasLtSgemmGeluBias): the
/// GELU into its generic's output and the sum into C, both generics gone.
struct MatmulWithEpilogueToCall : public OpConversionPattern<linalg::MatmulOp> {
  MatmulWithEpilogueToCall(MLIRContext *ctx, bool gelu)
      : OpConversionPattern(ctx, /*benefit=*/2), gelu(gelu) {}
  LogicalResult
  matchAndRewrite(linalg::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef callee = abi::kCublasLtSgemmEpilogue;
    Value a = adaptor.getInputs()[0], b = adaptor.getInputs()[1],
          c = adaptor.getOutputs()[0];
    if (!isBLASMatmul(op, callee))
      return rewriter.notifyMatchFailure(op, "not a product cuBLASLt takes");
    linalg::FillOp zeros = getZeroStart(op);
    StringRef why;
    FailureOr<BiasAdd> add = matchBiasAdd(op, why);
    if (succeeded(add) && gelu && (add->gelu || !add->result))
      if (FailureOr<GeluOfSum> g = matchGeluOfSum(op, *add, zeros, why);
          succeeded(g))
        return rewriteGeluOfSum(op, a, b, c, *add, *g, zeros, rewriter);
    if (succeeded(add) && add->gelu)
      return rewriter.notifyMatchFailure(
          op, gelu ? why : "GELU epilogues are off (gelu-epilogues=false)");
    if (failed(add) || (add->result && !canWriteResult(op, *add, zeros, why)))
      return rewriter.notifyMatchFailure(op, why);
    Value out = add->result ? add->result->get() : c;
    FailureOr<func::FuncOp> f = declareGemm(rewriter, op, callee, a, b, c);
    if (failed(f))
      return rewriter.notifyMatchFailure(op, "its entry point's name is "
                                             "taken");
    auto [ta, tb] = *getMatmulTransposes(op);
    // At the generic's place: its second output may be a view made between.
    rewriter.setInsertionPoint(add->generic);
    Value beta = arith::ConstantOp::create(
        rewriter, op.getLoc(), rewriter.getF32FloatAttr(zeros ? 0.0 : 1.0));
    emitCall(rewriter, op, *f, a, b, out, ta, tb, beta,
             EpilogueOperands{add->bias, nullptr,
                              add->relu ? abi::GemmEpilogue::reluBias
                                        : abi::GemmEpilogue::bias});
    rewriter.eraseOp(add->generic);
    if (zeros)
      rewriter.eraseOp(zeros);
    rewriter.eraseOp(op);
    // C's other users were the product, its fill and the generic, erased
    // above, and its frees (canWriteResult).
    if (add->result) {
      for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.eraseOp(c.getDefiningOp());
    }
    return success();
  }

private:
  LogicalResult rewriteGeluOfSum(linalg::MatmulOp op, Value a, Value b, Value c,
                                 const BiasAdd &add, const GeluOfSum &gelu,
                                 linalg::FillOp zeros,
                                 ConversionPatternRewriter &rewriter) const {
    FailureOr<func::FuncOp> f =
        declareGemm(rewriter, op, abi::kCublasLtSgemmGeluBias, a, b, c);
    if (failed(f))
      return rewriter.notifyMatchFailure(op, "its entry point's name is "
                                             "taken");
    auto [ta, tb] = *getMatmulTransposes(op);
    Location loc = op.getLoc();
    // At the GELU's place: its output may be a buffer made between.
    rewriter.setInsertionPoint(gelu.generic);
    Value beta =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0));
    Value y = asRows(rewriter, loc, gelu.output);
    emitCall(rewriter, op, *f, a, b, y, ta, tb, beta,
             EpilogueOperands{add.bias, c});
    if (gelu.generic != add.generic)
      rewriter.eraseOp(gelu.generic);
    rewriter.eraseOp(add.generic);
    rewriter.eraseOp(zeros);
    rewriter.eraseOp(op);
    return success();
  }
  bool gelu;
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
    populateGAccToBLASConversionPatterns(patterns, callee, geluEpilogues);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::gacc::populateGAccToBLASConversionPatterns(
    RewritePatternSet &patterns, StringRef callee, bool geluEpilogues) {
  patterns.add<MatmulAccumulateToCall, ProductToCall<linalg::MatmulOp>>(
      patterns.getContext(), callee);
  if (std::optional<StringRef> batched = batchedCallee(callee))
    patterns.add<ProductToCall<linalg::BatchMatmulOp>>(patterns.getContext(),
                                                       *batched);
  if (callee == abi::kCublasLtSgemm)
    patterns.add<MatmulWithEpilogueToCall>(patterns.getContext(),
                                           geluEpilogues);
  if (callee == abi::kCublasLtSgemm && geluEpilogues)
    patterns.add<MatmulWithGeluGradToCall>(patterns.getContext());
}
