//===- NarrowStoredValues.cpp - gacc-narrow-stored-values -----------------===//
//
// Gives the values a bf16 or fp16 step rounds the compute type as their
// element type, so that their buffers take half the bytes: a linalg op
// whose body yields arith.extf of a rounded value into an fp32 tensor
// yields the rounded value into a tensor of the compute type instead, and
// each reader extends it back (in its body: linalg ops; as operands of
// the products, which take two narrowed operands). Views, transposes,
// broadcasts, insertions (into a fill or empty of their own) and
// gacc.recompute_inputs pass the narrowed type on. A value is narrowed
// only when every reader takes it so; extending a rounded value is exact,
// so nothing the step computes changes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "gacc-narrow-stored-values"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCNARROWSTOREDVALUESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// Ops that pass their operand 0 on as their result with another shape
/// (or none), whatever its element type.
bool isView(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp, tensor::CastOp>(op);
}

/// linalg ops on tensors whose result holds their input's elements moved
/// (a transpose, a broadcast).
bool isMove(Operation *op) {
  return isa<linalg::TransposeOp, linalg::BroadcastOp>(op) &&
         cast<linalg::LinalgOp>(op).hasPureTensorSemantics();
}

/// The products whose A and B operands may be narrowed together.
bool isProduct(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp, MatmulAccumulateOp>(op);
}

/// The value of `low` that result `index` of `op` yields, where that result
/// is a rounded value: the body yields `arith.extf %t` with %t of type
/// `low`, every element of the result is written (all-parallel loops, a
/// permutation as the init's map) and the body never reads the init.
Value roundedYield(linalg::GenericOp op, unsigned index, FloatType low) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0)
    return {};
  OpOperand *init = op.getDpsInitOperand(index);
  if (!op.getMatchingIndexingMap(init).isPermutation() ||
      !op.getMatchingBlockArgument(init).use_empty())
    return {};
  Value yielded = op.getBlock()->getTerminator()->getOperand(index);
  auto ext = yielded.getDefiningOp<arith::ExtFOp>();
  if (!ext || ext.getIn().getType() != low || !ext.getType().isF32())
    return {};
  return ext.getIn();
}

/// Whether `v` (an fp32 tensor) is a tensor.empty, or a linalg.fill of a
/// constant exact in `low`: an insertion's destination that a tensor of
/// `low` can replace whatever else reads it.
bool isFreeDestination(Value v, FloatType low) {
  if (v.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics())
    return false;
  auto constant = fill.value().getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return value && isExactIn(value.getValue(), low);
}

/// Finds the fp32 tensors of one function that can take the low type and
/// gives it to them. Values that must change together (a view and its
/// source, an insertion and what it inserts into, the A and B of a
/// product) form one group; a group changes when every member is a
/// rounded value or passes one on, and every reader of a member takes the
/// low type.
class Narrowing {
public:
  explicit Narrowing(FloatType low) : low(low) {}

  void run(FunctionOpInterface func) {
    func.walk([&](linalg::GenericOp op) {
      for (OpResult r : op->getResults())
        if (roundedYield(op, r.getResultNumber(), low))
          need(r);
    });
    while (!worklist.empty())
      explore(worklist.pop_back_val());
    IRRewriter rewriter(func.getContext());
    SmallVector<Value> narrowed;
    for (Value v : members)
      if (!forbidden.contains(find(v)))
        narrowed.push_back(v);
    for (Value v : narrowed)
      retype(rewriter, v);
    for (Value v : narrowed)
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses()))
        if (isa<linalg::GenericOp>(use.getOwner()))
          extendArgument(rewriter, cast<linalg::LinalgOp>(use.getOwner()), use);
    for (Operation *product : products)
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(product);
          linalgOp && !forbidden.contains(find(linalgOp.getDpsInputs()[0])))
        for (OpOperand *input : linalgOp.getDpsInputOperands())
          extendArgument(rewriter, linalgOp, *input);
    eraseUnreadDestinations(rewriter);
    count = narrowed.size();
  }

  /// How many values were given the low type.
  size_t size() const { return count; }

