//===- StructuredAdjoints.cpp - adjoints of structured ops ----------------===//
//
// The general reverse-mode rule of a structured op (see
// StructuredAdjoints.h): for each needed operand, one linalg.generic over the
// op's iteration space that recomputes the op's body and differentiates it
// with the scalar rules of ScalarAdjointOpInterface; elementwise arith/math
// ops on tensors go through an equivalent elementwise linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "dialect/StructuredAdjoints.h"
#include "dialect/GAccDialect.h"
#include "dialect/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// How an output of a structured op is produced.
enum class Combiner { Assign, Sum, Max, Min };

struct OutputForm {
  Combiner kind = Combiner::Assign;
  /// For a reduction: the op combining the init with the term, and the
  /// term (a value of the body).
  Operation *combine = nullptr;
  Value term;
};

/// An op, its outputs' forms and the adjoints of its results.
struct Primal {
  linalg::LinalgOp op;
  SmallVector<OutputForm> forms;
  SmallVector<Value> resultAdjoints; // null: zero
  SmallVector<Value> tieCounts;      // per output, for Max/Min
  bool hasReductions = false;
};

/// Classifies the outputs: every output of an op without reduction
/// dimensions is assigned; with reductions, each must combine its init,
/// read nowhere else, with a term by addf, maximumf/maxnumf or
/// minimumf/minnumf.
LogicalResult classifyOutputs(Primal &p) {
  linalg::LinalgOp op = p.op;
  p.forms.assign(op.getNumDpsInits(), OutputForm());
  p.hasReductions = op.getNumReductionLoops() > 0;
  if (!p.hasReductions)
    return success();
  Block *body = op.getBlock();
  Operation *yield = body->getTerminator();
  for (auto [j, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    Value y = yield->getOperand(j);
    Operation *def = y.getDefiningOp();
    Combiner kind = Combiner::Assign;
    if (def && def->getBlock() == body && y.hasOneUse() && acc.hasOneUse()) {
      if (isa<arith::AddFOp>(def))
        kind = Combiner::Sum;
      else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
        kind = Combiner::Max;
      else if (isa<arith::MinimumFOp, arith::MinNumFOp>(def))
        kind = Combiner::Min;
    }
    Value term;
    if (kind != Combiner::Assign)
      term = def->getOperand(0) == acc   ? def->getOperand(1)
             : def->getOperand(1) == acc ? def->getOperand(0)
                                         : Value();
    if (!term)
      return op->emitOpError("cannot be differentiated: output #")
             << j
             << " of an op with reduction dimensions must combine its init, "
                "read nowhere else, with a term by arith.addf, maximumf or "
                "minimumf (a sum, maximum or minimum)";
    p.forms[j] = {kind, def, term};
  }
  return success();
}

SmallVector<utils::IteratorType> iteratorsFor(unsigned numLoops,
                                              AffineMap outputMap) {
  SmallVector<utils::IteratorType> its(numLoops,
                                       utils::IteratorType::reduction);
  for (AffineExpr e : outputMap.getResults())
    its[cast<AffineDimExpr>(e).getPosition()] = utils::IteratorType::parallel;
  return its;
}

/// Inputs of an adjoint generic: the operands the recomputed body reads
/// (with their block arguments in the primal body), then extra values.
struct AdjointInputs {
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  SmallVector<Value> primalArgs; // null for the extra values

  unsigned add(Value v, AffineMap m, Value primalArg = Value()) {
    values.push_back(v);
    maps.push_back(m);
    primalArgs.push_back(primalArg);
    return values.size() - 1;
  }
};

/// Every DPS input of `op`, and every init whose value an assigned output's
/// body reads.
AdjointInputs primalInputs(const Primal &p) {
  AdjointInputs in;
  linalg::LinalgOp op = p.op;
  for (OpOperand *operand : op.getDpsInputOperands())
    in.add(operand->get(), op.getMatchingIndexingMap(operand),
           op.getMatchingBlockArgument(operand));
  for (auto [j, init] : llvm::enumerate(op.getDpsInitsMutable()))
    if (p.forms[j].kind == Combiner::Assign &&
        op.payloadUsesValueFromOperand(&init))
      in.add(init.get(), op.getMatchingIndexingMap(&init),
             op.getMatchingBlockArgument(&init));
  return in;
}

/// Clones the primal body (all but the yield and the reductions' combining
/// ops) at `b`; `mapping` holds the block arguments' replacements.
SmallVector<Operation *> cloneBody(OpBuilder &b, const Primal &p,
                                   IRMapping &mapping) {
  llvm::SmallPtrSet<Operation *, 4> skip;
  for (const OutputForm &f : p.forms)
    if (f.combine)
      skip.insert(f.combine);
  SmallVector<Operation *> clones;
  linalg::LinalgOp primal = p.op;
  for (Operation &op : primal.getBlock()->without_terminator())
    if (!skip.contains(&op))
      clones.push_back(b.clone(op, mapping));
  return clones;
}

/// Removes the dead ops of a freshly built body, then the inputs it does
/// not read. Returns the (possibly rebuilt) op.
linalg::GenericOp tidy(OpBuilder &b, linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  unsigned numInputs = g.getNumDpsInputs();
  llvm::BitVector unused(body.getNumArguments());
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  SmallVector<AffineMap> all = g.getIndexingMapsArray();
  for (unsigned i = 0; i < body.getNumArguments(); ++i) {
    if (i < numInputs && body.getArgument(i).use_empty()) {
      unused.set(i);
      continue;
    }
    if (i < numInputs)
      ins.push_back(g.getDpsInputs()[i]);
    maps.push_back(all[i]);
  }
  if (unused.none())
    return g;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(g);
  auto ng = linalg::GenericOp::create(b, g.getLoc(), g->getResultTypes(), ins,
                                      g.getDpsInits(), maps,
                                      g.getIteratorTypesArray());
  ng.getRegion().takeBody(g.getRegion());
  ng.getRegion().front().eraseArguments(unused);
  g.erase();
  return ng;
}

/// The input itself when `g` only copies it to an output of the same type
/// and indexing (the adjoint of a reshape-free assignment).
Value identityInput(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumReductionLoops() != 0)
    return Value();
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  Value in = g.getDpsInputs()[0];
  if (&body.front() != yield.getOperation() ||
      yield.getOperand(0) != body.getArgument(0) || maps[0] != maps[1] ||
      in.getType() != g->getResult(0).getType())
    return Value();
  return in;
}

