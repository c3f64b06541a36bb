//===- LinalgToParallelLoops.cpp - gacc-linalg-to-parallel-loops ----------===//
//
// Lowers the linalg ops on buffers to one-dimensional scf.parallel loops for
// the GPU mapping: consecutive threads on consecutive elements, reductions
// carried in registers (unrolled), a deterministic split of long sums,
// device threads for scalar work that would otherwise run on the host, and
// an output's initializing fill folded into the op's threads.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/InitializingFill.h"
#include "passes/analysis/KernelOrder.h"
#include "passes/analysis/KernelParameters.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCLINALGTOPARALLELLOOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

/// A long sum is split when its outputs alone would give fewer threads than
/// this (a quarter of kTargetThreads) ...
constexpr int64_t kTargetThreads = 65536;
/// ... and it has at least this many terms per output.
constexpr int64_t kMinSplitTerms = 256;
/// Each thread of the first stage sums at least this many terms ...
constexpr int64_t kMinChunk = 32;
/// ... and the second stage at most this many partial sums per output.
constexpr int64_t kMaxSplit = 512;
/// The innermost reduction loop is unrolled this many times: the terms'
/// loads do not depend on the running sum, so they are all in flight
/// before the adds (in the same order) consume them.
constexpr uint64_t kUnroll = 8;
/// How many of the latest kernels an op may join (the ops between checked
/// by classifyCrossing): a bound on the pass's time, not on what fuses.
constexpr size_t kCandidateGroups = 8;

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// x / d and x % d for a constant d (no op where d is 1).
Value divide(OpBuilder &b, Location loc, Value x, int64_t d) {
  return d == 1 ? x : arith::DivUIOp::create(b, loc, x, index(b, loc, d));
}
Value remainder(OpBuilder &b, Location loc, Value x, int64_t d) {
  return d == 1 ? index(b, loc, 0)
                : arith::RemUIOp::create(b, loc, x, index(b, loc, d));
}

/// The coordinates of a row-major linear index over `sizes` (the last one
/// fastest), by division and remainder by constants. Not
/// affine::delinearizeIndex: the affine.delinearize_index it builds lowers
/// (lower-affine) to signed floor division and remainder with sign
/// fix-ups (floordivsi, remsi, a compare and a select per dimension); the
/// linear index here is never negative, so one unsigned division and one
/// remainder by a constant per dimension do, in every thread of a kernel.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes) {
  SmallVector<Value> coords(sizes.size());
  for (int64_t d = int64_t(sizes.size()) - 1; d > 0; --d) {
    coords[d] = remainder(b, loc, linear, sizes[d]);
    linear = divide(b, loc, linear, sizes[d]);
  }
  if (!sizes.empty())
    coords[0] = linear;
  return coords;
}

/// The indices `map` gives for the loop coordinates `ivs`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange ivs) {
  SmallVector<Value> indices;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    AffineExpr e = map.getResult(r);
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      indices.push_back(ivs[dim.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      indices.push_back(index(b, loc, c.getValue()));
    else
      indices.push_back(
          affine::AffineApplyOp::create(b, loc, map.getSubMap({r}), ivs));
  }
  return indices;
}

/// The op's body at loop coordinates `ivs` (every loop dimension, in the
/// op's order) with the outputs' values `accs` (null where the body does
/// not read that output): loads the inputs, clones the body and returns
/// what it yields.
SmallVector<Value> emitBody(OpBuilder &b, Location loc, linalg::LinalgOp op,
                            ValueRange ivs, ValueRange accs) {
  Block *body = op.getBlock();
  IRMapping map;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    Value arg = op.getMatchingBlockArgument(in);
    if (isa<MemRefType>(v.getType()))
      map.map(arg, memref::LoadOp::create(
                       b, loc, v,
                       applyMap(b, loc, op.getMatchingIndexingMap(in), ivs)));
    else
      map.map(arg, v);
  }
  for (auto [arg, acc] : llvm::zip(op.getRegionOutputArgs(), accs))
    if (acc)
      map.map(arg, acc);
  for (Operation &o : body->without_terminator()) {
    if (auto idx = dyn_cast<linalg::IndexOp>(o)) {
      map.map(idx.getResult(), ivs[idx.getDim()]);
      continue;
    }
    b.clone(o, map);
  }
  SmallVector<Value> yielded;
  for (Value v : body->getTerminator()->getOperands())
    yielded.push_back(map.lookupOrDefault(v));
  return yielded;
}

