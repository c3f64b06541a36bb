//===- KernelOrder.h - a kernel's work past later ops -----------*- C++ -*-===//
//
// Fusing two kernels (two parallel loops, or two linalg ops lowered to
// one) runs the earlier one's work at the later one's place. What lies
// between them decides whether that is allowed: gacc-linalg-to-parallel-
// loops and gacc-merge-single-thread-loops ask the same question here.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_KERNELORDER_H
#define GACC_PASSES_ANALYSIS_KERNELORDER_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::gacc {

/// The buffer a memref value views (memref::skipViewLikeOps), or null for a
/// value that is not a memref.
Value bufferOf(Value v);

/// Whether memref values `a` and `b` may share memory: the same buffer
/// (bufferOf), or buffers that are not both known apart. Two buffers are
/// known apart when each is a memref.alloc or memref.alloca, or one is and
/// the other is an argument of the function (the caller's memory); a
/// function argument, a global, or an alias that is not a view op
/// (memref.transpose, a memref chosen by arith.select or carried by a loop)
/// may share memory with anything but an allocation. With
/// `distinctArguments` (abi::kDistinctArguments: the caller binds each
/// argument to memory of its own), two arguments are known apart too.
bool mayAlias(Value a, Value b, bool distinctArguments = false);

/// Whether `op` or an op nested in it has an operand that may view memory
/// of `buffer` (mayAlias, with `distinctArguments`).
bool touchesMemoryOf(Operation *op, Value buffer,
                     bool distinctArguments = false);

/// The buffers (bufferOf) that `op` and the ops nested in it read and
/// write (other effects, allocations and frees, count as writes), from
/// their memory effects (upstream getEffectsRecursively); allocations and
/// frees of buffers allocated inside `op` are left out. False when an
/// effect cannot be placed: an op whose effects are unknown, or an effect
/// on no value or on a value that is not a memref.
bool collectAccesses(Operation *op, SmallVectorImpl<Value> &reads,
                     SmallVectorImpl<Value> &writes);

/// What the earlier kernel's work touches, for classifyCrossing: whether it
/// may view memory of `buffer` (mayAlias with any of its operands), and
/// whether it may write it (with an output).
struct EarlierWork {
  function_ref<bool(Value buffer)> views;
  function_ref<bool(Value buffer)> writes;
};

/// How an op `between` an earlier kernel and a later one relates to running
/// the earlier kernel's work after it:
///   - Free: it allocates a buffer (the earlier work cannot use it), frees
///     one the earlier work does not view, has no memory effects, is an op
///     with regions (another kernel's loop) whose known memory effects
///     (upstream getEffectsRecursively) write nothing the earlier work
///     views and read nothing it writes, or is a call of one of
///     `gemmCallees` (the runtime's GEMM entry points, abi/RuntimeABI.h:
///     they read their first two memref operands A and B, read and write
///     the third, C, read or write any further one as
///     abi::gemmWritesMemref says (the bias of cuBLASLt's epilogue, the
///     GELU's input) and touch no other memory) under the same condition;
///   - DelayFree: it frees a buffer the earlier work views; the free must
///     move after the fused kernel (no op of the later kernel uses that
///     buffer, as none could after its free);
///   - Blocks: anything else (a host read, another call, a kernel that
///     conflicts or whose effects are unknown).
enum class Crossing { Free, DelayFree, Blocks };
Crossing classifyCrossing(Operation &between, const EarlierWork &earlier,
                          ArrayRef<std::string> gemmCallees = {});

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_KERNELORDER_H
