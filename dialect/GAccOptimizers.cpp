//===- GAccOptimizers.cpp - the optimizer attributes' update rules --------===//
//
// Verifiers and OptimizerAttrInterface implementations of #gacc.sgd,
// #gacc.adam, #gacc.adamw and #gacc.lion: each builds the scalar update of
// one element inside the fused update kernel. Formulas follow torch.optim
// (SGD, Adam, AdamW) and Chen et al. 2023 (Lion); see the attributes' ODS
// descriptions.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Scalar f32 helpers for update bodies.
struct Scalar {
  OpBuilder &b;
  Location loc;
  Value c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sel(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// The correctly rounded f32 square root on every target: computed in
  /// f64 and rounded once (exact for f32 inputs). A plain f32 math.sqrt
  /// becomes libdevice's __nv_sqrtf on NVPTX, which is sqrt.approx.f32
  /// unless __CUDA_PREC_SQRT is set; torch's CUDA optimizers use the
  /// IEEE square root.
  Value sqrt(Value x) {
    Value wide = arith::ExtFOp::create(b, loc, b.getF64Type(), x);
    return arith::TruncFOp::create(b, loc, b.getF32Type(),
                                   math::SqrtOp::create(b, loc, wide));
  }
};

double d(const APFloat &f) { return f.convertToDouble(); }

/// Adam's moments and step (shared by Adam and AdamW).
SmallVector<Value> adamUpdate(Scalar s, Value g, Value p, ValueRange state,
                              Value lr, Value firstStep, Value t, double beta1,
                              double beta2, double eps) {
  Value zero = s.c(0.0);
  Value m0 = s.sel(firstStep, zero, state[0]);
  Value v0 = s.sel(firstStep, zero, state[1]);
  Value m = s.add(s.mul(s.c(beta1), m0), s.mul(s.c(1.0 - beta1), g));
  Value v = s.add(s.mul(s.c(beta2), v0), s.mul(s.c(1.0 - beta2), s.mul(g, g)));
  Value bc1 = s.sub(s.c(1.0), math::PowFOp::create(s.b, s.loc, s.c(beta1), t));
  Value bc2 = s.sub(s.c(1.0), math::PowFOp::create(s.b, s.loc, s.c(beta2), t));
  Value denom = s.add(s.div(s.sqrt(v), s.sqrt(bc2)),
                      s.c(eps));
  Value newP = s.sub(p, s.mul(s.div(lr, bc1), s.div(m, denom)));
  return {newP, m, v};
}
} // namespace

//===----------------------------------------------------------------------===//
// SGD
//===----------------------------------------------------------------------===//

LogicalResult SGDAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              APFloat lr, APFloat momentum, APFloat dampening,
                              APFloat weightDecay, bool nesterov) {
  if (failed(verifyFiniteF32(emitError, "#gacc.sgd",
                             {{"lr", lr},
                              {"momentum", momentum},
                              {"dampening", dampening},
                              {"weight_decay", weightDecay}})) ||
      failed(verifyRangeInF32(emitError, "#gacc.sgd", "dampening", dampening, 0,
                              1, Interval::Closed)))
    return failure();
  if (!(d(lr) >= 0.0))
    return emitError() << "#gacc.sgd needs lr >= 0, got " << d(lr);
  if (!(d(momentum) >= 0.0))
    return emitError() << "#gacc.sgd needs momentum >= 0, got "
                       << d(momentum);
  if (!(d(weightDecay) >= 0.0))
    return emitError() << "#gacc.sgd needs weight_decay >= 0, got "
                       << d(weightDecay);
  // torch.optim.SGD: "Nesterov momentum requires a momentum and zero
  // dampening".
  if (nesterov && (d(momentum) <= 0.0 || d(dampening) != 0.0))
    return emitError()
           << "#gacc.sgd with nesterov needs momentum > 0 and dampening = 0";
  return success();
}

unsigned SGDAttr::getNumStateTensors() const {
  return getMomentum().isZero() ? 0 : 1;
}
double SGDAttr::getDefaultLearningRate() const { return d(getLr()); }
double SGDAttr::getFirstStepSensitivity(double, double margin) const {
  return getNesterov() ? (1.0 + d(getMomentum())) * margin : margin;
}

