//===- Dropout.cpp - gacc.dropout -----------------------------------------===//
//
// gacc.dropout: its verifier, its decomposition (the mask computed per
// element from its position with Philox 4x32-10, LinalgBuilders'
// buildPhilox4x32), its adjoint (the same mask on the result's adjoint) and
// its random key (RandomOpInterface).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gacc;

LogicalResult DropoutOp::verify() {
  // 1 in f32 would scale the kept values by 1 / (1 - p) = inf.
  if (failed(verifyRangeInF32([&] { return emitOpError(); }, "", "p", getP(), 0,
                              1, Interval::ClosedOpen)))
    return failure();
  // I64Attr getters return uint64_t: read the signed value.
  int64_t stream = getStreamAttr().getInt();
  if (stream < 0 || stream > int64_t(UINT32_MAX))
    return emitOpError("stream must be in [0, 2^32), got ") << stream;
  if (!getKey().empty() && getKey().size() != 3)
    return emitOpError("key must be three i64 values (seed, optimizer step, "
                       "first sample), got ")
           << getKey().size();
  if (cast<RankedTensorType>(getInput().getType()).getRank() == 0)
    return emitOpError("needs a leading micro-batch dimension (rank >= 1)");
  return success();
}

namespace {
/// The draws of one element: its position, its sample and the op's key.
struct MaskContext {
  ArrayRef<int64_t> shape;
  Value seed, step, firstSample;
  uint32_t stream, threshold;
};

/// Inside the mask's linalg.generic: true (i1) when the element at the
/// generic's indices is kept, i.e. Philox word e mod 4 of counter
/// (e div 4, firstSample + row, step, stream) under key (seed mod 2³²,
/// seed div 2³²) is at least the threshold.
Value buildKeep(OpBuilder &b, Location loc, const MaskContext &ctx) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  auto c32 = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  };
  auto index = [&](unsigned d) -> Value {
    return arith::IndexCastUIOp::create(b, loc, i64,
                                        linalg::IndexOp::create(b, loc, d));
  };
  auto low = [&](Value v) -> Value {
    return arith::TruncIOp::create(b, loc, i32, v);
  };
  auto shift = [&](Value v, int64_t bits) -> Value {
    return arith::ShRUIOp::create(b, loc, v, c64(bits));
  };
  // (Each value is built in its own statement: the IR's order must not
  // depend on the C++ compiler's order of evaluating arguments.)
  // The element's row-major position within its sample.
  Value e = c64(0);
  for (unsigned d = 1; d < ctx.shape.size(); ++d) {
    Value scaled = arith::MulIOp::create(b, loc, e, c64(ctx.shape[d]));
    e = arith::AddIOp::create(b, loc, scaled, index(d));
  }
  Value row = index(0);
  Value sample = arith::AddIOp::create(b, loc, ctx.firstSample, row);
  std::array<Value, 4> counter = {low(shift(e, 2)), low(sample),
                                  low(ctx.step), c32(ctx.stream)};
  std::array<Value, 2> key = {low(ctx.seed), low(shift(ctx.seed, 32))};
  std::array<Value, 4> words = buildPhilox4x32(b, loc, counter, key);
  Value lane = low(arith::AndIOp::create(b, loc, e, c64(3)));
  Value word = words[3];
  for (int j = 2; j >= 0; --j) {
    Value laneJ = c32(j);
    Value isLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         lane, laneJ);
    word = arith::SelectOp::create(b, loc, isLane, words[j], word);
  }
  Value threshold = c32(ctx.threshold);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, word,
                               threshold);
}
} // namespace

FailureOr<SmallVector<Value>> DropoutOp::decomposeOperation(OpBuilder &b) {
  double p = getP().convertToDouble();
  if (p == 0.0)
    return SmallVector<Value>{getInput()};
  // Unkeyed: nothing to draw from (convert-gacc-to-linalg reports it).
  if (getKey().empty())
    return failure();
  auto type = cast<RankedTensorType>(getType());
  // p < 1, so round(p · 2³²) fits 32 bits but for p within 2⁻³³ of 1.
  MaskContext ctx{type.getShape(),
                  getKey()[0],
                  getKey()[1],
                  getKey()[2],
                  uint32_t(getStreamAttr().getInt()),
                  uint32_t(std::min(std::round(p * 4294967296.0),
                                    4294967295.0))};
  float scale = float(1.0 / (1.0 - p));
  return SmallVector<Value>{buildElementwise(
      b, getLoc(), ValueRange{getInput()}, type,
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value factor =
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(scale));
        Value kept = arith::MulFOp::create(nb, nl, args[0], factor);
        Value zero = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0));
        Value keep = buildKeep(nb, nl, ctx);
        return arith::SelectOp::create(nb, nl, keep, kept, zero);
      })};
}

LogicalResult DropoutOp::buildAdjoint(OpBuilder &b, ValueRange resultAdjoints,
                                      ArrayRef<bool> needed,
                                      SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(getNumOperands(), Value());
  if (!needed[0] || !resultAdjoints[0])
    return success();
  // The same key and stream: the same mask and scale.
  operandAdjoints[0] =
      DropoutOp::create(b, getLoc(), resultAdjoints[0].getType(),
                        resultAdjoints[0], getKey(), getPAttr(),
                        getStreamAttr());
  return success();
}

int64_t DropoutOp::getRandomStream() { return getStreamAttr().getInt(); }

bool DropoutOp::hasRandomKey() { return !getKey().empty(); }

void DropoutOp::setRandomKey(Value seed, Value step, Value firstSample) {
  getKeyMutable().assign(ValueRange{seed, step, firstSample});
}

Value DropoutOp::buildInference(OpBuilder &) { return getInput(); }
