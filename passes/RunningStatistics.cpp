//===- RunningStatistics.cpp - running statistics in the step -------------===//
//
// The loop-carried running statistics of gacc.batch_norm (see the header):
// torch's momentum update per micro-batch, Chan, Golub and LeVeque's
// pairwise combination of a window's micro-batch statistics ("Updating
// formulae and a pairwise algorithm for computing sample variances", 1979),
// and the update once per window.
//
//===----------------------------------------------------------------------===//

#include "passes/RunningStatistics.h"

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

Value f32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// `fn(inputs…, dest)` elementwise over [C], written into `dest` (the
/// loop-carried value, so that the loop updates it in place).
Value buildInPlace(OpBuilder &b, Location loc, Value dest, ValueRange inputs,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  auto type = cast<RankedTensorType>(dest.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{dest},
             SmallVector<AffineMap>(inputs.size() + 1, id),
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, fn(nb, nl, a));
             })
      .getResult(0);
}

/// apply ? (1 − momentum) · old + momentum · scale · stat : old,
/// elementwise over [C], into `old`; `scale` is the unbiased correction
/// (or 1/(n − 1) of an M2), `apply` (i1) whether the statistics move.
Value buildMomentumUpdate(OpBuilder &b, Location loc, Value old, Value stat,
                          Value scale, Value apply, double momentum) {
  return buildInPlace(
      b, loc, old, ValueRange{stat},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value kept = arith::MulFOp::create(nb, nl, a[1],
                                           f32(nb, nl, 1.0 - momentum));
        Value s = arith::MulFOp::create(nb, nl, a[0], scale);
        Value moved = arith::AddFOp::create(
            nb, nl, kept,
            arith::MulFOp::create(nb, nl, s, f32(nb, nl, momentum)));
        return arith::SelectOp::create(nb, nl, apply, moved, a[1]);
      });
}

/// max(n − 1, 1): the unbiased variance's divisor (Bessel's correction).
Value buildDegreesOfFreedom(OpBuilder &b, Location loc, Value n) {
  return arith::MaximumFOp::create(
      b, loc, arith::SubFOp::create(b, loc, n, f32(b, loc, 1.0)),
      f32(b, loc, 1.0));
}

Value isPositive(OpBuilder &b, Location loc, Value n) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, n,
                               f32(b, loc, 0.0));
}

} // namespace

RunningStatistics::RunningStatistics(TrainStepOp step,
                                     const StepSignature &sig)
    : numStatistics(sig.numStatistics) {
  auto indexOf = [&](FlatSymbolRefAttr ref) {
    return unsigned(llvm::find(sig.statisticNames, ref.getValue().str()) -
                    sig.statisticNames.begin());
  };
  unsigned carried = numStatistics;
  // The forward's ops: a clone recomputed in the backward
  // (gacc-recompute-activations) computes the same statistics again.
  for (Operation &o : step.getForwardOps()) {
    auto op = dyn_cast<BatchNormOp>(o);
    if (!op)
      continue;
    bool perWindow =
        op.getBatchStatistics() == BatchStatistics::per_window;
    ops.push_back({op, op.getMomentum().convertToDouble(),
                   indexOf(op.getRunningMeanAttr()),
                   indexOf(op.getRunningVarAttr()), perWindow, carried});
    if (perWindow)
      carried += 3;
  }
}

bool RunningStatistics::hasPerWindow() const {
  return llvm::any_of(ops, [](const Entry &e) { return e.perWindow; });
}

SmallVector<Value> RunningStatistics::initial(OpBuilder &b, Location loc,
                                              ValueRange statistics) const {
  SmallVector<Value> values(statistics);
  for (const Entry &e : ops) {
    if (!e.perWindow)
      continue;
    auto type = cast<RankedTensorType>(statistics[e.mean].getType());
    values.push_back(f32(b, loc, 0.0));
    values.push_back(buildFilled(b, loc, type, 0.0));
    values.push_back(buildFilled(b, loc, type, 0.0));
  }
  return values;
}

SmallVector<Value> RunningStatistics::update(OpBuilder &b, Location loc,
                                             const IRMapping &mapping,
                                             ValueRange carried) const {
  SmallVector<Value> next(carried);
  for (const Entry &e : ops) {
    // The op's clone (its result may be mapped to a rounded copy).
    auto clone = cast<BatchNormOp>(mapping.lookup(e.op));
    BatchNormOp::Statistics s = clone.buildStatistics(b);
    Value n = tensor::ExtractOp::create(b, loc, s.count, ValueRange{});
    Value counted = isPositive(b, loc, n);
    double momentum = e.momentum;
    if (!e.perWindow) {
      // torch: running = (1 − momentum)·running + momentum·stat, once per
      // micro-batch, with the unbiased variance.
      next[e.mean] = buildMomentumUpdate(b, loc, next[e.mean], s.mean,
                                         f32(b, loc, 1.0), counted, momentum);
      next[e.var] =
          buildMomentumUpdate(b, loc, next[e.var], s.variance,
                              arith::DivFOp::create(
                                  b, loc, n, buildDegreesOfFreedom(b, loc, n)),
                              counted, momentum);
      continue;
    }
    // Chan et al.: (n_a, mean_a, M2_a) ⊕ (n_b, mean_b, n_b·var_b).
    Value na = carried[e.carried];
    Value total = arith::AddFOp::create(b, loc, na, n);
    Value safeTotal = arith::MaximumFOp::create(b, loc, total, f32(b, loc, 1.0));
    Value wb = arith::DivFOp::create(b, loc, n, safeTotal);
    Value cross = arith::DivFOp::create(
        b, loc, arith::MulFOp::create(b, loc, na, n), safeTotal);
    next[e.carried] = total;
    // M2 first: it reads the old mean, which the mean's update overwrites.
    next[e.carried + 2] = buildInPlace(
        b, loc, carried[e.carried + 2],
        ValueRange{carried[e.carried + 1], s.mean, s.variance},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value delta = arith::SubFOp::create(nb, nl, a[1], a[0]);
          Value m2b = arith::MulFOp::create(nb, nl, a[2], n);
          Value between = arith::MulFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, delta, delta), cross);
          return arith::AddFOp::create(
              nb, nl, a[3], arith::AddFOp::create(nb, nl, m2b, between));
        });
    next[e.carried + 1] = buildInPlace(
        b, loc, carried[e.carried + 1], ValueRange{s.mean},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value delta = arith::SubFOp::create(nb, nl, a[0], a[1]);
          return arith::AddFOp::create(
              nb, nl, a[1], arith::MulFOp::create(nb, nl, delta, wb));
        });
  }
  return next;
}

SmallVector<Value> RunningStatistics::finish(OpBuilder &b, Location loc,
                                             ValueRange carried) const {
  SmallVector<Value> result(carried.take_front(numStatistics));
  for (const Entry &e : ops) {
    if (!e.perWindow)
      continue;
    // Once per window, from its pooled mean and unbiased variance.
    Value n = carried[e.carried];
    Value counted = isPositive(b, loc, n);
    double momentum = e.momentum;
    result[e.mean] =
        buildMomentumUpdate(b, loc, result[e.mean], carried[e.carried + 1],
                            f32(b, loc, 1.0), counted, momentum);
    Value invDof = arith::DivFOp::create(b, loc, f32(b, loc, 1.0),
                                         buildDegreesOfFreedom(b, loc, n));
    result[e.var] = buildMomentumUpdate(b, loc, result[e.var],
                                        carried[e.carried + 2], invDof,
                                        counted, momentum);
  }
  return result;
}