/// Whether `v` is computed (inside the op's body) from one of the op's
/// output values.
bool readsOutputs(linalg::LinalgOp op, Value v) {
  SmallVector<Value> work = {v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (llvm::is_contained(op.getRegionOutputArgs(), x))
      return true;
    Operation *def = x.getDefiningOp();
    if (def && def->getBlock() == op.getBlock())
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// The op that adds output `k`'s value to a term (`out + term` or `term +
/// out`, `out` used nowhere else, the term computed from no output), or
/// null: a sum that may be split.
Operation *sumOf(linalg::LinalgOp op, unsigned k) {
  BlockArgument out = op.getRegionOutputArgs()[k];
  Operation *yielded =
      op.getBlock()->getTerminator()->getOperand(k).getDefiningOp();
  if (!yielded || !isa<arith::AddFOp, arith::AddIOp>(yielded) ||
      !out.hasOneUse())
    return nullptr;
  Value term;
  if (yielded->getOperand(0) == out)
    term = yielded->getOperand(1);
  else if (yielded->getOperand(1) == out)
    term = yielded->getOperand(0);
  if (!term || readsOutputs(op, term))
    return nullptr;
  return yielded;
}

/// The largest divisor of `n` that is at most `bound`.
int64_t largestDivisorAtMost(int64_t n, int64_t bound) {
  int64_t best = 1;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      if (d <= bound)
        best = std::max(best, d);
      if (n / d <= bound)
        best = std::max(best, n / d);
    }
  return best;
}

struct Shape {
  SmallVector<unsigned> parallel, reduction; // loop dimensions
  SmallVector<int64_t> parallelSizes, reductionSizes;
  int64_t outputs = 1, terms = 1;            // products of the sizes
};

/// Scatters the parallel and reduction coordinates back into the op's
/// loop order.
SmallVector<Value> loopCoords(const Shape &s, ValueRange par, ValueRange red) {
  SmallVector<Value> ivs(s.parallel.size() + s.reduction.size());
  for (auto [k, d] : llvm::enumerate(s.parallel))
    ivs[d] = par[k];
  for (auto [k, d] : llvm::enumerate(s.reduction))
    ivs[d] = red[k];
  return ivs;
}

/// The loop coordinates of an output (reduction coordinates zero: output
/// maps do not read them).
SmallVector<Value> outputCoords(OpBuilder &b, Location loc, const Shape &s,
                                ValueRange par) {
  return loopCoords(s, par,
                    SmallVector<Value>(s.reduction.size(), index(b, loc, 0)));
}

/// An op to lower, its loops, and per output the value every element
/// starts from where a fill that only this op reads set it (null where the
/// output is read from memory).
struct Lowering {
  linalg::LinalgOp op;
  Shape s;
  SmallVector<Value> starts;
  int64_t split = 1; // chooseSplit
};

/// The op's outputs at one output position (parallel coordinates `par`):
/// their indices, and their values where `reads` says the body needs them
/// (the output's start value where it has one, a load elsewhere; null
/// where the body does not read it).
struct OutputsAt {
  SmallVector<SmallVector<Value>> indices;
  SmallVector<Value> values;

  OutputsAt(OpBuilder &b, Location loc, const Lowering &l, ValueRange par,
            function_ref<bool(OpOperand &)> reads) {
    linalg::LinalgOp op = l.op;
    SmallVector<Value> ivs = outputCoords(b, loc, l.s, par);
    for (auto [init, start] : llvm::zip(op.getDpsInitsMutable(), l.starts)) {
      indices.push_back(
          applyMap(b, loc, op.getMatchingIndexingMap(&init), ivs));
      Value value;
      if (reads(init))
        value = start ? start
                      : Value(memref::LoadOp::create(b, loc, init.get(),
                                                     indices.back()));
      values.push_back(value);
    }
  }
  /// Stores `results` (one per output) at the position.
  void store(OpBuilder &b, Location loc, linalg::LinalgOp op,
             ValueRange results) const {
    for (auto [init, result, idx] :
         llvm::zip(op.getDpsInitsMutable(), results, indices))
      memref::StoreOp::create(b, loc, result, init.get(), idx);
  }
};

/// A parallel loop over [0, n) (one dimension, so the GPU mapping gives
/// consecutive indices to consecutive threads).
void parallelLoop(OpBuilder &b, Location loc, int64_t n,
                  function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ParallelOp::create(b, loc, ValueRange{index(b, loc, 0)},
                          ValueRange{index(b, loc, n)},
                          ValueRange{index(b, loc, 1)},
                          [&](OpBuilder &pb, Location pl, ValueRange ivs) {
                            body(pb, pl, ivs[0]);
                          });
}

using LoopBody = function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                 ValueRange, ValueRange)>;

