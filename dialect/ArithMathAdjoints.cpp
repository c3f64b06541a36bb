//===- ArithMathAdjoints.cpp - derivatives of the scalar arith/math ops ---===//
//
// The one definition of the derivative of each scalar floating-point arith
// and math op (ScalarAdjointOpInterface, attached as external models), and
// the DifferentiableOpInterface of the same ops applied elementwise to
// tensors, which reuses those rules through the structured-op adjoint of an
// equivalent elementwise linalg.generic. Formulas (ties and zeros
// included) are PyTorch's, tools/autograd/derivatives.yaml.
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/StructuredAdjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Scalar arithmetic at one location, in the type of the op's result.
struct ScalarMath {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
};

using Adjoints = SmallVector<Value, 3>;

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

Adjoints rule(arith::AddFOp, ScalarMath &, Value dy) { return {dy, dy}; }

Adjoints rule(arith::SubFOp, ScalarMath &s, Value dy) {
  return {dy, s.neg(dy)};
}

Adjoints rule(arith::MulFOp op, ScalarMath &s, Value dy) {
  return {s.mul(dy, op.getRhs()), s.mul(dy, op.getLhs())};
}

/// torch: self: grad / other; other: -grad * self / (other * other).
Adjoints rule(arith::DivFOp op, ScalarMath &s, Value dy) {
  Value a = op.getLhs(), b = op.getRhs();
  return {s.div(dy, b), s.div(s.mul(s.neg(dy), a), s.mul(b, b))};
}

Adjoints rule(arith::NegFOp, ScalarMath &s, Value dy) { return {s.neg(dy)}; }

/// torch.maximum (torch.minimum): equal operands take dy / 2 each, the
/// smaller (larger) one nothing, and otherwise, a NaN included, dy.
Adjoints maxMinRule(Value a, Value b, bool isMax, ScalarMath &s, Value dy) {
  auto loses = isMax ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT;
  Value zero = s.c(0.0);
  Value shared = s.select(s.cmp(arith::CmpFPredicate::OEQ, a, b),
                          s.mul(dy, s.c(0.5)), dy);
  return {s.select(s.cmp(loses, a, b), zero, shared),
          s.select(s.cmp(loses, b, a), zero, shared)};
}
Adjoints rule(arith::MaximumFOp op, ScalarMath &s, Value dy) {
  return maxMinRule(op.getLhs(), op.getRhs(), true, s, dy);
}
Adjoints rule(arith::MinimumFOp op, ScalarMath &s, Value dy) {
  return maxMinRule(op.getLhs(), op.getRhs(), false, s, dy);
}

/// torch.fmax (torch.fmin): the left operand takes dy where it is at least
/// (at most) the right one or the right one is NaN, the right one
/// elsewhere; ties go to the left.
Adjoints numRule(Value a, Value b, bool isMax, ScalarMath &s, Value dy) {
  auto keeps = isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
  Value left = arith::OrIOp::create(
      s.b, s.loc, s.cmp(keeps, a, b),
      s.cmp(arith::CmpFPredicate::UNO, b, b));
  Value zero = s.c(0.0);
  return {s.select(left, dy, zero), s.select(left, zero, dy)};
}
Adjoints rule(arith::MaxNumFOp op, ScalarMath &s, Value dy) {
  return numRule(op.getLhs(), op.getRhs(), true, s, dy);
}
Adjoints rule(arith::MinNumFOp op, ScalarMath &s, Value dy) {
  return numRule(op.getLhs(), op.getRhs(), false, s, dy);
}

/// The condition is not differentiable; each branch takes dy where chosen.
Adjoints rule(arith::SelectOp op, ScalarMath &s, Value dy) {
  Value zero = s.c(0.0);
  return {Value(), s.select(op.getCondition(), dy, zero),
          s.select(op.getCondition(), zero, dy)};
}