/// The adjoint of `operand` (a DPS input, or an init whose value an assigned
/// output reads): a linalg.generic whose output, indexed by the operand's
/// map, accumulates in `accType`. Sets `contraction` when the result is a
/// contraction.
FailureOr<Value> buildGeneralAdjoint(OpBuilder &b, const Primal &p,
                                     OpOperand &operand, Type accType,
                                     bool &contraction) {
  linalg::LinalgOp op = p.op;
  Location loc = op.getLoc();
  AffineMap targetMap = op.getMatchingIndexingMap(&operand);
  if (!targetMap.isProjectedPermutation(/*allowZeroInResults=*/false))
    return op->emitOpError("cannot be differentiated with respect to "
                           "operand #")
           << operand.getOperandNumber() << ": its indexing map "
           << AffineMapAttr::get(targetMap)
           << " is not a projected permutation";
  auto targetType = cast<RankedTensorType>(operand.get().getType());
  Type elemType = targetType.getElementType();
  Value targetArg = op.getMatchingBlockArgument(&operand);

  AdjointInputs in = primalInputs(p);
  // The result adjoints (and, for a maximum or minimum, the result and its
  // tie count), indexed like the outputs.
  struct Seed {
    unsigned output, dy;
    int result = -1, count = -1;
  };
  SmallVector<Seed> seeds;
  for (auto [j, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    if (!p.resultAdjoints[j])
      continue;
    AffineMap m = op.getMatchingIndexingMap(&init);
    Seed s{unsigned(j), in.add(p.resultAdjoints[j], m)};
    if (p.forms[j].kind == Combiner::Max || p.forms[j].kind == Combiner::Min) {
      s.result = in.add(op->getResult(j), m);
      s.count = in.add(p.tieCounts[j], m);
    }
    seeds.push_back(s);
  }

  SmallVector<utils::IteratorType> iterators =
      iteratorsFor(op.getNumLoops(), targetMap);
  bool reduces = llvm::is_contained(iterators, utils::IteratorType::reduction);
  auto accTensor = RankedTensorType::get(targetType.getShape(), accType);
  Value init = reduces ? buildFilled(b, loc, accTensor, 0.0)
                       : tensor::EmptyOp::create(b, loc, accTensor.getShape(),
                                                 accType)
                             .getResult();
  SmallVector<AffineMap> maps(in.maps);
  maps.push_back(targetMap);
  Operation *notDifferentiable = nullptr;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{accTensor}, in.values, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping mapping;
        for (auto [arg, primal] : llvm::zip(args, in.primalArgs))
          if (primal)
            mapping.map(primal, arg);
        SmallVector<Operation *> clones = cloneBody(nb, p, mapping);
        Value target = mapping.lookup(targetArg);
        // Only values that depend on the target carry its adjoint.
        llvm::DenseSet<Value> active = {target};
        for (Operation *c : clones)
          if (llvm::any_of(c->getOperands(),
                           [&](Value v) { return active.contains(v); }))
            active.insert(c->result_begin(), c->result_end());
        llvm::DenseMap<Value, Value> adj;
        auto addAdjoint = [&](Value v, Value a) {
          if (!active.contains(v))
            return;
          auto [it, inserted] = adj.try_emplace(v, a);
          if (!inserted)
            it->second = arith::AddFOp::create(nb, nl, it->second, a);
        };
        Operation *yield = op.getBlock()->getTerminator();
        for (const Seed &s : seeds) {
          const OutputForm &f = p.forms[s.output];
          Value dy = args[s.dy];
          if (f.kind == Combiner::Assign) {
            addAdjoint(mapping.lookupOrDefault(yield->getOperand(s.output)),
                       dy);
            continue;
          }
          Value term = mapping.lookupOrDefault(f.term);
          if (f.kind == Combiner::Sum) {
            addAdjoint(term, dy);
            continue;
          }
          // A maximum or minimum: the terms equal to the result share dy.
          Value hit = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            term, args[s.result]);
          Value share = arith::DivFOp::create(nb, nl, dy, args[s.count]);
          Value zero = arith::ConstantOp::create(
              nb, nl, nb.getFloatAttr(dy.getType(), 0.0));
          addAdjoint(term, arith::SelectOp::create(nb, nl, hit, share, zero));
        }
        for (Operation *c : llvm::reverse(clones)) {
          if (c->getNumResults() != 1 || !adj.count(c->getResult(0)))
            continue;
          auto rule = dyn_cast<ScalarAdjointOpInterface>(c);
          if (!rule || !isa<FloatType>(c->getResult(0).getType())) {
            notDifferentiable = c;
            break;
          }
          SmallVector<Value> operandAdjoints;
          rule.buildScalarAdjoints(nb, adj.lookup(c->getResult(0)),
                                   operandAdjoints);
          for (auto [v, a] : llvm::zip(c->getOperands(), operandAdjoints))
            if (a)
              addAdjoint(v, a);
        }
        Value a = adj.lookup(target);
        if (!a)
          a = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elemType, 0.0));
        if (reduces) {
          if (accType != elemType)
            a = arith::ExtFOp::create(nb, nl, accType, a);
          a = arith::AddFOp::create(nb, nl, args.back(), a);
        }
        linalg::YieldOp::create(nb, nl, a);
      });
  if (notDifferentiable) {
    std::string name = notDifferentiable->getName().getStringRef().str();
    generic.erase();
    return op->emitOpError("cannot be differentiated: its body applies '")
           << name
           << "', which has no scalar adjoint rule (ScalarAdjointOpInterface: "
              "arith and math floating-point ops), on the path from operand #"
           << operand.getOperandNumber();
  }
  generic = tidy(b, generic);
  if (Value v = identityInput(generic)) {
    generic.erase();
    return v;
  }
  contraction = reduces && linalg::isaContractionOpInterface(generic);
  return generic->getResult(0);
}