/// Nested sequential loops over `sizes` carrying `inits`; `body` gets the
/// coordinates and the carried values and returns the next ones. The
/// innermost loop is added to `toUnroll`.
SmallVector<Value> sequentialLoops(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> sizes, ValueRange inits,
                                   LoopBody body,
                                   SmallVectorImpl<scf::ForOp> &toUnroll,
                                   SmallVector<Value> coords = {}) {
  if (coords.size() == sizes.size())
    return body(b, loc, coords, inits);
  auto loop = scf::ForOp::create(
      b, loc, index(b, loc, 0), index(b, loc, sizes[coords.size()]),
      index(b, loc, 1), inits,
      [&](OpBuilder &lb, Location ll, Value iv, ValueRange iter) {
        SmallVector<Value> inner(coords);
        inner.push_back(iv);
        scf::YieldOp::create(
            lb, ll,
            sequentialLoops(lb, ll, sizes, iter, body, toUnroll, inner));
      });
  // Unrolled once its results have their uses (the remainder of the trip
  // count becomes an epilogue that takes them over).
  if (coords.size() + 1 == sizes.size() && sizes.back() >= int64_t(kUnroll))
    toUnroll.push_back(loop);
  return SmallVector<Value>(loop.getResults());
}

/// One thread per output position: each output's value is loaded once (when
/// the body reads it), carried through the reduction loops in a register
/// and stored once; the terms are added in the op's own order
/// (bit-identical to the loops convert-linalg-to-loops gives the CPU). An
/// element-wise op is the case without reduction loops. This is thread
/// `p`'s work for `l`.
void emitThread(OpBuilder &pb, Location pl, const Lowering &l, Value p,
                SmallVectorImpl<scf::ForOp> &toUnroll) {
  linalg::LinalgOp op = l.op;
  const Shape &s = l.s;
  SmallVector<Value> par = delinearize(pb, pl, p, s.parallelSizes);
  SmallVector<Value> ivs0 = outputCoords(pb, pl, s, par);
  OutputsAt outputs(pb, pl, l, par, [&](OpOperand &init) {
    return !s.reduction.empty() ||
           !op.getMatchingBlockArgument(&init).use_empty();
  });
  SmallVector<Value> accs = outputs.values;
  SmallVector<Value> results =
      s.reduction.empty()
          ? emitBody(pb, pl, op, ivs0, accs)
          : sequentialLoops(
                pb, pl, s.reductionSizes, accs,
                [&](OpBuilder &lb, Location ll, ValueRange red, ValueRange a) {
                  return emitBody(lb, ll, op, loopCoords(s, par, red), a);
                },
                toUnroll);
  outputs.store(pb, pl, op, results);
}

/// One kernel for the ops of `group` (one op, or several with the same
/// output positions, fuseable): each thread does its work for each op in
/// turn.
void lowerInPlace(OpBuilder &b, ArrayRef<const Lowering *> group,
                  SmallVectorImpl<scf::ForOp> &toUnroll) {
  const Lowering &last = *group.back();
  parallelLoop(b, linalg::LinalgOp(last.op).getLoc(), last.s.outputs,
               [&](OpBuilder &pb, Location pl, Value p) {
                 for (const Lowering *l : group)
                   emitThread(pb, pl, *l, p, toUnroll);
               });
}

