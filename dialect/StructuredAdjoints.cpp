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

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
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
};

Value floatConstant(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
}

/// 1 where `cond`, else 0, in `type`.
Value indicator(OpBuilder &b, Location loc, Value cond, Type type) {
  return arith::SelectOp::create(b, loc, cond, floatConstant(b, loc, type, 1),
                                 floatConstant(b, loc, type, 0));
}

/// Classifies the outputs: every output of an op without reduction
/// dimensions is assigned; with reductions, each must combine its init,
/// read nowhere else, with a term by addf, maximumf/maxnumf or
/// minimumf/minnumf (upstream's matchReduction finds the combiner).
LogicalResult classifyOutputs(Primal &p) {
  linalg::LinalgOp op = p.op;
  p.forms.assign(op.getNumDpsInits(), OutputForm());
  if (op.getNumReductionLoops() == 0)
    return success();
  SmallVector<BlockArgument> outputArgs(op.getRegionOutputArgs());
  for (unsigned j = 0; j < op.getNumDpsInits(); ++j) {
    SmallVector<Operation *> combiners;
    Value term = matchReduction(outputArgs, j, combiners);
    Combiner kind = Combiner::Assign;
    if (term && combiners.size() == 1) {
      Operation *c = combiners.front();
      if (isa<arith::AddFOp>(c))
        kind = Combiner::Sum;
      else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(c))
        kind = Combiner::Max;
      else if (isa<arith::MinimumFOp, arith::MinNumFOp>(c))
        kind = Combiner::Min;
    }
    if (kind == Combiner::Assign)
      return op->emitOpError("cannot be differentiated: output #")
             << j
             << " of an op with reduction dimensions must combine its init, "
                "read nowhere else, with a term by arith.addf, maximumf or "
                "minimumf (a sum, maximum or minimum)";
    p.forms[j] = {kind, combiners.front(), term};
  }
  return success();
}

