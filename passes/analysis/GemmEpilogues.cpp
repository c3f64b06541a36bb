//===- GemmEpilogues.cpp - ops a GEMM's cuBLASLt epilogue runs ------------===//
//
// The matchers of GemmEpilogues.h: the bias add, ReLU, rounding and tanh
// GELU after a product, and the GELU's gradient after one, checked
// payload op by payload op and buffer by buffer.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/GemmEpilogues.h"

#include "dialect/LinalgBuilders.h"
#include "passes/Passes.h"
#include "passes/analysis/KernelOrder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::gacc;

/// The first op after `op` in its block that has memory effects (views,
/// arithmetic and new allocations between are skipped: none touches memory
/// an op before it could), or null.
static Operation *nextEffectingOp(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryEffectFree(next) &&
        !isa<memref::AllocOp, memref::AllocaOp>(next))
      return next;
  return nullptr;
}

/// Whether `v` is `x + y` in either order (arith.addf).
static bool isSum(Value v, Value x, Value y) {
  auto add = v.getDefiningOp<arith::AddFOp>();
  return add && ((add.getLhs() == x && add.getRhs() == y) ||
                 (add.getLhs() == y && add.getRhs() == x));
}

/// The value `x` if `v` is max(x, +0.0) in either order (arith.maximumf,
/// gacc.relu's decomposition), else null.
static Value reluInput(Value v) {
  auto max = v.getDefiningOp<arith::MaximumFOp>();
  if (!max)
    return nullptr;
  if (matchPattern(max.getRhs(), m_PosZeroFloat()))
    return max.getLhs();
  if (matchPattern(max.getLhs(), m_PosZeroFloat()))
    return max.getRhs();
  return nullptr;
}

/// The value `x` if `v` is `arith.truncf x` rounding to nearest, ties to
/// even, as cuBLASLt rounds (`arith.extf x`), else null.
static Value truncated(Value v) {
  auto t = v.getDefiningOp<arith::TruncFOp>();
  if (!t || (t.getRoundingmode() &&
             *t.getRoundingmode() != arith::RoundingMode::to_nearest_even))
    return nullptr;
  return t.getIn();
}
static Value extended(Value v) {
  auto e = v.getDefiningOp<arith::ExtFOp>();
  return e ? e.getIn() : nullptr;
}

/// Whether `y` is what a 16-bit step's linear layer writes of the fp32
/// `sum`: round(sum), or, with `relu`, round(max(extend(round(sum)), +0.0)),
/// the ReLU of the rounded value (cuBLASLt rounds max(sum, 0) once; the two
/// agree, as rounding keeps the order of values and maps no positive value
/// to a negative one).
static bool isRoundedResult(Value y, Value sum, bool &relu) {
  Value r = truncated(y);
  if (!r)
    return false;
  relu = false;
  if (r == sum)
    return true;
  Value x = reluInput(r);
  Value rounded = x ? extended(x) : nullptr;
  relu =
      rounded && rounded.getType() == y.getType() && truncated(rounded) == sum;
  return relu;
}