/// Sums split in two stages. Stage 1: `split` threads per output position,
/// thread k summing the terms k, k + split, k + 2·split, ... (consecutive
/// threads read consecutive terms) from -0.0 into partial[k][position], one
/// partials buffer per output. Stage 2: one thread per position adds the
/// partial sums to each output in the order k = 0, 1, ...: the same bits
/// on every run. This is the scheme of linalg::splitReduction, which is not
/// used: it rewrites tensors (before bufferization, where the GPU's thread
/// count is not yet the question) and splits a reduction dimension into
/// contiguous blocks, whose reads would be strided across the threads of a
/// warp; here the split is decided on buffers, per op, and interleaved so
/// that consecutive threads read consecutive terms.
void lowerSplit(OpBuilder &b, const Lowering &l, int64_t split,
                SmallVectorImpl<scf::ForOp> &toUnroll) {
  linalg::LinalgOp op = l.op;
  const Shape &s = l.s;
  Location loc = op.getLoc();
  int64_t chunk = s.terms / split;
  SmallVector<Value> partials, zeros;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Type elementType = cast<MemRefType>(init.get().getType()).getElementType();
    partials.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get({split * s.outputs}, elementType)));
    // The identity of the sum: -0.0 for floats (-0.0 + x is x for every
    // x, +0.0 + -0.0 is not), 0 for integers.
    TypedAttr identity =
        isa<FloatType>(elementType)
            ? TypedAttr(b.getFloatAttr(elementType, -0.0))
            : TypedAttr(b.getZeroAttr(elementType));
    zeros.push_back(arith::ConstantOp::create(b, loc, identity));
  }
  parallelLoop(
      b, loc, split * s.outputs, [&](OpBuilder &pb, Location pl, Value t) {
        Value k = divide(pb, pl, t, s.outputs);
        Value p = remainder(pb, pl, t, s.outputs);
        SmallVector<Value> par = delinearize(pb, pl, p, s.parallelSizes);
        SmallVector<Value> sums = sequentialLoops(
            pb, pl, {chunk}, zeros,
            [&](OpBuilder &lb, Location ll, ValueRange j, ValueRange a) {
              // term = j · split + k
              Value term = arith::AddIOp::create(
                  lb, ll,
                  arith::MulIOp::create(lb, ll, j[0], index(lb, ll, split)), k);
              SmallVector<Value> red =
                  delinearize(lb, ll, term, s.reductionSizes);
              return emitBody(lb, ll, op, loopCoords(s, par, red), a);
            },
            toUnroll);
        for (auto [sum, partial] : llvm::zip(sums, partials))
          memref::StoreOp::create(pb, pl, sum, partial, t);
      });
  parallelLoop(b, loc, s.outputs, [&](OpBuilder &pb, Location pl, Value p) {
    OutputsAt outputs(pb, pl, l, delinearize(pb, pl, p, s.parallelSizes),
                      [](OpOperand &) { return true; });
    SmallVector<Value> totals = sequentialLoops(
        pb, pl, {split}, outputs.values,
        [&](OpBuilder &lb, Location ll, ValueRange k, ValueRange a) {
          Value at = s.outputs == 1
                         ? k[0]
                         : Value(arith::AddIOp::create(
                               lb, ll,
                               arith::MulIOp::create(
                                   lb, ll, k[0], index(lb, ll, s.outputs)),
                               p));
          SmallVector<Value> next;
          for (unsigned o = 0; o < partials.size(); ++o) {
            Value partial = memref::LoadOp::create(lb, ll, partials[o], at);
            // The op's own add (type, fast-math flags) on (sum, partial).
            Operation *sum = sumOf(op, o);
            IRMapping operands;
            operands.map(sum->getOperand(0), a[o]);
            operands.map(sum->getOperand(1), partial);
            next.push_back(lb.clone(*sum, operands)->getResult(0));
          }
          return next;
        },
        toUnroll);
    outputs.store(pb, pl, op, totals);
  });
  for (Value partial : partials)
    memref::DeallocOp::create(b, loc, partial);
}

/// The split of the op's sums (1: none).
int64_t chooseSplit(linalg::LinalgOp op, const Shape &s) {
  if (s.reduction.empty() || s.terms < kMinSplitTerms ||
      s.outputs * 4 >= kTargetThreads)
    return 1;
  for (unsigned k = 0; k < op.getNumDpsInits(); ++k)
    if (!sumOf(op, k))
      return 1;
  int64_t wanted = std::min({s.terms / kMinChunk,
                             std::max<int64_t>(kTargetThreads / s.outputs, 1),
                             kMaxSplit});
  int64_t split = largestDivisorAtMost(s.terms, wanted);
  return split >= 2 ? split : 1;
}