/// Parallel for the dimensions `outputMap` indexes, reduction otherwise.
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
  /// Maps the primal body's block arguments to the adjoint body's.
  void mapArguments(ValueRange args, IRMapping &mapping) const {
    for (auto [arg, primal] : llvm::zip(args, primalArgs))
      if (primal)
        mapping.map(primal, arg);
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

/// The reverse sweep over a recomputed scalar body: the adjoints of the
/// values that depend on one block argument, from seeds on its results.
class ScalarReverseSweep {
public:
  ScalarReverseSweep(OpBuilder &b, Location loc, Value target,
                     ArrayRef<Operation *> body)
      : b(b), loc(loc), target(target), body(body) {
    active.insert(target);
    for (Operation *op : body) {
      bool reads = llvm::any_of(op->getOperands(),
                                [&](Value v) { return active.contains(v); });
      if (!reads && op->getNumRegions()) {
        llvm::SetVector<Value> above;
        getUsedValuesDefinedAbove(op->getRegions(), above);
        reads = llvm::any_of(above, [&](Value v) { return active.contains(v); });
      }
      if (reads)
        active.insert(op->result_begin(), op->result_end());
    }
  }

  /// Adds `a` to the adjoint of `v` (nothing when `v` does not depend on
  /// the target).
  void addAdjoint(Value v, Value a) {
    if (!active.contains(v))
      return;
    auto [it, inserted] = adjoint.try_emplace(v, a);
    if (!inserted)
      it->second = arith::AddFOp::create(b, loc, it->second, a);
  }

  /// Propagates the seeds back to the target; returns the first op that
  /// has no scalar rule (one float result) on the way, or null.
  Operation *run() {
    for (Operation *op : llvm::reverse(body)) {
      if (!llvm::any_of(op->getResults(),
                        [&](Value r) { return adjoint.count(r); }))
        continue;
      auto rule = dyn_cast<ScalarAdjointOpInterface>(op);
      if (!rule || op->getNumResults() != 1 || op->getNumRegions() ||
          !isa<FloatType>(op->getResult(0).getType()))
        return op;
      SmallVector<Value> operandAdjoints;
      rule.buildScalarAdjoints(b, adjoint.lookup(op->getResult(0)),
                               operandAdjoints);
      for (auto [v, a] : llvm::zip(op->getOperands(), operandAdjoints))
        if (a)
          addAdjoint(v, a);
    }
    return nullptr;
  }

  /// The target's adjoint (zero when nothing reached it).
  Value targetAdjoint(Type type) {
    Value a = adjoint.lookup(target);
    return a ? a : floatConstant(b, loc, type, 0.0);
  }

private:
  OpBuilder &b;
  Location loc;
  Value target;
  ArrayRef<Operation *> body;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> adjoint;
};

/// Removes the dead ops of a freshly built body, then the inputs it does
/// not read, except those that give a loop its extent. Returns the
/// (possibly rebuilt) op.
linalg::GenericOp tidy(OpBuilder &b, linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  unsigned numInputs = g.getNumDpsInputs(), numLoops = g.getNumLoops();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  // The loops the kept operands index (the output always stays).
  llvm::BitVector extent(numLoops), unused(body.getNumArguments());
  auto cover = [&](AffineMap m) {
    for (AffineExpr e : m.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        extent.set(d.getPosition());
  };
  cover(maps.back());
  for (unsigned i = 0; i < numInputs; ++i) {
    if (body.getArgument(i).use_empty())
      unused.set(i);
    else
      cover(maps[i]);
  }
  for (unsigned i = 0; i < numInputs && !extent.all(); ++i) {
    if (!unused.test(i))
      continue;
    llvm::BitVector before = extent;
    cover(maps[i]);
    if (extent != before)
      unused.reset(i); // it sizes a loop nothing else indexes
  }
  if (unused.none())
    return g;
  SmallVector<Value> ins;
  SmallVector<AffineMap> keptMaps;
  for (unsigned i = 0; i < maps.size(); ++i) {
    if (i < numInputs && unused.test(i))
      continue;
    if (i < numInputs)
      ins.push_back(g.getDpsInputs()[i]);
    keptMaps.push_back(maps[i]);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(g);
  auto ng = linalg::GenericOp::create(b, g.getLoc(), g->getResultTypes(), ins,
                                      g.getDpsInits(), keptMaps,
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

/// What building one operand's adjoint gave: its value, the generic built
/// for it (null when the value is an existing one, such as a result
/// adjoint passed through unchanged), whether that generic reduces, and
/// whether it is a contraction.
struct BuiltAdjoint {
  Value value;
  linalg::GenericOp generic;
  bool reduces = false, contraction = false;
};

/// The adjoint of `operand` (a DPS input, or an init whose value an
/// assigned output reads): a linalg.generic whose output, indexed by the
/// operand's map, accumulates in `accType`.
FailureOr<BuiltAdjoint> buildGeneralAdjoint(OpBuilder &b, const Primal &p,
                                            OpOperand &operand,
                                            Type accType) {
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
        in.mapArguments(args, mapping);
        SmallVector<Operation *> clones = cloneBody(nb, p, mapping);
        ScalarReverseSweep sweep(nb, nl, mapping.lookup(targetArg), clones);
        Operation *yield = op.getBlock()->getTerminator();
        for (const Seed &s : seeds) {
          const OutputForm &f = p.forms[s.output];
          Value dy = args[s.dy];
          if (f.kind == Combiner::Assign) {
            sweep.addAdjoint(
                mapping.lookupOrDefault(yield->getOperand(s.output)), dy);
            continue;
          }
          Value term = mapping.lookupOrDefault(f.term);
          if (f.kind == Combiner::Sum) {
            sweep.addAdjoint(term, dy);
            continue;
          }
          // A maximum or minimum: the terms equal to the result share dy.
          Value hit = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            term, args[s.result]);
          Value share = arith::DivFOp::create(nb, nl, dy, args[s.count]);
          sweep.addAdjoint(
              term, arith::SelectOp::create(
                        nb, nl, hit, share,
                        floatConstant(nb, nl, dy.getType(), 0.0)));
        }
        notDifferentiable = sweep.run();
        Value a = sweep.targetAdjoint(elemType);
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
    InFlightDiagnostic diag =
        op->emitOpError("cannot be differentiated: its body applies '")
        << name
        << "', which has no scalar adjoint rule (ScalarAdjointOpInterface), "
           "on the path from operand #"
        << operand.getOperandNumber();
    diag.attachNote() << "the ops with a scalar adjoint rule: "
                      << opsWithScalarRules(op->getContext());
    return diag;
  }
  generic = tidy(b, generic);
  if (Value v = identityInput(generic)) {
    generic.erase();
    return BuiltAdjoint{v};
  }
  return BuiltAdjoint{generic->getResult(0), generic, reduces,
                      reduces && linalg::isaContractionOpInterface(generic)};
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
        return indicator(nb, nl,
                         arith::CmpFOp::create(nb, nl,
                                               arith::CmpFPredicate::OEQ, a[0],
                                               a[1]),
                         elem);
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
        in.mapArguments(args, mapping);
        cloneBody(nb, p, mapping);
        Value eq = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OEQ,
            mapping.lookupOrDefault(p.forms[j].term), args[resultIdx]);
        linalg::YieldOp::create(
            nb, nl,
            Value(arith::AddFOp::create(nb, nl, args.back(),
                                        indicator(nb, nl, eq, elem))));
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
        return arith::SelectOp::create(
            nb, nl, eq, share,
            floatConstant(nb, nl, type.getElementType(), 0.0));
      });
}

