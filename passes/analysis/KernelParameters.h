//===- KernelParameters.h - what a kernel's launch passes -------*- C++ -*-===//
//
// The bytes of kernel parameters that ops become once lowered to one
// kernel and outlined (gpu-kernel-outlining): what the passes that put
// more work in one kernel (gacc-linalg-to-parallel-loops,
// gacc-merge-single-thread-loops) weigh against PTX's limit
// (kPtxKernelParameterBytes in passes/Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ANALYSIS_KERNELPARAMETERS_H
#define GACC_PASSES_ANALYSIS_KERNELPARAMETERS_H

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir::gacc {

/// Bytes of parameters that the tiling and the GPU mapping add to a kernel
/// for its own index arithmetic (four to seven index values in the NVVM
/// pipeline's kernels), kept free of the ops' own values.
constexpr uint64_t kLaunchIndexBytes = 128;

/// Bytes of kernel parameters for the values that `ops` take from outside
/// them (their operands, the values their regions use from above, and
/// `more`: values the lowering adds, null ones skipped), each counted once, as
/// the LLVM lowering passes them: a memref as its descriptor, two pointers, the
/// offset and a size and a stride per dimension ((3 + 2 · rank) · 8 bytes), any
/// other value as 8 bytes (at most what a scalar parameter takes). Values of
/// constant-like ops and values the ops define themselves are left out: the
/// outlining copies constants into the kernel.
uint64_t kernelParameterBytes(ArrayRef<Operation *> ops,
                              ArrayRef<Value> more = {});

/// Whether one kernel made of `ops` (and `more`) takes at most `maxBytes`
/// of parameters (kernelParameterBytes, with kLaunchIndexBytes to spare).
bool fitsKernelParameters(ArrayRef<Operation *> ops, int64_t maxBytes,
                          ArrayRef<Value> more = {});

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_KERNELPARAMETERS_H
