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
// with cuBLASLt's epilogue (gacc_cublaslt_sgemm_epilogue).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "abi/RuntimeABI.h"
#include "dialect/LinalgBuilders.h"
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
         callee == abi::kCublasLtSgemmEpilogue;
}

/// Whether `callee` takes a bias after C and an abi::GemmEpilogue last.
bool takesEpilogue(StringRef callee) {
  return callee == abi::kCublasLtSgemmEpilogue;
}

/// The private declaration of `callee`'s entry point for the product of
/// `a` and `b` into `c` (`op`'s operands): `<name>(A, B, C, transA: i32,
/// transB: i32, beta: f32)`, and `inputs: i32` for cuBLASLt's fp32
/// products; the epilogue's entry point takes a rank-1 fp32 bias after C
/// and `epilogue: i32` last. At the start of the module unless it exists.
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
  SmallVector<Type> types = {ab,  ab,  dynamicStrided(f32, batched),
                             i32, i32, f32};
  if (takesEpilogue(name))
    types.insert(types.begin() + 3, getDynamicStridedMemRefType(f32, 1));
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

/// What a call of the epilogue's entry point adds to the product: the
/// bias and the abi::GemmEpilogue.
struct EpilogueOperands {
  Value bias;
  abi::GemmEpilogue epilogue;
};

/// Calls the entry point `f` (declareGemm) for `op`: C = beta·C +
/// op(A)·op(B), followed by `epilogue` where `f` takes one.
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
  SmallVector<Value> operands = {toDynamic(a), toDynamic(b), toDynamic(c),
                                 i32(transA),  i32(transB),  beta};
  if (takesInputs(f.getName()))
    operands.push_back(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getI32IntegerAttr(static_cast<int32_t>(gemmInputs(op)))));
  if (takesEpilogue(f.getName())) {
    assert(epilogue && "the epilogue's entry point takes a bias");
    operands.insert(operands.begin() + 3, toDynamic(epilogue->bias));
    operands.push_back(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getI32IntegerAttr(static_cast<int32_t>(epilogue->epilogue))));
  }
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

/// A linear layer's bias add after a product into C, and the ReLU after
/// it, as one elementwise generic (what gacc-fuse-elementwise leaves):
/// what cuBLASLt's epilogue applies as it writes the product.
struct BiasAdd {
  linalg::GenericOp generic;
  /// The packed fp32 bias [n], read by column.
  Value bias;
  /// The generic's output C (C[i, j] + bias[j]) and, if it has one, its
  /// second output Y (max(C[i, j] + bias[j], 0)).
  OpOperand *sum = nullptr, *relu = nullptr;
};

/// The first op after `op` in its block that has memory effects (views,
/// arithmetic and new allocations between are skipped: none touches memory
/// an op before it could), or null.
Operation *nextEffectingOp(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryEffectFree(next) &&
        !isa<memref::AllocOp, memref::AllocaOp>(next))
      return next;
  return nullptr;
}

/// Whether `v` is `x + y` in either order (arith.addf).
bool isSum(Value v, Value x, Value y) {
  auto add = v.getDefiningOp<arith::AddFOp>();
  return add && ((add.getLhs() == x && add.getRhs() == y) ||
                 (add.getLhs() == y && add.getRhs() == x));
}

/// Whether `v` is max(x, +0.0) in either order (arith.maximumf, gacc.relu's
/// decomposition).
bool isRelu(Value v, Value x) {
  auto max = v.getDefiningOp<arith::MaximumFOp>();
  if (!max || (max.getLhs() != x && max.getRhs() != x))
    return false;
  Value other = max.getLhs() == x ? max.getRhs() : max.getLhs();
  return matchPattern(other, m_PosZeroFloat());
}

/// The bias add after `matmul` (fp32 A, B and C): the next op with memory
/// effects is a generic with two parallel loops over C's static [m, n],
/// whose payload is pure, that reads one packed fp32 bias [n] by column and
/// writes C[i, j] + bias[j] back into C, and may write max(that, +0.0) to
/// a second output Y of C's shape; the bias may not share memory with C.
/// Failure, with `why`, for anything else.
FailureOr<BiasAdd> matchBiasAdd(linalg::MatmulOp matmul, StringRef &why) {
  Value c = matmul.getDpsInits()[0];
  auto generic = dyn_cast_or_null<linalg::GenericOp>(nextEffectingOp(matmul));
  why = "the next op with memory effects is not an elementwise generic";
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() > 2 ||
      generic.getNumLoops() != 2 || generic.getNumParallelLoops() != 2 ||
      !hasUnitInnerStrides(generic) ||
      !llvm::all_of(generic.getBody()->without_terminator(),
                    [](Operation &op) { return isPure(&op); }))
    return failure();
  MLIRContext *ctx = matmul.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap column = AffineMap::get(2, 0, getAffineDimExpr(1, ctx));
  BiasAdd add{generic, generic.getDpsInputs()[0]};
  OpOperand *bias = generic.getDpsInputOperand(0);
  auto biasType = dyn_cast<MemRefType>(add.bias.getType());
  why = "its input is not an fp32 bias read by column apart from C";
  if (!biasType || biasType.getRank() != 1 ||
      !biasType.getElementType().isF32() ||
      generic.getMatchingIndexingMap(bias) != column || mayAlias(add.bias, c))
    return failure();
  why = "its outputs are not C and another fp32 buffer of C's static shape";
  auto shapeOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getShape();
  };
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    if (generic.getMatchingIndexingMap(&init) != identity ||
        !cast<MemRefType>(init.get().getType()).getElementType().isF32() ||
        shapeOf(init.get()) != shapeOf(c))
      return failure();
    if (init.get() == c && !add.sum)
      add.sum = &init;
    else
      add.relu = &init;
  }
  if (!add.sum || ShapedType::isDynamicShape(shapeOf(c)))
    return failure();
  why = "it does not write C[i, j] + bias[j] to C (and max(that, +0.0) to "
        "its other output)";
  Value added = generic.getMatchingYieldValue(add.sum)->get();
  if (!isSum(added, generic.getMatchingBlockArgument(bias),
             generic.getMatchingBlockArgument(add.sum)) ||
      (add.relu &&
       !isRelu(generic.getMatchingYieldValue(add.relu)->get(), added)))
    return failure();
  return add;
}

