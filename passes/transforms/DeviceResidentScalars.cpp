//===- DeviceResidentScalars.cpp - gacc-device-resident-scalars -----------===//
//
// Rewrites a function of the cuda target's host code (at the scf.parallel
// level, before the GPU mapping) so that no value the device computes or
// the caller passes per call ever reaches the host: the scalar arguments
// become rank-0 buffers, the host's scalar arithmetic on them runs in
// one-thread parallel loops (kernels), loop-carried and branch-merged
// scalars live in rank-0 buffers, and the results are stored into a
// trailing buffer. The function then holds no host read of device memory,
// so its stream of work can be captured once into a CUDA graph and
// replayed with new inputs in the same buffers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "gacc-device-resident-scalars"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCDEVICERESIDENTSCALARSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

bool isScalar(Type t) { return t.isIntOrIndexOrFloat(); }
/// A scalar or a vector of them (a value broadcast before a kernel).
bool isRegisterValue(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return isScalar(v.getElementType());
  return isScalar(t);
}

/// A host op the rewrite may run on the device: a read or write of one
/// element of a buffer, or scalar arithmetic without memory effects.
bool isElementAccess(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp>(op);
}
bool isScalarArithmetic(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         llvm::all_of(op->getOperandTypes(), isRegisterValue) &&
         llvm::all_of(op->getResultTypes(), isRegisterValue) &&
         op->getNumResults() > 0;
}

/// Where a value is stored: a buffer and the indices of its element.
using Target = std::pair<Value, SmallVector<Value>>;

/// The rewrite of one function.
class FunctionRewrite {
public:
  explicit FunctionRewrite(func::FuncOp func) : func(func), b(func) {}

  LogicalResult run() {
    if (failed(checkResults()))
      return failure();
    analyzeTaint();
    Block &entry = func.getBody().front();
    b.setInsertionPointToStart(&entry);
    zero = arith::ConstantIndexOp::create(b, func.getLoc(), 0);
    one = arith::ConstantIndexOp::create(b, func.getLoc(), 1);
    convertArguments();
    if (failed(rewriteRegion(func.getBody())))
      return failure();
    // The replaced ops name each other (and a moved loop's body its old
    // arguments) only: dropped together, nothing may still use them.
    for (Operation *op : dead)
      op->dropAllReferences();
    for (Operation *op : dead) {
      bool used = !op->use_empty();
      for (Region &r : op->getRegions())
        for (Block &block : r)
          for (BlockArgument a : block.getArguments())
            used |= !a.use_empty();
      if (used)
        return op->emitOpError()
               << "gacc-device-resident-scalars left a use of a value it "
                  "moved to the device (" << func.getSymName() << ")";
    }
    for (Operation *op : llvm::reverse(dead))
      op->erase();
    return success();
  }

private:
  func::FuncOp func;
  OpBuilder b;
  Value zero, one;
  /// Host scalars whose value depends on the call's inputs or on device
  /// memory: computed on the device and kept in rank-0 buffers.
  llvm::DenseSet<Value> tainted;
  /// The rank-0 buffer holding each rewritten tainted value.
  llvm::DenseMap<Value, Value> location;
  /// Buffers allocated at the function's entry (freed before it returns).
  SmallVector<Value> buffers;
  /// The function's results, stored into its trailing argument.
  Value resultsBuffer;
  llvm::DenseSet<Operation *> movableOps, inertOps;
  /// Ops replaced by device code, erased at the end (users first).
  SmallVector<Operation *> dead;

  InFlightDiagnostic error(Operation *op, const Twine &what) {
    return op->emitOpError() << "cannot run on the device's scalars ("
                             << func.getSymName() << "): " << what;
  }

  LogicalResult checkResults() {
    TypeRange results = func.getResultTypes();
    for (Type t : results)
      if (!isScalar(t) || t != results.front())
        return func.emitOpError()
               << "gacc-device-resident-scalars: results must be scalars of "
                  "one type, got "
               << func.getFunctionType();
    return success();
  }

  bool isHost(Operation *op) const {
    return !op->getParentOfType<scf::ParallelOp>();
  }