/// The adjoint of one needed operand, accumulated over reduced dimensions
/// in f64 (f32 values; a contraction keeps f32, as a GEMM) or in f32
/// (bf16 and f16 values), rounded once.
FailureOr<Value> buildOperandAdjoint(OpBuilder &b, const Primal &p,
                                     OpOperand &operand) {
  linalg::LinalgOp op = p.op;
  if (op.isDpsInit(&operand)) {
    unsigned j = operand.getOperandNumber() - op.getNumDpsInputs();
    if (p.forms[j].kind != Combiner::Assign)
      return p.resultAdjoints[j] ? buildReductionInitAdjoint(b, p, j)
                                 : Value();
  }
  // An operand the body does not read (an assigned output's init, which
  // the output overwrites, or an unused input) has a zero adjoint.
  if (!op.payloadUsesValueFromOperand(&operand))
    return Value();
  Type elemType = getElementTypeOrSelf(operand.get().getType());
  bool reduces =
      op.getMatchingIndexingMap(&operand).getNumResults() < op.getNumLoops();
  Type accType = reduces && (elemType.isF16() || elemType.isBF16())
                     ? Type(b.getF32Type())
                     : elemType;
  FailureOr<BuiltAdjoint> adj = buildGeneralAdjoint(b, p, operand, accType);
  if (failed(adj))
    return failure();
  if (adj->generic && adj->reduces && elemType.isF32() && !adj->contraction) {
    // A sum over reduced dimensions that is not a contraction: in f64.
    adj->generic.erase();
    accType = b.getF64Type();
    adj = buildGeneralAdjoint(b, p, operand, accType);
    if (failed(adj))
      return failure();
  }
  if (adj->generic && accType != elemType)
    return buildConvertElements(b, op.getLoc(), adj->value, elemType);
  return adj->value;
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
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return op->emitOpError("is differentiated elementwise on one ranked "
                           "tensor result only");
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
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

std::string mlir::gacc::opsWithScalarRules(MLIRContext *ctx) {
  SmallVector<StringRef> names;
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    if (name.hasInterface<ScalarAdjointOpInterface>())
      names.push_back(name.getStringRef());
  llvm::sort(names);
  return llvm::join(names, ", ");
}