SmallVector<Value> SGDAttr::buildUpdate(OpBuilder &b, Location loc, Value g,
                                        Value p, ValueRange state, Value lr,
                                        Value firstStep, Value, bool decay) const {
  Scalar s{b, loc};
  if (decay && !getWeightDecay().isZero())
    g = s.add(g, s.mul(s.c(d(getWeightDecay())), p));
  Value buf;
  if (!getMomentum().isZero()) {
    Value m = s.c(d(getMomentum()));
    Value added = getDampening().isZero()
                      ? g
                      : s.mul(s.c(1.0 - d(getDampening())), g);
    // The buffer is the gradient itself on the first step (torch).
    buf = s.sel(firstStep, g, s.add(s.mul(m, state[0]), added));
    g = getNesterov() ? s.add(g, s.mul(m, buf)) : buf;
  }
  SmallVector<Value> out = {s.sub(p, s.mul(lr, g))};
  if (buf)
    out.push_back(buf);
  return out;
}

//===----------------------------------------------------------------------===//
// Adam, AdamW
//===----------------------------------------------------------------------===//

static LogicalResult verifyAdamLike(function_ref<InFlightDiagnostic()> emitError,
                                    StringRef name, APFloat lr, APFloat beta1,
                                    APFloat beta2, APFloat eps,
                                    APFloat weightDecay) {
  if (failed(verifyFiniteF32(
          emitError, name,
          {{"lr", lr}, {"eps", eps}, {"weight_decay", weightDecay}})))
    return failure();
  if (!(d(lr) >= 0.0))
    return emitError() << name << " needs lr >= 0, got " << d(lr);
  if (failed(verifyRangeInF32(emitError, name, "beta1", beta1, 0, 1,
                              Interval::ClosedOpen)) ||
      failed(verifyRangeInF32(emitError, name, "beta2", beta2, 0, 1,
                              Interval::ClosedOpen)))
    return failure();
  if (!(d(eps) > 0.0))
    return emitError() << name << " needs eps > 0, got " << d(eps);
  if (!(d(weightDecay) >= 0.0))
    return emitError() << name << " needs weight_decay >= 0, got "
                       << d(weightDecay);
  return success();
}

LogicalResult AdamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               APFloat lr, APFloat beta1, APFloat beta2,
                               APFloat eps, APFloat weightDecay) {
  return verifyAdamLike(emitError, "#gacc.adam", lr, beta1, beta2, eps,
                        weightDecay);
}
unsigned AdamAttr::getNumStateTensors() const { return 2; }
double AdamAttr::getDefaultLearningRate() const { return d(getLr()); }
/// lr·g/(|g| + eps) moves by at most eps·margin/(|g|min + eps)² for a
/// gradient within ±margin of g (|g|min: its smallest magnitude).
static double normalizedStepSensitivity(double grad, double margin,
                                        double eps) {
  double low = std::max(std::fabs(grad) - margin, 0.0) + eps;
  return eps * margin / (low * low);
}
double AdamAttr::getFirstStepSensitivity(double grad, double margin) const {
  return normalizedStepSensitivity(grad, margin, d(getEps()));
}
SmallVector<Value> AdamAttr::buildUpdate(OpBuilder &b, Location loc, Value g,
                                         Value p, ValueRange state, Value lr,
                                         Value firstStep, Value t,
                                         bool decay) const {
  Scalar s{b, loc};
  if (decay && !getWeightDecay().isZero())
    g = s.add(g, s.mul(s.c(d(getWeightDecay())), p));
  return adamUpdate(s, g, p, state, lr, firstStep, t, d(getBeta1()),
                    d(getBeta2()), d(getEps()));
}

LogicalResult AdamWAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                APFloat lr, APFloat beta1, APFloat beta2,
                                APFloat eps, APFloat weightDecay) {
  return verifyAdamLike(emitError, "#gacc.adamw", lr, beta1, beta2, eps,
                        weightDecay);
}
unsigned AdamWAttr::getNumStateTensors() const { return 2; }
double AdamWAttr::getDefaultLearningRate() const { return d(getLr()); }
double AdamWAttr::getFirstStepSensitivity(double grad, double margin) const {
  return normalizedStepSensitivity(grad, margin, d(getEps()));
}
SmallVector<Value> AdamWAttr::buildUpdate(OpBuilder &b, Location loc, Value g,
                                          Value p, ValueRange state, Value lr,
                                          Value firstStep, Value t,
                                          bool decay) const {
  Scalar s{b, loc};
  // Decoupled decay first, as torch.optim.AdamW.
  if (decay && !getWeightDecay().isZero())
    p = s.mul(p, s.sub(s.c(1.0), s.mul(lr, s.c(d(getWeightDecay())))));
  return adamUpdate(s, g, p, state, lr, firstStep, t, d(getBeta1()),
                    d(getBeta2()), d(getEps()));
}

