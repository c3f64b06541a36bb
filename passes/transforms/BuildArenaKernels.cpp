//===- BuildArenaKernels.cpp - gacc-build-arena-kernels -------------------===//
//
// Builds, for each gacc.train_step, the multi-tensor kernels of the GPU path
// over flat arenas (every parameter, accumulator and optimizer state of the
// step stored contiguously, each tensor padded to 16 bytes): the
// accumulate, the deterministic sum of squares behind global-norm clipping,
// and the deferred update.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "abi/ArenaABI.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#define DEBUG_TYPE "gacc-build-arena-kernels"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCBUILDARENAKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

namespace abi = ::gacc::abi;
/// Elements per vector access: 4 fp32 = 16 bytes.
constexpr int64_t kVector = abi::kArenaVector;
using abi::kPartials;
using abi::kSumFanIn;
using abi::kSumThreads;

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  /// A 1-D parallel loop [lb, ub) whose body gets the induction variable.
  scf::ParallelOp parallel(Value lb, Value ub, function_ref<void(Value)> body) {
    return scf::ParallelOp::create(
        b, loc, ValueRange{lb}, ValueRange{ub}, ValueRange{index(1)},
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(nb.getInsertionBlock());
          body(ivs[0]);
        });
  }
};

/// Moves the per-step scalar math out of a kernel's element loop with
/// upstream's loop-invariant code motion, over the loop's body and the
/// regions nested in it (its conditionals): every pure op without regions
/// whose operands are defined outside the loop goes before it. The bias
/// corrections β^t, the scheduled learning rate and the like are then
/// computed once by the host code and reach the kernel as arguments instead
/// of once per element. The arithmetic is unchanged, so are the results.
void hoistStepScalars(scf::ParallelOp loop) {
  SmallVector<Region *> regions;
  loop->walk([&](Operation *op) {
    for (Region &r : op->getRegions())
      regions.push_back(&r);
  });
  moveLoopInvariantCode(
      regions,
      [&](Value v, Region *) { return loop.isDefinedOutsideOfLoop(v); },
      [](Operation *op, Region *) {
        return op->getNumRegions() == 0 &&
               !op->hasTrait<OpTrait::IsTerminator>() && isPure(op);
      },
      [&](Operation *op, Region *) { op->moveBefore(loop); });
}

func::FuncOp createFunc(OpBuilder &b, Location loc, StringRef name,
                        TypeRange args) {
  auto f = func::FuncOp::create(b, loc, name, b.getFunctionType(args, {}));
  b.setInsertionPointToStart(f.addEntryBlock());
  return f;
}