/// Σ over the reduced points of [term == result], plus [init == result]:
/// how many candidates share a maximum's (minimum's) adjoint.
Value buildTieCount(OpBuilder &b, const Primal &p, unsigned j) {
  linalg::LinalgOp op = p.op;
  Location loc = op.getLoc();
  OpOperand &initOperand = op.getDpsInitsMutable()[j];
  Value result = op->getResult(j);
  auto type = cast<RankedTensorType>(result.getType());
  Type elem = type.getElementType();
  // [init == result], the count's initial value.
  Value initHits = buildElementwise(
      b, loc, ValueRange{initOperand.get(), result}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value eq =
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[0], a[1]);
        return arith::SelectOp::create(
            nb, nl, eq, arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elem, 1)),
            arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elem, 0)));
      });
  AdjointInputs in = primalInputs(p);
  AffineMap outMap = op.getMatchingIndexingMap(&initOperand);
  unsigned resultIdx = in.add(result, outMap);
  SmallVector<AffineMap> maps(in.maps);
  maps.push_back(outMap);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, in.values, ValueRange{initHits}, maps,
      iteratorsFor(op.getNumLoops(), outMap),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping mapping;
        for (auto [arg, primal] : llvm::zip(args, in.primalArgs))
          if (primal)
            mapping.map(primal, arg);
        cloneBody(nb, p, mapping);
        Value term = mapping.lookupOrDefault(p.forms[j].term);
        Value eq = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                         term, args[resultIdx]);
        Value one = arith::SelectOp::create(
            nb, nl, eq, arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elem, 1)),
            arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elem, 0)));
        linalg::YieldOp::create(
            nb, nl, Value(arith::AddFOp::create(nb, nl, args.back(), one)));
      });
  return tidy(b, generic)->getResult(0);
}