//===----------------------------------------------------------------------===//
// Lion
//===----------------------------------------------------------------------===//

LogicalResult LionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               APFloat lr, APFloat beta1, APFloat beta2,
                               APFloat weightDecay) {
  if (failed(verifyFiniteF32(emitError, "#gacc.lion",
                             {{"lr", lr}, {"weight_decay", weightDecay}})))
    return failure();
  if (!(d(lr) >= 0.0))
    return emitError() << "#gacc.lion needs lr >= 0, got " << d(lr);
  if (failed(verifyRangeInF32(emitError, "#gacc.lion", "beta1", beta1, 0, 1,
                              Interval::ClosedOpen)) ||
      failed(verifyRangeInF32(emitError, "#gacc.lion", "beta2", beta2, 0, 1,
                              Interval::ClosedOpen)))
    return failure();
  if (!(d(weightDecay) >= 0.0))
    return emitError() << "#gacc.lion needs weight_decay >= 0, got "
                       << d(weightDecay);
  return success();
}
unsigned LionAttr::getNumStateTensors() const { return 1; }
double LionAttr::getDefaultLearningRate() const { return d(getLr()); }
double LionAttr::getFirstStepSensitivity(double grad, double margin) const {
  return std::fabs(grad) <= margin ? 2.0 : 0.0;
}
SmallVector<Value> LionAttr::buildUpdate(OpBuilder &b, Location loc, Value g,
                                         Value p, ValueRange state, Value lr,
                                         Value firstStep, Value,
                                         bool decay) const {
  Scalar s{b, loc};
  Value m0 = s.sel(firstStep, s.c(0.0), state[0]);
  double b1 = d(getBeta1()), b2 = d(getBeta2());
  Value c = s.add(s.mul(s.c(b1), m0), s.mul(s.c(1.0 - b1), g));
  // sign(c): +1, −1 or 0.
  Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, c,
                                    s.c(0.0));
  Value neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, c,
                                    s.c(0.0));
  Value sign = s.sel(pos, s.c(1.0), s.sel(neg, s.c(-1.0), s.c(0.0)));
  if (decay && !getWeightDecay().isZero())
    p = s.mul(p, s.sub(s.c(1.0), s.mul(lr, s.c(d(getWeightDecay())))));
  Value newP = s.sub(p, s.mul(lr, sign));
  Value m = s.add(s.mul(s.c(b2), m0), s.mul(s.c(1.0 - b2), g));
  return {newP, m};
}

//===----------------------------------------------------------------------===//
// Learning-rate schedule
//===----------------------------------------------------------------------===//

LogicalResult
LRScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t warmupSteps, StringRef decay,
                       int64_t decaySteps, APFloat minLr) {
  if (warmupSteps < 0)
    return emitError() << "#gacc.lr_schedule needs warmup_steps >= 0";
  if (decay != "constant" && decay != "cosine" && decay != "linear")
    return emitError() << "#gacc.lr_schedule decay must be \"constant\", "
                          "\"cosine\" or \"linear\", got \""
                       << decay << "\"";
  if (decay != "constant" && decaySteps <= 0)
    return emitError() << "#gacc.lr_schedule with decay \"" << decay
                       << "\" needs decay_steps > 0";
  if (decay == "constant" && (decaySteps != 0 || !minLr.isZero()))
    return emitError() << "#gacc.lr_schedule: decay_steps and min_lr need "
                          "decay = \"cosine\" or \"linear\"";
  if (!(d(minLr) >= 0.0) || !isFiniteF32(d(minLr)))
    return emitError() << "#gacc.lr_schedule needs a finite min_lr >= 0";
  return success();
}

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

LogicalResult
LossScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        APFloat initScale, APFloat growth, APFloat backoff,
                        int64_t interval) {
  if (failed(verifyFiniteF32(
          emitError, "#gacc.loss_scaling",
          {{"init_scale", initScale}, {"growth_factor", growth}})))
    return failure();
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (failed(verifyRangeInF32(emitError, "#gacc.loss_scaling", "init_scale",
                              initScale, 0, inf, Interval::Open)) ||
      failed(verifyRangeInF32(emitError, "#gacc.loss_scaling", "growth_factor",
                              growth, 1, inf, Interval::Open)) ||
      failed(verifyRangeInF32(emitError, "#gacc.loss_scaling", "backoff_factor",
                              backoff, 0, 1, Interval::Open)))
    return failure();
  if (interval <= 0)
    return emitError() << "#gacc.loss_scaling needs growth_interval > 0, got "
                       << interval;
  return success();
}