/// @<step>_accumulate_arena_<type>(acc: memref<?xf32>, grad: memref<?xT>,
/// weight: f32, first: i32, nonfinite: memref<1xi32>).
void buildAccumulate(OpBuilder &b, Location loc, StringRef step,
                     FloatType gradType, StringRef typeName) {
  MLIRContext *ctx = b.getContext();
  int64_t d = ShapedType::kDynamic;
  Location kloc = NameLoc::get(
      StringAttr::get(ctx, "accumulate_arena_" + typeName.str()), loc);
  auto f32 = b.getF32Type();
  auto func = createFunc(
      b, kloc, abi::accumulateArenaName(step.str(), typeName.str()),
      {MemRefType::get({d}, f32), MemRefType::get({d}, gradType), f32,
       b.getI32Type(), MemRefType::get({1}, b.getI32Type())});
  KernelBuilder k{b, kloc};
  Value acc = func.getArgument(0), grad = func.getArgument(1),
        weight = func.getArgument(2), nonfinite = func.getArgument(4);
  Value first = arith::CmpIOp::create(b, kloc, arith::CmpIPredicate::ne,
                                      func.getArgument(3),
                                      arith::ConstantIntOp::create(b, kloc, 0, 32));
  Value n = memref::DimOp::create(b, kloc, acc, 0);
  Value vectors = arith::DivUIOp::create(b, kloc, n, k.index(kVector));
  auto accVec = VectorType::get({kVector}, f32);
  auto gradVec = VectorType::get({kVector}, gradType);
  unsigned gradBytes = gradType.getWidth() / 8;
  Value weightVec = vector::BroadcastOp::create(b, kloc, accVec, weight);
  k.parallel(k.index(0), vectors, [&](Value v) {
    Value i = arith::MulIOp::create(b, kloc, v, k.index(kVector));
    Value g = vector::LoadOp::create(b, kloc, gradVec, grad, ValueRange{i},
                                     /*nontemporal=*/false,
                                     llvm::MaybeAlign(kVector * gradBytes));
    if (gradType != f32)
      g = arith::ExtFOp::create(b, kloc, accVec, g);
    Value wg = arith::MulFOp::create(b, kloc, g, weightVec);
    // β = 0 on the first micro-batch of a window: the accumulator's old
    // contents are not read, so no zero-fill is needed.
    auto ifFirst = scf::IfOp::create(
        b, kloc, first,
        [&](OpBuilder &tb, Location tl) { scf::YieldOp::create(tb, tl, wg); },
        [&](OpBuilder &eb, Location el) {
          Value old = vector::LoadOp::create(eb, el, accVec, acc,
                                             ValueRange{i}, false, llvm::MaybeAlign(16));
          scf::YieldOp::create(eb, el,
                               Value(arith::AddFOp::create(eb, el, old, wg)));
        });
    Value sum = ifFirst.getResult(0);
    vector::StoreOp::create(b, kloc, sum, acc, ValueRange{i}, false, llvm::MaybeAlign(16));
    // x − x is NaN exactly when x is ±inf or NaN.
    Value diff = arith::SubFOp::create(b, kloc, sum, sum);
    Value bad = arith::CmpFOp::create(b, kloc, arith::CmpFPredicate::UNO, diff,
                                      diff);
    Value any = vector::ReductionOp::create(b, kloc, vector::CombiningKind::OR,
                                            bad);
    scf::IfOp::create(b, kloc, any, [&](OpBuilder &tb, Location tl) {
      memref::StoreOp::create(tb, tl,
                              arith::ConstantIntOp::create(tb, tl, 1, 32),
                              nonfinite, ValueRange{k.index(0)});
      scf::YieldOp::create(tb, tl);
    });
  });
  func::ReturnOp::create(b, kloc);
}