/// The adjoint of the init of reduction output j: the result's adjoint for
/// a sum; for a maximum or minimum, its share where the init is the result.
Value buildReductionInitAdjoint(OpBuilder &b, const Primal &p, unsigned j) {
  Value dy = p.resultAdjoints[j];
  if (p.forms[j].kind == Combiner::Sum)
    return dy;
  linalg::LinalgOp op = p.op;
  Value init = op.getDpsInits()[j], result = op->getResult(j);
  auto type = cast<RankedTensorType>(result.getType());
  return buildElementwise(
      b, op.getLoc(), ValueRange{init, result, dy, p.tieCounts[j]}, type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value eq =
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[0], a[1]);
        Value share = arith::DivFOp::create(nb, nl, a[2], a[3]);
        Value zero = arith::ConstantOp::create(
            nb, nl, nb.getFloatAttr(type.getElementType(), 0.0));
        return arith::SelectOp::create(nb, nl, eq, share, zero);
      });
}

/// The adjoint of one needed operand.
FailureOr<Value> buildOperandAdjoint(OpBuilder &b, const Primal &p,
                                     OpOperand &operand) {
  linalg::LinalgOp op = p.op;
  if (op.isDpsInit(&operand)) {
    unsigned j = operand.getOperandNumber() - op.getNumDpsInputs();
    if (p.forms[j].kind != Combiner::Assign)
      return p.resultAdjoints[j] ? buildReductionInitAdjoint(b, p, j)
                                 : Value();
    // An assigned output that does not read its init overwrites it.
    if (!op.payloadUsesValueFromOperand(&operand))
      return Value();
  }
  Type elemType = getElementTypeOrSelf(operand.get().getType());
  bool contraction = false;
  FailureOr<Value> adj =
      buildGeneralAdjoint(b, p, operand, elemType, contraction);
  if (failed(adj) || !elemType.isF32() || !*adj)
    return adj;
  auto generic = adj->getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumReductionLoops() == 0 || contraction)
    return adj;
  // A sum over reduced dimensions that is not a contraction: accumulated in
  // f64, rounded once.
  generic.erase();
  FailureOr<Value> wide =
      buildGeneralAdjoint(b, p, operand, b.getF64Type(), contraction);
  if (failed(wide))
    return failure();
  return buildConvertElements(b, op.getLoc(), *wide, elemType);
}

} // namespace