  /// Marks the host scalars that depend on arguments or device memory, to
  /// a fixed point through loops and branches.
  void analyzeTaint() {
    for (BlockArgument a : func.getArguments())
      if (isScalar(a.getType()))
        tainted.insert(a);
    bool changed = true;
    auto mark = [&](Value v) {
      if (isRegisterValue(v.getType()) && tainted.insert(v).second)
        changed = true;
    };
    auto anyTainted = [&](ValueRange vs) {
      return llvm::any_of(vs, [&](Value v) { return tainted.contains(v); });
    };
    while (changed) {
      changed = false;
      func.walk([&](Operation *op) {
        if (!isHost(op))
          return;
        if (isa<memref::LoadOp>(op))
          mark(op->getResult(0));
        else if (isScalarArithmetic(op) && anyTainted(op->getOperands()))
          for (Value r : op->getResults())
            mark(r);
        else if (auto loop = dyn_cast<scf::ForOp>(op)) {
          auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
          for (unsigned k = 0; k < loop.getNumResults(); ++k)
            if (tainted.contains(loop.getInitArgs()[k]) ||
                tainted.contains(yield.getOperand(k)) ||
                tainted.contains(loop.getRegionIterArgs()[k])) {
              mark(loop.getRegionIterArgs()[k]);
              mark(loop.getResult(k));
            }
        } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
          if (tainted.contains(branch.getCondition()))
            for (Value r : branch.getResults())
              mark(r);
          for (Region &r : branch->getRegions())
            if (!r.empty())
              for (unsigned k = 0; k < branch.getNumResults(); ++k)
                if (tainted.contains(
                        r.front().getTerminator()->getOperand(k)))
                  mark(branch.getResult(k));
        }
      });
    }
    func.walk([&](Operation *op) {
      if (!isHost(op))
        return;
      if (isElementAccess(op) ||
          (isScalarArithmetic(op) &&
           llvm::any_of(op->getResults(),
                        [&](Value r) { return tainted.contains(r); })))
        movableOps.insert(op);
      else if (isScalarArithmetic(op))
        inertOps.insert(op);
    });
  }

  /// A rank-0 buffer of `t`, allocated at the function's entry.
  Value newBuffer(Type t) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(one.getDefiningOp());
    Value buffer =
        memref::AllocOp::create(b, func.getLoc(), MemRefType::get({}, t));
    buffers.push_back(buffer);
    return buffer;
  }

  /// Scalar arguments become rank-0 buffers in place; with results, a
  /// trailing memref<R x T> receives them (argument and result attributes
  /// kept in step, through FunctionOpInterface).
  void convertArguments() {
    Block &entry = func.getBody().front();
    for (BlockArgument a : entry.getArguments())
      if (isScalar(a.getType())) {
        // The argument is its own buffer now; its scalar uses are rewritten
        // to loads of it.
        a.setType(MemRefType::get({}, a.getType()));
        location[a] = a;
      }
    func.setType(FunctionType::get(func.getContext(),
                                   entry.getArgumentTypes(),
                                   func.getResultTypes()));
    TypeRange results = func.getResultTypes();
    if (results.empty())
      return;
    auto type = MemRefType::get({int64_t(results.size())}, results.front());
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, DictionaryAttr(), func.getLoc());
    resultsBuffer = entry.getArgument(index);
    (void)func.eraseResults(llvm::BitVector(results.size(), true));
  }

  /// A new buffer where tainted `v` lives from now on.
  Target bufferFor(Value v) {
    Value buffer = newBuffer(v.getType());
    location[v] = buffer;
    return {buffer, {}};
  }

  /// Where tainted `v` lives (its buffer).
  Value locate(Value v) {
    assert(location.count(v) && "a tainted value without a buffer");
    return location.lookup(v);
  }

  /// One device thread: a one-iteration parallel loop at the builder's
  /// point, whose body `fill` builds.
  void deviceThread(Location loc, function_ref<void(OpBuilder &)> fill) {
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                        ValueRange{one}, ValueRange{one});
    OpBuilder inner(loop.getBody(), loop.getBody()->begin());
    fill(inner);
  }

  /// Stores `values` into `targets` in one device thread: all loads
  /// first, so that a value moving between two of the targets (a loop
  /// that swaps its carried values) is read before it is overwritten.
  void storeAll(Location loc, ArrayRef<Value> values,
                ArrayRef<Target> targets) {
    if (values.empty())
      return;
    deviceThread(loc, [&](OpBuilder &in) {
      SmallVector<Value> loaded;
      for (Value v : values)
        loaded.push_back(tainted.contains(v)
                             ? memref::LoadOp::create(in, loc, locate(v))
                                   .getResult()
                             : v);
      for (auto [v, target] : llvm::zip(loaded, targets))
        memref::StoreOp::create(in, loc, v, target.first, target.second);
    });
  }

  /// Reads of tainted host values inside a device loop: loaded from their
  /// buffers at the top of its body.
  void loadCapturedScalars(scf::ParallelOp loop) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(loop.getRegion(), captured);
    OpBuilder in(loop.getBody(), loop.getBody()->begin());
    for (Value v : captured) {
      if (!tainted.contains(v))
        continue;
      auto loaded = memref::LoadOp::create(in, loop.getLoc(), locate(v));
      replaceAllUsesInRegionWith(v, loaded, loop.getRegion());
      // A converted argument is its own buffer: the load keeps reading it.
      loaded.getMemrefMutable().assign(locate(v));
    }
  }

  LogicalResult rewriteRegion(Region &region) {
    for (Block &block : region)
      if (failed(rewriteBlock(block)))
        return failure();
    return success();
  }

  /// Whether `op` belongs to a segment of host ops that one device thread
  /// runs (element accesses, arithmetic on tainted values), or is
  /// untainted arithmetic that may sit between them (and stays on the
  /// host). Decided before the arguments change type.
  bool movable(Operation *op) const { return movableOps.contains(op); }
  bool inertBetween(Operation *op) const { return inertOps.contains(op); }

  LogicalResult rewriteBlock(Block &block) {
    SmallVector<Operation *> segment;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (movable(&op) || (!segment.empty() && inertBetween(&op))) {
        if (movable(&op))
          segment.push_back(&op);
        continue;
      }
      b.setInsertionPoint(&op);
      emitSegment(segment);
      segment.clear();
      if (failed(rewriteOp(&op)))
        return failure();
    }
    if (!segment.empty()) {
      b.setInsertionPointToEnd(&block);
      emitSegment(segment);
    }
    return success();
  }

  /// The ops of `segment` (in order) as one device thread at the builder's
  /// point: tainted operands from outside loaded from their buffers, each
  /// result that is used after the segment stored into a new buffer.
  void emitSegment(ArrayRef<Operation *> segment) {
    if (segment.empty())
      return;
    llvm::SmallPtrSet<Operation *, 16> members(segment.begin(),
                                               segment.end());
    SmallVector<Value> escaping;
    for (Operation *op : segment)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *user) {
              Operation *top = op->getBlock()->findAncestorOpInBlock(*user);
              return !top || !members.contains(top);
            }))
          escaping.push_back(r);
    for (Value r : escaping)
      location[r] = newBuffer(r.getType());
    deviceThread(segment.front()->getLoc(), [&](OpBuilder &in) {
      IRMapping map;
      for (Operation *op : segment) {
        for (Value v : op->getOperands())
          if (tainted.contains(v) && !map.contains(v))
            map.map(v, memref::LoadOp::create(in, op->getLoc(), locate(v))
                           .getResult());
        in.clone(*op, map);
      }
      for (Value r : escaping)
        memref::StoreOp::create(in, r.getLoc(), map.lookup(r), locate(r));
    });
    dead.append(segment.begin(), segment.end());
  }

  LogicalResult rewriteOp(Operation *op) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      for (Value v : op->getOperands())
        if (tainted.contains(v))
          return error(op, "its bounds depend on a value the device computes");
      if (loop.getNumResults())
        return error(op, "the host would read its reduced results");
      loadCapturedScalars(loop);
      return success();
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return rewriteFor(loop);
    if (auto branch = dyn_cast<scf::IfOp>(op))
      return rewriteIf(branch);
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      return rewriteReturn(ret);
    // A loop's or branch's yield: rewritten with its parent.
    if (isa<scf::YieldOp>(op) &&
        isa<scf::ForOp, scf::IfOp>(op->getParentOp()))
      return success();
    for (OpOperand &use : op->getOpOperands())
      if (tainted.contains(use.get()))
        return error(op, "operand ")
               << use.getOperandNumber()
               << " is a value the device computes or the caller passes per "
                  "call, which the host never sees";
    for (Region &r : op->getRegions())
      if (failed(rewriteRegion(r)))
        return failure();
    return success();
  }

  /// A loop's tainted carried values live in buffers: initialized before
  /// it, updated at the end of each iteration; the loop keeps the others.
  LogicalResult rewriteFor(scf::ForOp loop) {
    for (Value v : {loop.getLowerBound(), loop.getUpperBound(),
                    loop.getStep()})
      if (tainted.contains(v))
        return error(loop, "its trip count depends on a value the device "
                           "computes");
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    SmallVector<unsigned> moved, kept;
    for (unsigned k = 0; k < loop.getNumResults(); ++k)
      (tainted.contains(loop.getRegionIterArgs()[k]) ? moved : kept)
          .push_back(k);
    SmallVector<Value> inits;
    SmallVector<Target> targets;
    for (unsigned k : moved) {
      targets.push_back(bufferFor(loop.getResult(k)));
      location[loop.getRegionIterArgs()[k]] = targets.back().first;
      inits.push_back(loop.getInitArgs()[k]);
    }
    storeAll(loop.getLoc(), inits, targets);
    if (failed(rewriteRegion(loop.getRegion())))
      return failure();
    // The carried values' updates, after the body's own work.
    b.setInsertionPoint(yield);
    SmallVector<Value> updates;
    for (unsigned k : moved)
      updates.push_back(yield.getOperand(k));
    storeAll(yield.getLoc(), updates, targets);
    if (moved.empty())
      return success();
    // Rebuild the loop with the untainted carried values only.
    b.setInsertionPoint(loop);
    SmallVector<Value> keptInits, keptYields;
    for (unsigned k : kept) {
      keptInits.push_back(loop.getInitArgs()[k]);
      keptYields.push_back(yield.getOperand(k));
    }
    auto rebuilt = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                                      loop.getUpperBound(), loop.getStep(),
                                      keptInits);
    Block *body = rebuilt.getBody();
    if (!body->empty())
      body->getTerminator()->erase();
    SmallVector<Value> replacements = {rebuilt.getInductionVar()};
    unsigned next = 0;
    for (unsigned k = 0; k < loop.getNumResults(); ++k)
      replacements.push_back(
          tainted.contains(loop.getRegionIterArgs()[k])
              ? Value(loop.getRegionIterArgs()[k]) // dead once rewritten
              : rebuilt.getRegionIterArgs()[next++]);
    body->getOperations().splice(body->end(),
                                 loop.getBody()->getOperations());
    for (auto [from, to] :
         llvm::zip(loop.getBody()->getArguments(), replacements))
      if (from != to)
        from.replaceAllUsesWith(to);
    yield->setOperands(keptYields);
    next = 0;
    for (unsigned k : kept)
      loop.getResult(k).replaceAllUsesWith(rebuilt.getResult(next++));
    // The tainted results are read through `location` only.
    dead.push_back(loop);
    return success();
  }

  /// A branch's tainted results live in buffers each branch stores into.
  /// Device work in a branch on a device value runs on both sides, each
  /// kernel guarded by the condition (or its negation) loaded in its body.
  void guard(scf::ParallelOp loop, Value condition, bool negate) {
    Block *body = loop.getBody();
    Location loc = loop.getLoc();
    OpBuilder in(body, body->begin());
    Value c = memref::LoadOp::create(in, loc, condition);
    if (negate)
      c = arith::XOrIOp::create(
          in, loc, c, arith::ConstantOp::create(in, loc, in.getBoolAttr(true)));
    auto inner = scf::IfOp::create(in, loc, TypeRange{}, c,
                                   /*withElseRegion=*/false);
    Block *then = inner.thenBlock();
    then->getOperations().splice(Block::iterator(then->getTerminator()),
                                 body->getOperations(),
                                 std::next(Block::iterator(inner)),
                                 Block::iterator(body->getTerminator()));
  }

  /// A branch on a device value (a skipped fp16 window): both sides'
  /// host code runs, their kernels guarded; results through buffers.
  LogicalResult rewritePredicated(scf::IfOp branch) {
    WalkResult calls = branch->walk([&](CallOpInterface call) {
      error(call, "it is called under a branch on a value the device "
                  "computes");
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      return failure();
    SmallVector<Target> targets;
    for (Value r : branch.getResults())
      targets.push_back(bufferFor(r));
    Value condition = locate(branch.getCondition());
    for (auto [index, region] : llvm::enumerate(branch->getRegions())) {
      if (region.empty())
        continue;
      if (failed(rewriteRegion(region)))
        return failure();
      Block &block = region.front();
      b.setInsertionPoint(block.getTerminator());
      SmallVector<Value> values(block.getTerminator()->getOperands());
      storeAll(branch.getLoc(), values, targets);
      SmallVector<scf::ParallelOp> kernels;
      region.walk([&](scf::ParallelOp loop) {
        if (!loop->getParentOfType<scf::ParallelOp>())
          kernels.push_back(loop);
      });
      for (scf::ParallelOp loop : kernels)
        guard(loop, condition, /*negate=*/index == 1);
      block.getTerminator()->erase();
      branch->getBlock()->getOperations().splice(
          Block::iterator(branch), block.getOperations());
    }
    dead.push_back(branch);
    return success();
  }

  LogicalResult rewriteIf(scf::IfOp branch) {
    if (tainted.contains(branch.getCondition()))
      return rewritePredicated(branch);
    SmallVector<unsigned> moved, kept;
    for (unsigned k = 0; k < branch.getNumResults(); ++k)
      (tainted.contains(branch.getResult(k)) ? moved : kept).push_back(k);
    SmallVector<Target> targets;
    for (unsigned k : moved)
      targets.push_back(bufferFor(branch.getResult(k)));
    for (Region &r : branch->getRegions()) {
      if (failed(rewriteRegion(r)))
        return failure();
      if (r.empty() || moved.empty())
        continue;
      Operation *yield = r.front().getTerminator();
      b.setInsertionPoint(yield);
      SmallVector<Value> values, keptValues;
      for (unsigned k : moved)
        values.push_back(yield->getOperand(k));
      for (unsigned k : kept)
        keptValues.push_back(yield->getOperand(k));
      storeAll(yield->getLoc(), values, targets);
      yield->setOperands(keptValues);
    }
    if (moved.empty())
      return success();
    b.setInsertionPoint(branch);
    SmallVector<Type> keptTypes;
    for (unsigned k : kept)
      keptTypes.push_back(branch.getResult(k).getType());
    auto rebuilt = scf::IfOp::create(b, branch.getLoc(), keptTypes,
                                     branch.getCondition(),
                                     /*withElseRegion=*/false);
    rebuilt.getThenRegion().takeBody(branch.getThenRegion());
    rebuilt.getElseRegion().takeBody(branch.getElseRegion());
    unsigned next = 0;
    for (unsigned k : kept)
      branch.getResult(k).replaceAllUsesWith(rebuilt.getResult(next++));
    dead.push_back(branch);
    return success();
  }

  /// The results go to the trailing buffer; the buffers of this rewrite
  /// are freed.
  LogicalResult rewriteReturn(func::ReturnOp ret) {
    Location loc = ret.getLoc();
    SmallVector<Target> targets;
    for (unsigned k = 0; k < ret.getNumOperands(); ++k)
      targets.push_back(
          {resultsBuffer, {arith::ConstantIndexOp::create(b, loc, k)}});
    SmallVector<Value> values(ret.getOperands());
    storeAll(loc, values, targets);
    for (Value buffer : buffers)
      memref::DeallocOp::create(b, loc, buffer);
    ret->setOperands({});
    return success();
  }
};

struct DeviceResidentScalarsPass
    : public mlir::gacc::impl::GAccDeviceResidentScalarsPassBase<
          DeviceResidentScalarsPass> {
  using Base::Base;

  void runOnOperation() override {
    // A name that is no function the pass rewrites would leave the step
    // as it was, silently.
    for (const std::string &name : functions) {
      auto func = getOperation().lookupSymbol<func::FuncOp>(name);
      if (func && !func.isExternal() && !func.isPrivate())
        continue;
      getOperation().emitError("gacc-device-resident-scalars: functions "
                               "names @")
          << name
          << (func ? ", a private or external function (the pass rewrites "
                     "public functions with a body)"
                   : ", which is not a func.func of this module");
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (!functions.empty() &&
          !llvm::is_contained(functions, func.getSymName().str()))
        continue;
      if (failed(FunctionRewrite(func).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