/// The loops of `op` when this pass lowers it: static loop ranges, each
/// output indexed by parallel dimensions only (one thread per output
/// element) and work to do; anything else is left to the upstream
/// lowering.
std::optional<Shape> shapeOf(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
        return llvm::all_of(op.getMatchingIndexingMap(&init).getResults(),
                            [&](AffineExpr e) {
                              auto dim = dyn_cast<AffineDimExpr>(e);
                              return dim && iterators[dim.getPosition()] ==
                                                utils::IteratorType::parallel;
                            });
      }))
    return std::nullopt;
  Shape s;
  for (auto [d, kind] : llvm::enumerate(iterators)) {
    bool parallel = kind == utils::IteratorType::parallel;
    (parallel ? s.parallel : s.reduction).push_back(unsigned(d));
    (parallel ? s.parallelSizes : s.reductionSizes).push_back(ranges[d]);
    (parallel ? s.outputs : s.terms) *= ranges[d];
  }
  if (s.outputs == 0 || s.terms == 0)
    return std::nullopt;
  return s;
}

/// Where `operand` of `l` is read or written, as a function of the
/// parallel coordinates: the position among them of each index, when the
/// indices are every parallel coordinate once (one element per thread,
/// a different one for each thread), else nullopt.
std::optional<SmallVector<unsigned>> elementOfThread(const Lowering &l,
                                                     OpOperand &operand) {
  // Distinct indices are distinct elements only without zero strides.
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(llvm::zip(strides, type.getShape()), [](auto sd) {
        return std::get<0>(sd) == 0 && std::get<1>(sd) != 1;
      }))
    return std::nullopt;
  AffineMap map = linalg::LinalgOp(l.op).getMatchingIndexingMap(&operand);
  SmallVector<unsigned> positions;
  for (AffineExpr e : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    const unsigned *at =
        dim ? llvm::find(l.s.parallel, dim.getPosition()) : nullptr;
    if (!dim || at == l.s.parallel.end())
      return std::nullopt;
    positions.push_back(unsigned(at - l.s.parallel.begin()));
  }
  if (positions.size() != l.s.parallel.size() ||
      llvm::SmallDenseSet<unsigned>(positions.begin(), positions.end())
              .size() != positions.size())
    return std::nullopt;
  return positions;
}

/// Whether thread p of `later` touches the buffers it shares with
/// `earlier` (where either writes them) only at the element thread p of
/// `earlier` touches, the same one for every such access: then each thread
/// doing `earlier`'s work and then `later`'s reads and writes what the two
/// kernels did. Buffers that may share memory without being the same
/// buffer (mayAlias; with `distinctArguments`, two function arguments do
/// not) are never fused.
bool sameElements(const Lowering &earlier, const Lowering &later,
                  bool distinctArguments) {
  auto isInit = [](const Lowering &l, OpOperand &o) {
    return linalg::LinalgOp(l.op).isDpsInit(&o);
  };
  for (OpOperand &x : earlier.op->getOpOperands())
    for (OpOperand &y : later.op->getOpOperands()) {
      Value bx = bufferOf(x.get());
      if (!mayAlias(x.get(), y.get(), distinctArguments) ||
          (!isInit(earlier, x) && !isInit(later, y)))
        continue;
      if (bx != bufferOf(y.get()))
        return false;
      std::optional<SmallVector<unsigned>> ex = elementOfThread(earlier, x);
      std::optional<SmallVector<unsigned>> ey = elementOfThread(later, y);
      if (x.get() != y.get() || !ex || !ey || *ex != *ey)
        return false;
      // Every other access of `earlier` to that buffer, too.
      for (OpOperand &z : earlier.op->getOpOperands())
        if (mayAlias(z.get(), bx, distinctArguments) &&
            (z.get() != x.get() || elementOfThread(earlier, z) != ex))
          return false;
    }
  return true;
}

