//===- GAccToBLAS.cpp - convert-gacc-to-blas ------------------------------===//
//
// Lowers memref gacc.matmul_accumulate and fp32 linalg.matmul to calls of the
// runtime's gacc_sgemm (OpenBLAS cblas_sgemm with beta = 0 or 1) or, on the
// cuda target, gacc_cublas_sgemm (cuBLAS).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "convert-gacc-to-blas"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOBLASPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

static MemRefType dynamicStrided(MLIRContext *ctx) {
  int64_t d = ShapedType::kDynamic;
  return MemRefType::get({d, d}, Float32Type::get(ctx),
                         StridedLayoutAttr::get(ctx, d, {d, d}));
}

/// Declares `<name>(A, B, C, transA: i32, transB: i32, beta: f32)`.
static func::FuncOp getOrDeclareSgemm(ModuleOp module, StringRef name) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MemRefType m = dynamicStrided(module.getContext());
  auto type = b.getFunctionType(
      {m, m, m, b.getI32Type(), b.getI32Type(), b.getF32Type()}, {});
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

static void emitCall(RewriterBase &rewriter, Location loc, func::FuncOp callee,
                     Value a, Value b, Value c, bool transA, bool transB,
                     Value beta) {
  MemRefType m = dynamicStrided(rewriter.getContext());
  auto cast = [&](Value v) -> Value {
    return memref::CastOp::create(rewriter, loc, m, v);
  };
  auto i32 = [&](bool v) -> Value {
    return arith::ConstantOp::create(rewriter, loc,
                                     rewriter.getI32IntegerAttr(v));
  };
  func::CallOp::create(rewriter, loc, callee,
                       ValueRange{cast(a), cast(b), cast(c), i32(transA),
                                  i32(transB), beta});
}

struct ConvertGAccToBLASPass
    : public mlir::gacc::impl::ConvertGAccToBLASPassBase<ConvertGAccToBLASPass> {
  using Base::Base;
  LogicalResult initialize(MLIRContext *ctx) override {
    if (callee != "gacc_sgemm" && callee != "gacc_cublas_sgemm")
      return emitError(UnknownLoc::get(ctx))
             << "convert-gacc-to-blas: callee must be gacc_sgemm or "
                "gacc_cublas_sgemm, got '"
             << callee << "'";
    return success();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<MatmulAccumulateOp> fused;
    SmallVector<linalg::MatmulOp> plain;
    module.walk([&](Operation *op) {
      if (auto m = dyn_cast<MatmulAccumulateOp>(op)) {
        if (!m.getResult())
          fused.push_back(m);
      } else if (auto m = dyn_cast<linalg::MatmulOp>(op)) {
        if (m.hasPureBufferSemantics() &&
            llvm::all_of(m->getOperandTypes(), [](Type t) {
              return cast<MemRefType>(t).getElementType().isF32();
            }) && succeeded(getMatmulTransposes(m)))
          plain.push_back(m);
      }
    });
    if (fused.empty() && plain.empty())
      return;
    func::FuncOp sgemm = getOrDeclareSgemm(module, callee);
    IRRewriter rewriter(&getContext());
    for (MatmulAccumulateOp op : fused) {
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      // β = 0 on the first micro-batch: BLAS then never reads C.
      Value zero = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getF32FloatAttr(0.0));
      Value one = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF32FloatAttr(1.0));
      Value beta =
          arith::SelectOp::create(rewriter, loc, op.getFirst(), zero, one);
      emitCall(rewriter, loc, sgemm, op.getA(), op.getB(),
               op.getAccumulator(), op.getTransposeA(), op.getTransposeB(),
               beta);
      rewriter.eraseOp(op);
    }
    for (linalg::MatmulOp op : plain) {
      auto [ta, tb] = *getMatmulTransposes(op);
      rewriter.setInsertionPoint(op);
      Value one = arith::ConstantOp::create(rewriter, op.getLoc(),
                                            rewriter.getF32FloatAttr(1.0));
      emitCall(rewriter, op.getLoc(), sgemm, op.getInputs()[0],
               op.getInputs()[1], op.getOutputs()[0], ta, tb, one);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
