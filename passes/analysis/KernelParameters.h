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
#include "mlir/IR/TypeRange.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

#include <cstdint>

namespace mlir::gacc {

/// Bytes of parameters kept free of the ops' own values: the index
/// arithmetic the tiling and the GPU mapping add (one index value per
/// kernel in the NVVM pipeline, where gpu-launch-sink-index-computations
/// sinks the constants), and the condition buffer gacc-device-resident-
/// scalars gives a kernel under a branch on a device scalar.
constexpr uint64_t kReservedParameterBytes = 128;

/// Bytes of kernel parameters for the values that `ops` take from outside
/// them (their operands, the values their regions use from above, and
/// `more`: values the lowering adds, null ones skipped), each counted once,
/// as the LLVM lowering passes them: a memref as its descriptor, two
/// pointers, the offset and a size and a stride per dimension
/// ((3 + 2 · rank) · 8 bytes), any other value as 24 bytes (a scalar the
/// host computes or receives per call becomes a rank-0 buffer's descriptor
/// in the graph form, gacc-device-resident-scalars; a scalar parameter
/// takes at most 8). Values of constant-like ops and values the ops define
/// themselves are left out: the NVVM pipeline's
/// gpu-launch-sink-index-computations copies constants into the kernel.
uint64_t kernelParameterBytes(ArrayRef<Operation *> ops,
                              ArrayRef<Value> more = {});

/// Bytes of parameters of a kernel (gpu.func) whose arguments have `types`,
/// as the LLVM lowering passes them and PTX lays them out: a memref as its
/// descriptor ((3 + 2 · rank) 8-byte fields); an integer, index, float or
/// fixed-size vector of B bytes (its bit width in `layout`: an index as 8
/// bytes unless the layout says otherwise) as the power of two at or above
/// B, aligned to that, as PTX lays it out (i64 8 bytes aligned to 8,
/// vector<3xf32> 16 aligned to 16); another type with a data layout (an LLVM
/// struct) at the size and ABI alignment `layout` gives it; any other type
/// (a scalable vector) as an 8-byte pointer. Each parameter starts at its
/// alignment.
uint64_t kernelArgumentBytes(TypeRange types, const DataLayout &layout);

/// Whether one kernel made of `ops` (and `more`) takes at most `maxBytes`
/// of parameters (kernelParameterBytes, with kReservedParameterBytes to
/// spare).
bool fitsKernelParameters(ArrayRef<Operation *> ops, int64_t maxBytes,
                          ArrayRef<Value> more = {});

} // namespace mlir::gacc

#endif // GACC_PASSES_ANALYSIS_KERNELPARAMETERS_H