/// A precision change: the adjoint changes precision the other way.
Adjoints rule(arith::ExtFOp op, ScalarMath &s, Value dy) {
  return {arith::TruncFOp::create(s.b, s.loc, op.getIn().getType(), dy)};
}
Adjoints rule(arith::TruncFOp op, ScalarMath &s, Value dy) {
  return {arith::ExtFOp::create(s.b, s.loc, op.getIn().getType(), dy)};
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

Adjoints rule(math::ExpOp op, ScalarMath &s, Value dy) {
  return {s.mul(dy, op.getResult())};
}
Adjoints rule(math::Exp2Op op, ScalarMath &s, Value dy) {
  return {s.mul(dy, s.mul(op.getResult(), s.c(M_LN2)))};
}
/// torch: grad * (result + 1).
Adjoints rule(math::ExpM1Op op, ScalarMath &s, Value dy) {
  return {s.mul(dy, s.add(op.getResult(), s.c(1.0)))};
}
Adjoints rule(math::LogOp op, ScalarMath &s, Value dy) {
  return {s.div(dy, op.getOperand())};
}
Adjoints rule(math::Log2Op op, ScalarMath &s, Value dy) {
  return {s.div(dy, s.mul(op.getOperand(), s.c(M_LN2)))};
}
Adjoints rule(math::Log10Op op, ScalarMath &s, Value dy) {
  return {s.div(dy, s.mul(op.getOperand(), s.c(M_LN10)))};
}
Adjoints rule(math::Log1pOp op, ScalarMath &s, Value dy) {
  return {s.div(dy, s.add(op.getOperand(), s.c(1.0)))};
}
/// torch tanh_backward: grad * (1 - y²).
Adjoints rule(math::TanhOp op, ScalarMath &s, Value dy) {
  Value y = op.getResult();
  return {s.mul(dy, s.sub(s.c(1.0), s.mul(y, y)))};
}
/// torch: grad / (2 * result).
Adjoints rule(math::SqrtOp op, ScalarMath &s, Value dy) {
  return {s.div(dy, s.mul(s.c(2.0), op.getResult()))};
}
/// torch: -0.5 * grad * result³.
Adjoints rule(math::RsqrtOp op, ScalarMath &s, Value dy) {
  Value y = op.getResult();
  return {s.mul(s.mul(s.c(-0.5), dy), s.mul(y, s.mul(y, y)))};
}
/// 2/√π · exp(−x²).
Adjoints rule(math::ErfOp op, ScalarMath &s, Value dy) {
  Value x = op.getOperand();
  Value e = math::ExpOp::create(s.b, s.loc, s.neg(s.mul(x, x)));
  return {s.mul(dy, s.mul(s.c(M_2_SQRTPI), e))};
}
Adjoints rule(math::ErfcOp op, ScalarMath &s, Value dy) {
  Value x = op.getOperand();
  Value e = math::ExpOp::create(s.b, s.loc, s.neg(s.mul(x, x)));
  return {s.mul(dy, s.mul(s.c(-M_2_SQRTPI), e))};
}
/// torch pow_backward_self: 0 where the exponent is 0, else
/// grad · e · x^(e − 1); pow_backward_exponent: 0 where x = 0 and e ≥ 0,
/// else grad · result · log(x).
Adjoints rule(math::PowFOp op, ScalarMath &s, Value dy) {
  Value x = op.getLhs(), e = op.getRhs(), zero = s.c(0.0);
  Value xPow = math::PowFOp::create(s.b, s.loc, x, s.sub(e, s.c(1.0)));
  Value dx = s.select(s.cmp(arith::CmpFPredicate::OEQ, e, zero), zero,
                      s.mul(dy, s.mul(e, xPow)));
  Value log = math::LogOp::create(s.b, s.loc, x);
  Value atZero =
      arith::AndIOp::create(s.b, s.loc,
                            s.cmp(arith::CmpFPredicate::OEQ, x, zero),
                            s.cmp(arith::CmpFPredicate::OGE, e, zero));
  Value de = s.select(atZero, zero, s.mul(dy, s.mul(op.getResult(), log)));
  return {dx, de};
}
/// x^n with an integer n (torch pow_backward): 0 where n = 0, else
/// grad · n · x^(n − 1); n is not differentiable.
Adjoints rule(math::FPowIOp op, ScalarMath &s, Value dy) {
  Value n = op.getRhs();
  auto intConst = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(s.b, s.loc,
                                     s.b.getIntegerAttr(n.getType(), v));
  };
  Value nm1 = arith::SubIOp::create(s.b, s.loc, n, intConst(1));
  Value pow = math::FPowIOp::create(s.b, s.loc, op.getLhs(), nm1);
  Value nf = arith::SIToFPOp::create(s.b, s.loc, s.type, n);
  Value isZero =
      arith::CmpIOp::create(s.b, s.loc, arith::CmpIPredicate::eq, n, intConst(0));
  return {s.select(isZero, s.c(0.0), s.mul(dy, s.mul(nf, pow))), Value()};
}
/// torch: grad · sgn(x), sgn(0) = 0.
Adjoints rule(math::AbsFOp op, ScalarMath &s, Value dy) {
  Value x = op.getOperand(), zero = s.c(0.0);
  Value sign =
      s.select(s.cmp(arith::CmpFPredicate::OGT, x, zero), s.c(1.0),
               s.select(s.cmp(arith::CmpFPredicate::OLT, x, zero), s.c(-1.0),
                        zero));
  return {s.mul(dy, sign)};
}
Adjoints rule(math::SinOp op, ScalarMath &s, Value dy) {
  return {s.mul(dy, math::CosOp::create(s.b, s.loc, op.getOperand()))};
}
Adjoints rule(math::CosOp op, ScalarMath &s, Value dy) {
  return {s.neg(s.mul(dy, math::SinOp::create(s.b, s.loc, op.getOperand())))};
}
/// torch: grad · (1 + result²).
Adjoints rule(math::TanOp op, ScalarMath &s, Value dy) {
  Value y = op.getResult();
  return {s.mul(dy, s.add(s.c(1.0), s.mul(y, y)))};
}
Adjoints rule(math::AtanOp op, ScalarMath &s, Value dy) {
  Value x = op.getOperand();
  return {s.div(dy, s.add(s.c(1.0), s.mul(x, x)))};
}
Adjoints rule(math::SinhOp op, ScalarMath &s, Value dy) {
  return {s.mul(dy, math::CoshOp::create(s.b, s.loc, op.getOperand()))};
}
Adjoints rule(math::CoshOp op, ScalarMath &s, Value dy) {
  return {s.mul(dy, math::SinhOp::create(s.b, s.loc, op.getOperand()))};
}
/// grad / (3 · result²).
Adjoints rule(math::CbrtOp op, ScalarMath &s, Value dy) {
  Value y = op.getResult();
  return {s.div(dy, s.mul(s.c(3.0), s.mul(y, y)))};
}
Adjoints rule(math::FmaOp op, ScalarMath &s, Value dy) {
  return {s.mul(dy, op.getB()), s.mul(dy, op.getA()), dy};
}
/// Piecewise constant: zero almost everywhere (torch returns zeros).
template <typename OpTy>
Adjoints zeroRule(OpTy, ScalarMath &s, Value) {
  return {s.c(0.0)};
}
Adjoints rule(math::FloorOp op, ScalarMath &s, Value dy) {
  return zeroRule(op, s, dy);
}
Adjoints rule(math::CeilOp op, ScalarMath &s, Value dy) {
  return zeroRule(op, s, dy);
}
Adjoints rule(math::RoundOp op, ScalarMath &s, Value dy) {
  return zeroRule(op, s, dy);
}
Adjoints rule(math::RoundEvenOp op, ScalarMath &s, Value dy) {
  return zeroRule(op, s, dy);
}
Adjoints rule(math::TruncOp op, ScalarMath &s, Value dy) {
  return zeroRule(op, s, dy);
}

