//===- GAccToRuntime.cpp - convert-gacc-to-runtime ------------------------===//
//
// Lowers memref gacc.all_reduce to calls of the runtime's collective,
// gacc_all_reduce_sum_f32 (runtime/Collectives.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "convert-gacc-to-runtime"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTORUNTIMEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

constexpr StringLiteral kAllReduce = "gacc_all_reduce_sum_f32";

/// memref<?xf32, strided<[?], offset: ?>>: any 1-D fp32 buffer.
static MemRefType anyVector(MLIRContext *ctx) {
  int64_t d = ShapedType::kDynamic;
  return MemRefType::get({d}, Float32Type::get(ctx),
                         StridedLayoutAttr::get(ctx, d, {d}));
}

struct ConvertGAccToRuntimePass
    : public mlir::gacc::impl::ConvertGAccToRuntimePassBase<
          ConvertGAccToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AllReduceOp> reductions;
    module.walk([&](AllReduceOp op) {
      if (!op.getResult())
        reductions.push_back(op);
    });
    if (reductions.empty())
      return;
    MemRefType vector = anyVector(&getContext());
    Operation *existing = module.lookupSymbol(kAllReduce);
    auto callee = dyn_cast_or_null<func::FuncOp>(existing);
    if (existing && (!callee || callee.getFunctionType() !=
                                    FunctionType::get(&getContext(),
                                                      {vector}, {}))) {
      existing->emitError("@")
          << kAllReduce << " is taken by another definition; the runtime's "
          << "collective must be func.func (" << vector << ") -> ()";
      return signalPassFailure();
    }
    if (!callee) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      callee = func::FuncOp::create(b, module.getLoc(), kAllReduce,
                                    b.getFunctionType({vector}, {}));
      callee.setPrivate();
    }
    IRRewriter rewriter(&getContext());
    for (AllReduceOp op : reductions) {
      rewriter.setInsertionPoint(op);
      Value buffer =
          memref::CastOp::create(rewriter, op.getLoc(), vector, op.getBuffer());
      func::CallOp::create(rewriter, op.getLoc(), callee, ValueRange{buffer});
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