/// Whether the call may write the ReLU's output Y of `add` instead of C:
/// zeros start C (`zeros`, the product's initializing fill), C is a buffer
/// that nothing but the product, that fill, the generic and frees uses (so
/// that the sum need not be written: the relu adjoint reads Y), and Y is
/// apart from A, B, the bias and C. Otherwise `why`.
bool canWriteRelu(linalg::MatmulOp matmul, const BiasAdd &add,
                  linalg::FillOp zeros, StringRef &why) {
  Value c = matmul.getDpsInits()[0];
  why = "the ReLU's sum is read elsewhere or C does not start from zeros";
  if (!zeros || !c.getDefiningOp<memref::AllocOp>())
    return false;
  for (Operation *user : c.getUsers())
    if (user != matmul && user != add.generic && user != zeros &&
        !isa<memref::DeallocOp>(user))
      return false;
  why = "the ReLU's output may share memory with an operand";
  Value y = add.relu->get();
  for (Value operand :
       {matmul.getDpsInputs()[0], matmul.getDpsInputs()[1], add.bias, c})
    if (mayAlias(y, operand))
      return false;
  return true;
}

/// linalg.matmul (memref, fp32) followed by its bias add (matchBiasAdd),
/// through cuBLASLt's epilogue: one call (abi::kCublasLtSgemmEpilogue)
/// instead of a GEMM and a kernel, with BIAS into C, or, where the generic
/// also applies the ReLU (canWriteRelu), RELU_BIAS into the ReLU's output,
/// and C's buffer goes with the product.
struct MatmulWithEpilogueToCall : public OpConversionPattern<linalg::MatmulOp> {
  MatmulWithEpilogueToCall(MLIRContext *ctx)
      : OpConversionPattern(ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(linalg::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef callee = abi::kCublasLtSgemmEpilogue;
    Value a = adaptor.getInputs()[0], b = adaptor.getInputs()[1],
          c = adaptor.getOutputs()[0];
    if (!isBLASMatmul(op, callee) ||
        !cast<MemRefType>(a.getType()).getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not an fp32 product cuBLASLt "
                                             "takes");
    linalg::FillOp zeros = getInitializingFill(op, c, /*writesAll=*/true);
    if (zeros && !matchPattern(zeros.getInputs()[0], m_AnyZeroFloat()))
      zeros = nullptr;
    StringRef why;
    FailureOr<BiasAdd> add = matchBiasAdd(op, why);
    if (failed(add) || (add->relu && !canWriteRelu(op, *add, zeros, why)))
      return rewriter.notifyMatchFailure(op, why);
    Value out = add->relu ? add->relu->get() : c;
    FailureOr<func::FuncOp> f = declareGemm(rewriter, op, callee, a, b, out);
    if (failed(f))
      return rewriter.notifyMatchFailure(op, "its entry point's name is "
                                             "taken");
    auto [ta, tb] = *getMatmulTransposes(op);
    // At the generic's place: the ReLU's output may be a view made between.
    rewriter.setInsertionPoint(add->generic);
    Value beta = arith::ConstantOp::create(
        rewriter, op.getLoc(), rewriter.getF32FloatAttr(zeros ? 0.0 : 1.0));
    emitCall(rewriter, op, *f, a, b, out, ta, tb, beta,
             EpilogueOperands{add->bias, add->relu ? abi::GemmEpilogue::reluBias
                                                   : abi::GemmEpilogue::bias});
    rewriter.eraseOp(add->generic);
    if (zeros)
      rewriter.eraseOp(zeros);
    rewriter.eraseOp(op);
    // C's other users were the product, its fill and the generic, erased
    // above, and its frees (canWriteRelu).
    if (add->relu) {
      for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.eraseOp(c.getDefiningOp());
    }
    return success();
  }
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
  if (callee == abi::kCublasLtSgemm)
    patterns.add<MatmulWithEpilogueToCall>(patterns.getContext());
}