//===----------------------------------------------------------------------===//
// The external models
//===----------------------------------------------------------------------===//

/// The scalar rule of OpTy.
template <typename OpTy>
struct ScalarAdjointModel
    : public ScalarAdjointOpInterface::ExternalModel<ScalarAdjointModel<OpTy>,
                                                     OpTy> {
  void buildScalarAdjoints(Operation *op, OpBuilder &b, Value dy,
                           SmallVectorImpl<Value> &operandAdjoints) const {
    ScalarMath s{b, op->getLoc(), op->getResult(0).getType()};
    Adjoints adj = rule(cast<OpTy>(op), s, dy);
    operandAdjoints.assign(adj.begin(), adj.end());
    operandAdjoints.resize(op->getNumOperands());
  }
};

/// OpTy applied elementwise to tensors: the adjoint of the equivalent
/// elementwise linalg.generic, whose body the scalar rule differentiates.
template <typename OpTy>
struct ElementwiseAdjointModel
    : public DifferentiableOpInterface::ExternalModel<
          ElementwiseAdjointModel<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *op, OpBuilder &b,
                             ValueRange resultAdjoints, ArrayRef<bool> needed,
                             SmallVectorImpl<Value> &operandAdjoints) const {
    return buildElementwiseAdjoints(b, op, resultAdjoints, needed,
                                    operandAdjoints);
  }
};

template <typename... OpTys>
void attachAll(MLIRContext *ctx) {
  (OpTys::template attachInterface<ScalarAdjointModel<OpTys>,
                                   ElementwiseAdjointModel<OpTys>>(*ctx),
   ...);
}

} // namespace

void mlir::gacc::registerArithMathAdjointModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachAll<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
              arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
              arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp,
              arith::ExtFOp, arith::TruncFOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachAll<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
              math::Log2Op, math::Log10Op, math::Log1pOp, math::TanhOp,
              math::SqrtOp, math::RsqrtOp, math::ErfOp, math::ErfcOp,
              math::PowFOp, math::FPowIOp, math::AbsFOp, math::SinOp,
              math::CosOp, math::TanOp, math::AtanOp, math::SinhOp,
              math::CoshOp, math::CbrtOp, math::FmaOp, math::FloorOp,
              math::CeilOp, math::RoundOp, math::RoundEvenOp,
              math::TruncOp>(ctx);
  });
}