/// @<step>_sum_squares_arena(acc: memref<?xf32>, partials:
/// memref<kPartials x f64>, result: memref<1xf64>): Σ acc² in f64 in three
/// stages with a fixed association, so the result has the same bits on
/// every run.
void buildSumSquares(OpBuilder &b, Location loc, StringRef step) {
  MLIRContext *ctx = b.getContext();
  int64_t d = ShapedType::kDynamic;
  Location kloc = NameLoc::get(StringAttr::get(ctx, "sum_squares_arena"), loc);
  auto f32 = b.getF32Type(), f64 = b.getF64Type();
  int64_t stage2 = kSumThreads / kSumFanIn;
  auto func = createFunc(b, kloc, abi::sumSquaresArenaName(step.str()),
                         {MemRefType::get({d}, f32),
                          MemRefType::get({kPartials}, f64),
                          MemRefType::get({1}, f64)});
  KernelBuilder k{b, kloc};
  Value acc = func.getArgument(0), partials = func.getArgument(1),
        result = func.getArgument(2);
  Value n = memref::DimOp::create(b, kloc, acc, 0);
  Value vectors = arith::DivUIOp::create(b, kloc, n, k.index(kVector));
  auto vec32 = VectorType::get({kVector}, f32);
  auto vec64 = VectorType::get({kVector}, f64);
  // Stage 1: thread t sums the vectors t, t + T, t + 2T, … (coalesced).
  k.parallel(k.index(0), k.index(kSumThreads), [&](Value t) {
    Value zero = arith::ConstantOp::create(
        b, kloc, DenseElementsAttr::get(vec64, b.getF64FloatAttr(0.0)));
    auto loop = scf::ForOp::create(
        b, kloc, t, vectors, k.index(kSumThreads), ValueRange{zero},
        [&](OpBuilder &lb, Location ll, Value v, ValueRange iter) {
          Value i = arith::MulIOp::create(lb, ll, v,
                                          arith::ConstantIndexOp::create(
                                              lb, ll, kVector));
          Value x = vector::LoadOp::create(lb, ll, vec32, acc, ValueRange{i},
                                           false, llvm::MaybeAlign(16));
          Value x64 = arith::ExtFOp::create(lb, ll, vec64, x);
          scf::YieldOp::create(
              lb, ll,
              Value(math::FmaOp::create(lb, ll, x64, x64, iter[0])));
        });
    // An ordered reduction of the 4 lanes (no reassociation).
    Value s = vector::ReductionOp::create(b, kloc, vector::CombiningKind::ADD,
                                          loop.getResult(0));
    memref::StoreOp::create(b, kloc, s, partials, ValueRange{t});
  });
  // Stage 2: thread u adds partials [u·256, (u+1)·256) in order.
  auto sumRange = [&](Value begin, int64_t count) {
    auto loop = scf::ForOp::create(
        b, kloc, k.index(0), k.index(count), k.index(1), ValueRange{k.f64(0)},
        [&](OpBuilder &lb, Location ll, Value j, ValueRange iter) {
          Value idx = arith::AddIOp::create(lb, ll, begin, j);
          Value p = memref::LoadOp::create(lb, ll, partials, ValueRange{idx});
          scf::YieldOp::create(
              lb, ll, Value(arith::AddFOp::create(lb, ll, iter[0], p)));
        });
    return loop.getResult(0);
  };
  k.parallel(k.index(0), k.index(stage2), [&](Value u) {
    Value begin = arith::MulIOp::create(b, kloc, u, k.index(kSumFanIn));
    Value s = sumRange(begin, kSumFanIn);
    Value at = arith::AddIOp::create(b, kloc, u, k.index(kSumThreads));
    memref::StoreOp::create(b, kloc, s, partials, ValueRange{at});
  });
  // Stage 3: one thread adds the 256 stage-2 sums in order. Its bound,
  // min(n, 1), is not a constant, so canonicalization keeps the loop (a
  // one-iteration loop would be inlined into the host code); an empty
  // arena writes no result and has nothing to update.
  Value one = arith::MinUIOp::create(b, kloc, n, k.index(1));
  k.parallel(k.index(0), one, [&](Value z) {
    Value s = sumRange(k.index(kSumThreads), stage2);
    memref::StoreOp::create(b, kloc, s, result, ValueRange{z});
  });
  func::ReturnOp::create(b, kloc);
}