FailureOr<BiasAdd> mlir::gacc::matchBiasAdd(linalg::MatmulOp matmul,
                                            StringRef &why) {
  Value c = matmul.getDpsInits()[0];
  Type factor =
      cast<MemRefType>(matmul.getDpsInputs()[0].getType()).getElementType();
  bool narrow = !factor.isF32();
  // An fp16 step's loss scaling must see the NaN that an overflow's
  // infinities make, which cuBLASLt's ReLU may turn into 0.
  why = "an fp16 product (its loss scaling looks for non-finite values)";
  if (factor.isF16())
    return failure();
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
  why = "its input is not a bias of the operands' type read by column apart "
        "from C";
  if (!biasType || biasType.getRank() != 1 ||
      biasType.getElementType() != factor ||
      generic.getMatchingIndexingMap(bias) != column || mayAlias(add.bias, c))
    return failure();
  why = "its outputs are not C and a buffer of C's static shape (of the "
        "operands' type)";
  auto shapeOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getShape();
  };
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    if (generic.getMatchingIndexingMap(&init) != identity ||
        shapeOf(init.get()) != shapeOf(c))
      return failure();
    if (init.get() == c && !add.sum)
      add.sum = &init;
    else
      add.result = &init;
  }
  if (!add.sum || ShapedType::isDynamicShape(shapeOf(c)) ||
      (add.result &&
       cast<MemRefType>(add.result->get().getType()).getElementType() !=
           factor) ||
      (narrow && !add.result))
    return failure();
  why = "it does not write C[i, j] + bias[j] to C (and its ReLU or rounding "
        "to its other output)";
  Value biasArg = generic.getMatchingBlockArgument(bias);
  Value added = generic.getMatchingYieldValue(add.sum)->get();
  auto addf = added.getDefiningOp<arith::AddFOp>();
  Value biasValue =
      narrow && addf
          ? (extended(addf.getLhs()) == biasArg ? addf.getLhs() : addf.getRhs())
          : biasArg;
  if (!isSum(added, biasValue, generic.getMatchingBlockArgument(add.sum)) ||
      (narrow && extended(biasValue) != biasArg))
    return failure();
  if (!add.result)
    return add;
  Value y = generic.getMatchingYieldValue(add.result)->get();
  if (narrow) {
    if (!isRoundedResult(y, added, add.relu))
      return failure();
    return add;
  }
  add.relu = reluInput(y) == added;
  add.gelu = !add.relu && isTanhGelu(y, added);
  if (!add.relu && !add.gelu)
    return failure();
  return add;
}

bool mlir::gacc::canWriteResult(linalg::MatmulOp matmul, const BiasAdd &add,
                                linalg::FillOp zeros, StringRef &why) {
  Value c = matmul.getDpsInits()[0];
  why = "the sum is read elsewhere or C does not start from zeros";
  if (!zeros || !c.getDefiningOp<memref::AllocOp>())
    return false;
  for (Operation *user : c.getUsers())
    if (user != matmul && user != add.generic && user != zeros &&
        !isa<memref::DeallocOp>(user))
      return false;
  why = "the generic's second output may share memory with an operand";
  Value y = add.result->get();
  for (Value operand :
       {matmul.getDpsInputs()[0], matmul.getDpsInputs()[1], add.bias, c})
    if (mayAlias(y, operand))
      return false;
  return true;
}
/// The buffer `v` reshapes (through memref.expand_shape and
/// collapse_shape, which keep the order of the elements), or `v`. Not
/// bufferOf: a subview or cast of C is not all of C in C's order.
static Value reshapedBuffer(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (auto e = dyn_cast<memref::ExpandShapeOp>(op))
      v = e.getSrc();
    else if (auto c = dyn_cast<memref::CollapseShapeOp>(op))
      v = c.getSrc();
    else
      break;
  }
  return v;
}

/// Whether `v` is a static fp32 memref of rank 2 or more with the identity
/// layout (offset 0, row-major strides: what a buffer's alloc and its
/// reshapes have) of m·n elements whose innermost size is n: a row-major
/// [m, n] matrix whose row stride is n.
static bool holdsRows(Value v, int64_t m, int64_t n) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getElementType().isF32() && type.getRank() >= 2 &&
         type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getShape().back() == n && type.getNumElements() == m * n;
}

/// Whether `generic` is elementwise on buffers with `inputs` inputs and
/// one output: parallel loops only, identity maps and a pure payload.
static bool isElementwise(linalg::GenericOp generic, unsigned inputs) {
  return generic && generic.hasPureBufferSemantics() &&
         generic.getNumDpsInputs() == inputs && generic.getNumDpsInits() == 1 &&
         generic.getNumLoops() == generic.getNumParallelLoops() &&
         llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }) &&
         llvm::all_of(generic.getBody()->without_terminator(),
                      [](Operation &op) { return isPure(&op); });
}

/// Whether C, the fp32 [m, n] output of `matmul` (m and n set), can be
/// cuBLASLt's auxiliary matrix of a GELU epilogue: a static buffer of the
/// identity layout (holdsRows) whose row stride n is a multiple of 8
/// (cuBLASLt's rule for the auxiliary matrix's leading dimension), A and B
/// fp32.
static bool takesGeluEpilogue(linalg::MatmulOp matmul, int64_t &m, int64_t &n) {
  auto type = cast<MemRefType>(matmul.getDpsInits()[0].getType());
  if (!cast<MemRefType>(matmul.getDpsInputs()[0].getType())
           .getElementType()
           .isF32() ||
      !type.hasStaticShape())
    return false;
  m = type.getShape()[0];
  n = type.getShape()[1];
  return n % 8 == 0 && holdsRows(matmul.getDpsInits()[0], m, n);
}