LogicalResult mlir::gacc::buildStructuredAdjoints(
    OpBuilder &b, linalg::LinalgOp op, ValueRange resultAdjoints,
    ArrayRef<bool> needed, SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(op->getNumOperands(), Value());
  if (!op.hasPureTensorSemantics())
    return op->emitOpError("is differentiated on tensors only");
  Primal p;
  p.op = op;
  p.resultAdjoints.assign(resultAdjoints.begin(), resultAdjoints.end());
  if (llvm::none_of(needed, [](bool n) { return n; }) ||
      llvm::none_of(p.resultAdjoints, [](Value v) { return bool(v); }))
    return success();
  if (failed(classifyOutputs(p)))
    return failure();
  p.tieCounts.assign(op.getNumDpsInits(), Value());
  for (auto [j, f] : llvm::enumerate(p.forms))
    if ((f.kind == Combiner::Max || f.kind == Combiner::Min) &&
        p.resultAdjoints[j])
      p.tieCounts[j] = buildTieCount(b, p, j);
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    if (!needed[i])
      continue;
    FailureOr<Value> adj = buildOperandAdjoint(b, p, operand);
    if (failed(adj))
      return failure();
    operandAdjoints[i] = *adj;
  }
  return success();
}

LogicalResult mlir::gacc::buildElementwiseAdjoints(
    OpBuilder &b, Operation *op, ValueRange resultAdjoints,
    ArrayRef<bool> needed, SmallVectorImpl<Value> &operandAdjoints) {
  operandAdjoints.assign(op->getNumOperands(), Value());
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (op->getNumResults() != 1 || !type)
    return op->emitOpError("is differentiated elementwise on one ranked "
                           "tensor result only");
  // The equivalent elementwise linalg.generic: tensor operands as inputs,
  // scalar operands (a select's condition) read from the body.
  Location loc = op->getLoc();
  SmallVector<Value> inputs;
  SmallVector<int> inputOf(op->getNumOperands(), -1);
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (isa<RankedTensorType>(v.getType())) {
      inputOf[i] = inputs.size();
      inputs.push_back(v);
    }
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init},
      SmallVector<AffineMap>(inputs.size() + 1, id),
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        // The op itself on the elements: a clone on the block arguments
        // whose result is retyped to the element type.
        IRMapping mapping;
        for (auto [i, v] : llvm::enumerate(op->getOperands()))
          if (inputOf[i] >= 0)
            mapping.map(v, args[inputOf[i]]);
        Operation *scalar = nb.clone(*op, mapping);
        scalar->getResult(0).setType(type.getElementType());
        linalg::YieldOp::create(nb, nl, scalar->getResults());
      });
  SmallVector<bool> genericNeeded(inputs.size() + 1, false);
  for (auto [i, n] : llvm::enumerate(needed))
    if (n && inputOf[i] >= 0)
      genericNeeded[inputOf[i]] = true;
  SmallVector<Value> adjoints;
  LogicalResult result = buildStructuredAdjoints(
      b, cast<linalg::LinalgOp>(generic.getOperation()), resultAdjoints,
      genericNeeded, adjoints);
  generic.erase();
  init.getDefiningOp()->erase();
  if (failed(result))
    return failure();
  for (auto [i, idx] : llvm::enumerate(inputOf))
    if (idx >= 0)
      operandAdjoints[i] = adjoints[idx];
  return success();
}
