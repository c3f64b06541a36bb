//===- GeluMatchers.cpp - recognising the tanh GELU's payload -------------===//
//
// isTanhGelu and isTanhGeluGrad (LinalgBuilders.h): the scalar expressions
// that buildGelu and buildGeluGrad emit in tanh form, matched op by op
// with the operands of commutative ops in either order, so that a pass can
// hand a generic that computes exactly them to a library.
//
//===----------------------------------------------------------------------===//

#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

using Pred = llvm::function_ref<bool(Value)>;

/// `v` is the fp32 constant `c` (rounded to fp32, as f32Const builds it).
bool isConstant(Value v, double c) {
  APFloat value(0.0f);
  return v.getType().isF32() && matchPattern(v, m_ConstantFloat(&value)) &&
         value.convertToFloat() == static_cast<float>(c);
}

/// `v` is `OpTy(p, q)` with its operands in either order.
template <typename OpTy> bool isCommutative(Value v, Pred p, Pred q) {
  auto op = v.getDefiningOp<OpTy>();
  return op && ((p(op.getLhs()) && q(op.getRhs())) ||
                (p(op.getRhs()) && q(op.getLhs())));
}
bool isProduct(Value v, Pred p, Pred q) {
  return isCommutative<arith::MulFOp>(v, p, q);
}
bool isSum(Value v, Pred p, Pred q) {
  return isCommutative<arith::AddFOp>(v, p, q);
}

/// tanh(√(2/π)·(x + 0.044715·x·(x·x))), the tanh of both builders.
bool isGeluTanh(Value v, Value x) {
  auto tanh = v.getDefiningOp<math::TanhOp>();
  if (!tanh)
    return false;
  auto is = [](Value want) { return [want](Value v) { return v == want; }; };
  auto square = [&](Value v) { return isProduct(v, is(x), is(x)); };
  auto cube = [&](Value v) { return isProduct(v, is(x), square); };
  auto cubic = [&](Value v) {
    return isProduct(v, cube,
                     [](Value c) { return isConstant(c, kGeluCubic); });
  };
  auto inner = [&](Value v) { return isSum(v, is(x), cubic); };
  return isProduct(tanh.getOperand(), inner,
                   [](Value c) { return isConstant(c, kGeluSqrt2OverPi); });
}

auto constant(double c) {
  return [c](Value v) { return isConstant(v, c); };
}

} // namespace

bool mlir::gacc::isTanhGelu(Value y, Value x) {
  // 0.5·x·(1 + t)
  auto halfX = [&](Value v) {
    return isProduct(
        v, [&](Value w) { return w == x; }, constant(0.5));
  };
  auto onePlusTanh = [&](Value v) {
    return isSum(
        v, [&](Value t) { return isGeluTanh(t, x); }, constant(1.0));
  };
  return isProduct(y, halfX, onePlusTanh);
}

bool mlir::gacc::isTanhGeluGrad(Value y, Value x, Value dy) {
  auto isX = [&](Value v) { return v == x; };
  auto isT = [&](Value v) { return isGeluTanh(v, x); };
  // left = 0.5·(1 + t)
  auto left = [&](Value v) {
    return isProduct(
        v, [&](Value w) { return isSum(w, isT, constant(1.0)); },
        constant(0.5));
  };
  // sech² = 1 - t·t
  auto sech2 = [&](Value v) {
    auto sub = v.getDefiningOp<arith::SubFOp>();
    return sub && isConstant(sub.getLhs(), 1.0) &&
           isProduct(sub.getRhs(), isT, isT);
  };
  // dArg = √(2/π)·(1 + 3·0.044715·x·x)
  auto dArg = [&](Value v) {
    auto scaledSquare = [&](Value w) {
      return isProduct(
          w, [&](Value s) { return isProduct(s, isX, isX); },
          constant(3.0 * kGeluCubic));
    };
    return isProduct(
        v, [&](Value w) { return isSum(w, scaledSquare, constant(1.0)); },
        constant(kGeluSqrt2OverPi));
  };
  // right = (0.5·x)·(sech²·dArg)
  auto right = [&](Value v) {
    return isProduct(
        v, [&](Value w) { return isProduct(w, isX, constant(0.5)); },
        [&](Value w) { return isProduct(w, sech2, dArg); });
  };
  return isProduct(
      y, [&](Value v) { return v == dy; },
      [&](Value d) { return isSum(d, left, right); });
}