FailureOr<GeluOfSum> mlir::gacc::matchGeluOfSum(linalg::MatmulOp matmul,
                                                const BiasAdd &add,
                                                linalg::FillOp zeros,
                                                StringRef &why) {
  int64_t m, n;
  Value c = matmul.getDpsInits()[0];
  why = "C is not fp32 rows of a multiple of 8, or zeros do not start it";
  if (!zeros || !takesGeluEpilogue(matmul, m, n))
    return failure();
  GeluOfSum gelu{add.generic, add.gelu ? add.result->get() : nullptr};
  if (!add.gelu) {
    gelu.generic =
        dyn_cast_or_null<linalg::GenericOp>(nextEffectingOp(add.generic));
    why = "the op after the bias add is not an elementwise generic of C";
    if (add.result || !isElementwise(gelu.generic, 1) ||
        reshapedBuffer(gelu.generic.getDpsInputs()[0]) != c)
      return failure();
    why = "it does not compute the tanh GELU of its input";
    OpOperand *in = gelu.generic.getDpsInputOperand(0);
    OpOperand *out = gelu.generic.getDpsInitOperand(0);
    if (!isTanhGelu(gelu.generic.getMatchingYieldValue(out)->get(),
                    gelu.generic.getMatchingBlockArgument(in)))
      return failure();
    gelu.output = out->get();
  }
  why = "the GELU's output is not contiguous rows of C's shape apart from "
        "the operands";
  if (!holdsRows(gelu.output, m, n))
    return failure();
  for (Value operand :
       {matmul.getDpsInputs()[0], matmul.getDpsInputs()[1], add.bias, c})
    if (mayAlias(gelu.output, operand))
      return failure();
  return gelu;
}

FailureOr<GeluGrad> mlir::gacc::matchGeluGrad(linalg::MatmulOp matmul,
                                              linalg::FillOp zeros,
                                              StringRef &why) {
  int64_t m, n;
  Value c = matmul.getDpsInits()[0];
  why = "C is not fp32 rows of a multiple of 8 that zeros start";
  if (!zeros || !c.getDefiningOp<memref::AllocOp>() ||
      !takesGeluEpilogue(matmul, m, n))
    return failure();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(nextEffectingOp(matmul));
  why = "the next op with memory effects is not an elementwise generic of C";
  if (!isElementwise(generic, 2))
    return failure();
  OpOperand *dy = nullptr, *x = nullptr;
  for (OpOperand *input : generic.getDpsInputOperands())
    (reshapedBuffer(input->get()) == c ? dy : x) = input;
  if (!dy || !x)
    return failure();
  GeluGrad grad{generic, x->get(), {}};
  why = "C is read elsewhere";
  for (Operation *user : c.getUsers()) {
    if (user == matmul || user == zeros || user == generic ||
        isa<memref::DeallocOp>(user))
      continue;
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) ||
        !llvm::all_of(user->getUsers(),
                      [&](Operation *u) { return u == generic; }))
      return failure();
    grad.views.push_back(user);
  }
  Value y = generic.getDpsInits()[0];
  why = "the GELU's input or the output is not contiguous rows of C's shape "
        "apart from the operands";
  if (!holdsRows(grad.input, m, n) || !holdsRows(y, m, n) ||
      mayAlias(grad.input, c) || mayAlias(grad.input, y))
    return failure();
  for (Value operand : {matmul.getDpsInputs()[0], matmul.getDpsInputs()[1], c})
    if (mayAlias(y, operand))
      return failure();
  why = "it does not compute dy times the tanh GELU's derivative";
  if (!isTanhGeluGrad(
          generic.getMatchingYieldValue(generic.getDpsInitOperand(0))->get(),
          generic.getMatchingBlockArgument(x),
          generic.getMatchingBlockArgument(dy)))
    return failure();
  return grad;
}