/// @<step>_update_arena(param, acc, state…: memref<?xf32>, decay_end:
/// index, count: memref<1xf32>, sum_squares: memref<1xf64>, nonfinite:
/// memref<1xi32>, lr: f32, step: i64, loss_scale: f32).
void buildUpdate(OpBuilder &b, Location loc, TrainStepOp stepOp) {
  MLIRContext *ctx = b.getContext();
  int64_t d = ShapedType::kDynamic;
  auto optimizer = cast<OptimizerAttrInterface>(stepOp.getOptimizer());
  unsigned numState = optimizer.getNumStateTensors();
  Location kloc = NameLoc::get(StringAttr::get(ctx, "update_arena"), loc);
  auto f32 = b.getF32Type(), f64 = b.getF64Type();
  auto flat = MemRefType::get({d}, f32);
  SmallVector<Type> args(2 + numState, flat);
  args.append({b.getIndexType(), MemRefType::get({1}, f32),
               MemRefType::get({1}, f64), MemRefType::get({1}, b.getI32Type()),
               f32, b.getI64Type(), f32});
  auto func = createFunc(b, kloc, abi::updateArenaName(stepOp.getSymName().str()),
                         args);
  KernelBuilder k{b, kloc};
  Value param = func.getArgument(0), acc = func.getArgument(1);
  ValueRange states = func.getArguments().slice(2, numState);
  unsigned s0 = 2 + numState;
  Value decayEnd = func.getArgument(s0), countBuf = func.getArgument(s0 + 1),
        sumSquares = func.getArgument(s0 + 2),
        nonfinite = func.getArgument(s0 + 3), baseLr = func.getArgument(s0 + 4),
        stepIdx = func.getArgument(s0 + 5),
        lossScale = func.getArgument(s0 + 6);
  Value n = memref::DimOp::create(b, kloc, param, 0);
  // Per-step scalars, computed once by the host code (kernel arguments):
  // the scheduled learning rate, the first-step flag, the 1-based step.
  Value lr = baseLr;
  if (auto schedule = stepOp.getLrScheduleAttr())
    lr = buildScheduledLR(b, kloc, schedule, baseLr, stepIdx);
  Value firstStep = arith::CmpIOp::create(
      b, kloc, arith::CmpIPredicate::eq, stepIdx,
      arith::ConstantIntOp::create(b, kloc, 0, 64));
  Value stepNumber = arith::SIToFPOp::create(
      b, kloc, f32,
      arith::AddIOp::create(b, kloc, stepIdx,
                            arith::ConstantIntOp::create(b, kloc, 1, 64)));
  // Four elements per thread (the arena length is a multiple of 4): 16-byte
  // loads and stores, and the per-thread work (the flag, the count, the
  // clipping coefficient) shared by four elements.
  Value vectors = arith::DivUIOp::create(b, kloc, n, k.index(kVector));
  auto vecType = VectorType::get({kVector}, f32);
  scf::ParallelOp loop = k.parallel(k.index(0), vectors, [&](Value v) {
    Value c0 = k.index(0);
    Value base = arith::MulIOp::create(b, kloc, v, k.index(kVector));
    Value flag = memref::LoadOp::create(b, kloc, nonfinite, ValueRange{c0});
    Value clean = arith::CmpIOp::create(
        b, kloc, arith::CmpIPredicate::eq, flag,
        arith::ConstantIntOp::create(b, kloc, 0, 32));
    // A window with a non-finite value is skipped whole: nothing written.
    scf::IfOp::create(b, kloc, clean, [&](OpBuilder &, Location) {
      // The one normalization: the window's count (at least 1) times the
      // loss scale, in one division.
      Value divisor = buildUpdateDivisor(
          b, kloc, memref::LoadOp::create(b, kloc, countBuf, ValueRange{c0}),
          lossScale);
      Value coef;
      if (auto maxNorm = stepOp.getMaxGradNorm()) {
        // ‖g‖ = sqrt(Σ acc²) / divisor, then the step's own clipping
        // coefficient.
        Value ss = memref::LoadOp::create(b, kloc, sumSquares, ValueRange{c0});
        Value norm = arith::DivFOp::create(
            b, kloc,
            arith::TruncFOp::create(b, kloc, f32,
                                    math::SqrtOp::create(b, kloc, ss)),
            divisor);
        coef = buildClipCoefficient(b, kloc, norm, maxNorm->convertToDouble());
      }
      auto load = [&](Value memref) -> Value {
        return vector::LoadOp::create(b, kloc, vecType, memref,
                                      ValueRange{base}, /*nontemporal=*/false,
                                      llvm::MaybeAlign(16));
      };
      Value accV = load(acc);
      // Outputs: the parameter, then each state; read, then rewritten lane
      // by lane.
      SmallVector<Value> outs = {param};
      llvm::append_range(outs, states);
      SmallVector<Value> vecs;
      for (Value out : outs)
        vecs.push_back(load(out));
      for (int64_t lane = 0; lane < kVector; ++lane) {
        auto lanes = [&](Value vec) -> Value {
          return vector::ExtractOp::create(b, kloc, vec,
                                           ArrayRef<int64_t>{lane});
        };
        Value g = arith::DivFOp::create(b, kloc, lanes(accV), divisor);
        if (coef)
          g = arith::MulFOp::create(b, kloc, g, coef);
        Value p = lanes(vecs[0]);
        SmallVector<Value> st;
        for (unsigned s = 0; s < numState; ++s)
          st.push_back(lanes(vecs[1 + s]));
        // Weight decay applies to [0, decay_end): the arena puts the group
        // without weight decay last.
        SmallVector<Value> withDecay = optimizer.buildUpdate(
            b, kloc, g, p, st, lr, firstStep, stepNumber, /*decay=*/true);
        SmallVector<Value> without = optimizer.buildUpdate(
            b, kloc, g, p, st, lr, firstStep, stepNumber, /*decay=*/false);
        Value i = arith::AddIOp::create(b, kloc, base, k.index(lane));
        Value decays = arith::CmpIOp::create(
            b, kloc, arith::CmpIPredicate::ult, i, decayEnd);
        for (auto [o, with, wo] : llvm::enumerate(withDecay, without)) {
          Value value = with == wo ? with
                                   : Value(arith::SelectOp::create(
                                         b, kloc, decays, with, wo));
          vecs[o] = vector::InsertOp::create(b, kloc, value, vecs[o],
                                             ArrayRef<int64_t>{lane});
        }
      }
      for (auto [vec, out] : llvm::zip(vecs, outs))
        vector::StoreOp::create(b, kloc, vec, out, ValueRange{base},
                                /*nontemporal=*/false, llvm::MaybeAlign(16));
      scf::YieldOp::create(b, kloc);
    });
  });
  hoistStepScalars(loop);
  // Four lanes and two weight-decay variants built the same scalars: one
  // copy of each (fewer kernel arguments).
  IRRewriter rewriter(b.getContext());
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
  func::ReturnOp::create(b, kloc);
}