private:
  Value find(Value v) {
    Value p = parent.lookup(v);
    if (p == v)
      return v;
    Value root = find(p);
    parent[v] = root;
    return root;
  }
  void unite(Value a, Value b) {
    need(a);
    need(b);
    Value ra = find(a), rb = find(b);
    if (ra == rb)
      return;
    parent[rb] = ra;
    if (forbidden.contains(rb))
      forbidden.insert(ra);
  }
  void forbid(Value v) { forbidden.insert(find(v)); }
  /// Takes `v` into a group of its own, to be explored.
  void need(Value v) {
    if (parent.try_emplace(v, v).second) {
      members.push_back(v);
      worklist.push_back(v);
    }
  }

  /// Joins `v` with what its definition and its readers require.
  void explore(Value v) {
    if (!isa<RankedTensorType>(v.getType()) ||
        !getElementTypeOrSelf(v.getType()).isF32())
      return forbid(v);
    exploreDefinition(v);
    for (OpOperand &use : v.getUses())
      exploreReader(v, use);
  }

  void exploreDefinition(Value v) {
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      return forbid(v); // an argument: its caller's type
    Operation *def = result.getOwner();
    if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
      if (!roundedYield(generic, result.getResultNumber(), low))
        forbid(v);
    } else if (isView(def) || isMove(def)) {
      unite(v, def->getOperand(0));
    } else if (isa<RecomputeInputsOp>(def)) {
      unite(v, def->getOperand(result.getResultNumber()));
    } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
      unite(v, insert.getSource());
      if (!isFreeDestination(insert.getDest(), low))
        unite(v, insert.getDest());
    } else {
      forbid(v);
    }
  }

  void exploreReader(Value v, OpOperand &use) {
    Operation *user = use.getOwner();
    unsigned n = use.getOperandNumber();
    if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      if (!generic.isDpsInput(&use))
        forbid(v);
    } else if ((isView(user) || isMove(user)) && n == 0) {
      unite(v, user->getResult(0));
    } else if (isa<RecomputeInputsOp>(user)) {
      unite(v, user->getResult(n));
    } else if (isa<tensor::InsertSliceOp>(user) && n < 2) {
      unite(v, user->getResult(0));
    } else if (isProduct(user) && n < 2) {
      products.insert(user);
      unite(v, user->getOperand(1 - n));
    } else {
      forbid(v);
    }
  }

  /// A tensor.empty of the low type with the sizes (and encoding) of
  /// `like`.
  Value emptyLike(IRRewriter &rewriter, Location loc, Value like) {
    return tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, like), low,
        cast<RankedTensorType>(like.getType()).getEncoding());
  }

  /// Gives `v` the low type, with what its definition needs for it.
  void retype(IRRewriter &rewriter, Value v) {
    auto result = cast<OpResult>(v);
    Operation *def = result.getOwner();
    rewriter.setInsertionPoint(def);
    Location loc = def->getLoc();
    rewriter.modifyOpInPlace(def, [&] {
      if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
        unsigned index = result.getResultNumber();
        Value rounded = roundedYield(generic, index, low);
        OpOperand *init = generic.getDpsInitOperand(index);
        init->set(emptyLike(rewriter, loc, init->get()));
        generic.getMatchingBlockArgument(init).setType(low);
        Operation *yield = generic.getBlock()->getTerminator();
        Operation *ext = yield->getOperand(index).getDefiningOp();
        yield->setOperand(index, rounded);
        if (ext->use_empty())
          rewriter.eraseOp(ext);
      } else if (isMove(def)) {
        auto move = cast<linalg::LinalgOp>(def);
        OpOperand *init = move.getDpsInitOperand(0);
        init->set(emptyLike(rewriter, loc, init->get()));
        for (BlockArgument arg : move.getBlock()->getArguments())
          arg.setType(low);
      } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
        Value dest = insert.getDest();
        if (isFreeDestination(dest, low)) {
          Value narrowDest = emptyLike(rewriter, loc, dest);
          if (auto fill = dest.getDefiningOp<linalg::FillOp>()) {
            auto value = cast<FloatAttr>(
                fill.value().getDefiningOp<arith::ConstantOp>().getValue());
            Value scalar = arith::ConstantOp::create(
                rewriter, loc, FloatAttr::get(low, value.getValueAsDouble()));
            narrowDest =
                linalg::FillOp::create(rewriter, loc, scalar, narrowDest)
                    .getResult(0);
          }
          insert.getDestMutable().set(narrowDest);
          replacedDestinations.insert(dest.getDefiningOp());
        }
      }
      v.setType(cast<ShapedType>(v.getType()).clone(low));
    });
  }

  /// Erases the fp32 fills, then empties, that only narrowed insertions
  /// read: nothing removes them before bufferization would allocate them.
  void eraseUnreadDestinations(IRRewriter &rewriter) {
    llvm::SetVector<Operation *> empties;
    for (Operation *dest : replacedDestinations) {
      if (!isa<linalg::FillOp>(dest)) {
        empties.insert(dest);
        continue;
      }
      Operation *init = dest->getOperand(1).getDefiningOp();
      if (!dest->use_empty())
        continue;
      rewriter.eraseOp(dest);
      if (init && isa<tensor::EmptyOp>(init))
        empties.insert(init);
    }
    for (Operation *empty : empties)
      if (empty->use_empty())
        rewriter.eraseOp(empty);
  }

  /// Gives the block argument of `operand`, an input of `op` whose
  /// element type became the low type, that type, and extends it to fp32
  /// at the start of the body for the ops that read it.
  void extendArgument(IRRewriter &rewriter, linalg::LinalgOp op,
                      OpOperand &operand) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.getType() == low)
      return;
    Type wide = arg.getType();
    rewriter.modifyOpInPlace(op, [&] { arg.setType(low); });
    if (arg.use_empty())
      return;
    rewriter.setInsertionPointToStart(op.getBlock());
    Value ext = arith::ExtFOp::create(rewriter, op.getLoc(), wide, arg);
    rewriter.replaceAllUsesExcept(arg, ext, ext.getDefiningOp());
  }

  FloatType low;
  llvm::DenseMap<Value, Value> parent;
  llvm::DenseSet<Value> forbidden;
  SmallVector<Value> members, worklist;
  llvm::SetVector<Operation *> products;
  /// The fp32 destinations of narrowed insertions (a fill, an empty).
  llvm::SetVector<Operation *> replacedDestinations;
  size_t count = 0;
};

struct NarrowStoredValuesPass
    : public mlir::gacc::impl::GAccNarrowStoredValuesPassBase<
          NarrowStoredValuesPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](FunctionOpInterface func) {
      auto precision =
          func->getAttrOfType<PrecisionAttr>(kComputePrecisionAttrName);
      if (!precision || precision.getValue() == Precision::fp32)
        return;
      Narrowing narrowing(
          getLowPrecisionType(&getContext(), precision.getValue()));
      narrowing.run(func);
      LLVM_DEBUG(llvm::dbgs()
                 << "gacc-narrow-stored-values: " << narrowing.size()
                 << " values narrowed in @" << func.getName() << "\n");
    });
  }
};

} // namespace