struct LinalgToParallelLoopsPass
    : public mlir::gacc::impl::GAccLinalgToParallelLoopsPassBase<
          LinalgToParallelLoopsPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    return checkOptionAtLeast(ctx, getArgument(), "max-parameter-bytes",
                              maxParameterBytes, 1);
  }
  /// Ops lowered to one kernel, and the frees between them that move after
  /// it (classifyCrossing).
  struct Group {
    SmallVector<const Lowering *> members;
    SmallVector<Operation *> delayedFrees;
  };

  /// Whether `next` may join `group`: in place (no split), the same output
  /// positions, the same elements of every shared buffer, parameters within
  /// `max-parameter-bytes` (fitsKernelParameters), and only ops
  /// between them that the group's work may run after (`erased`: folded
  /// fills, which go; calls of the `gemm-callees` that touch nothing the
  /// group writes, and write nothing it reads). The frees to delay are
  /// added to the group.
  bool mayJoin(Group &group, const Lowering &next,
               const DenseSet<Operation *> &erased) {
    const Lowering &first = *group.members.front();
    Operation *last = group.members.back()->op;
    if (next.split != 1 || first.split != 1 ||
        next.op->getBlock() != last->getBlock() ||
        next.s.parallelSizes != first.s.parallelSizes ||
        !llvm::all_of(group.members, [&](const Lowering *m) {
          return sameElements(*m, next, distinctArguments);
        }))
      return false;
    SmallVector<Operation *> ops;
    SmallVector<Value> starts(next.starts);
    for (const Lowering *m : group.members) {
      ops.push_back(m->op);
      llvm::append_range(starts, m->starts);
    }
    ops.push_back(next.op);
    if (!fitsKernelParameters(ops, maxParameterBytes, starts))
      return false;
    auto groupViews = [&](Value buffer) {
      return llvm::any_of(group.members, [&](const Lowering *m) {
        return llvm::any_of(m->op->getOperands(), [&](Value v) {
          return mayAlias(v, buffer, distinctArguments);
        });
      });
    };
    auto groupWrites = [&](Value buffer) {
      return llvm::any_of(group.members, [&](const Lowering *m) {
        return llvm::any_of(
            linalg::LinalgOp(m->op).getDpsInits(),
            [&](Value v) { return mayAlias(v, buffer, distinctArguments); });
      });
    };
    SmallVector<Operation *> frees;
    for (Operation *p = last->getNextNode(); p != next.op;
         p = p->getNextNode()) {
      if (!p)
        return false;
      if (erased.contains(p))
        continue;
      Crossing c = classifyCrossing(*p, {groupViews, groupWrites}, gemmCallees);
      if (c == Crossing::Blocks)
        return false;
      if (c == Crossing::DelayFree)
        frees.push_back(p);
    }
    llvm::append_range(group.delayedFrees, frees);
    return true;
  }

  void runOnOperation() override {
    // Decided on the whole function before anything is lowered: which ops
    // are lowered here, which of their outputs start from a fill that only
    // they read (that fill is then erased, not lowered: one kernel less),
    // and which consecutive ops share one kernel.
    std::vector<Lowering> lowerings;
    DenseSet<Operation *> folded;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<Shape> s = shapeOf(op);
      if (!s)
        return;
      Lowering l{op, *s, {}, chooseSplit(op, *s)};
      for (OpOperand &init : op.getDpsInitsMutable()) {
        linalg::FillOp fill =
            isa<linalg::FillOp>(op)
                ? nullptr
                : getInitializingFill(op, init.get(),
                                      writesEveryElement(op, init));
        l.starts.push_back(fill ? fill.getInputs()[0] : Value());
        if (fill)
          folded.insert(fill);
      }
      lowerings.push_back(std::move(l));
    });
    std::vector<Group> groups;
    for (const Lowering &l : lowerings) {
      if (folded.contains(l.op))
        continue;
      // The latest of the last few groups it may join: the ops between (the
      // other groups' among them) must let that group's work run after
      // them.
      Group *joined = nullptr;
      for (size_t k = groups.size(), tried = 0;
           k > 0 && tried < kCandidateGroups && !joined; --k, ++tried)
        if (mayJoin(groups[k - 1], l, folded))
          joined = &groups[k - 1];
      if (joined)
        joined->members.push_back(&l);
      else
        groups.push_back({{&l}, {}});
    }
    IRRewriter rewriter(&getContext());
    for (Operation *fill : folded)
      rewriter.eraseOp(fill);
    for (Group &g : groups) {
      const Lowering &last = *g.members.back();
      rewriter.setInsertionPoint(last.op);
      SmallVector<scf::ForOp> toUnroll;
      if (last.split > 1)
        lowerSplit(rewriter, last, last.split, toUnroll);
      else
        lowerInPlace(rewriter, g.members, toUnroll);
      for (scf::ForOp loop : toUnroll)
        if (failed(loopUnrollByFactor(loop, kUnroll))) {
          loop.emitOpError("could not be unrolled");
          return signalPassFailure();
        }
      // A free another group delayed past its own last member already
      // follows this one's, or goes after it now.
      Operation *after = last.op;
      for (Operation *free : g.delayedFrees) {
        if (free->isBeforeInBlock(after))
          free->moveAfter(after);
        after = free;
      }
      for (const Lowering *m : g.members)
        rewriter.eraseOp(m->op);
    }
  }
};

} // namespace