struct BuildArenaKernelsPass
    : public mlir::gacc::impl::GAccBuildArenaKernelsPassBase<
          BuildArenaKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<TrainStepOp> steps(module.getOps<TrainStepOp>());
    for (TrainStepOp step : steps) {
      OpBuilder b(module.getContext());
      b.setInsertionPointToEnd(module.getBody());
      Location loc = step.getLoc();
      StringRef name = step.getSymName();
      std::string n = name.str();
      for (const std::string &kernel :
           {abi::accumulateArenaName(n, "f32"),
            abi::accumulateArenaName(n, "bf16"),
            abi::accumulateArenaName(n, "f16"), abi::sumSquaresArenaName(n),
            abi::updateArenaName(n)})
        if (module.lookupSymbol(kernel)) {
          step.emitOpError("already has arena kernels (@")
              << kernel << " exists)";
          return signalPassFailure();
        }
      // Gradients arrive in fp32, and in the body's compute type when that
      // is bf16 or fp16.
      buildAccumulate(b, loc, name, b.getF32Type(), "f32");
      b.setInsertionPointToEnd(module.getBody());
      Precision precision = step.getPrecision().value_or(Precision::fp32);
      if (FloatType low = getLowPrecisionType(b.getContext(), precision))
        buildAccumulate(b, loc, name, low, low.isBF16() ? "bf16" : "f16");
      b.setInsertionPointToEnd(module.getBody());
      buildSumSquares(b, loc, name);
      b.setInsertionPointToEnd(module.getBody());
      buildUpdate(b, loc, step);
    }
  }
};

} // namespace
