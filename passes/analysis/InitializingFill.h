//===- InitializingFill.h - the fill an op's output starts from -*- C++ -*-===//
//
// On buffers, bufferization leaves an op that reduces into (or accumulates
// onto) a fresh buffer behind a linalg.fill of that buffer with the
// reduction's identity: one more loop nest on the CPU, one more kernel on
// the GPU, for a value the op could start from in a register. This finds
// that fill, for the lowerings that fold it (convert-gacc-to-blas: a GEMM
// onto zeros is a GEMM with beta = 0; gacc-linalg-to-parallel-loops: a
// kernel whose threads start from the fill's value).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_INITIALIZINGFILL_H
#define GACC_PASSES_ANALYSIS_INITIALIZINGFILL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::gacc {

/// The linalg.fill whose values `op` reads from its output `init` (a memref
/// operand of `op`) and nothing else reads, or null. It is one when
///   - `init` is a view of a buffer allocated in the function
///     (memref.alloc or memref.alloca: no caller sees it);
///   - the fill is the last op of `op`'s block before `op` to touch that
///     buffer (ops between may touch only other buffers, or be views
///     without memory effects), and it fills `init` itself;
///   - no other operand of `op` may view memory of that buffer (mayAlias),
///     and no op between the fill and `op` has such an operand;
///   - the fill's value has the buffer's element type (it is `op`'s start
///     value as it is);
///   - `op` writes every element of `init` (`writesAll`, the caller's
///     claim), so that no later op reads the fill's values.
/// Then `op` may start from the fill's value instead of reading `init`,
/// and the fill may be erased.
linalg::FillOp getInitializingFill(Operation *op, Value init, bool writesAll);

/// Whether a linalg op on buffers writes every element of its output
/// `init`: static shapes, and the output's indexing map a permutation of
/// the op's parallel loops, whose sizes are the buffer's.
bool writesEveryElement(linalg::LinalgOp op, OpOperand &init);

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_INITIALIZINGFILL_H
