//===- StepArena.h - the memory of a CPU step's transient buffers -*- C++ -*-===//
//
// The step arena: one page-aligned mapping per thread that holds a
// compiled CPU step's activations and temporaries at the offsets
// gacc-place-transient-buffers chose (abi/RuntimeABI.h's kStepArena).
// Compiled code asks for it at the entry of each step; it grows when a
// function needs more and is otherwise handed back as it is.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_STEPARENA_H
#define GACC_RUNTIME_STEPARENA_H

#include <cstdint>

namespace gaccrt {

/// The descriptor of a memref<?xi8> (MLIR's StridedMemRefType<int8_t, 1>).
struct ByteBufferDescriptor {
  int8_t *allocated, *aligned;
  int64_t offset, size, stride;
};

/// The calling thread's arena, grown to at least `bytes` (page-aligned,
/// untouched pages not yet resident); null when the system refuses the
/// mapping or `bytes` exceed the machine's physical memory. What it held before
/// is gone when it grows.
void *reserveStepArena(uint64_t bytes);

/// Bytes of the calling thread's arena: mapped, and resident in memory
/// now (mincore); 0 without one.
uint64_t stepArenaBytes();
uint64_t stepArenaResidentBytes();

} // namespace gaccrt

extern "C" {
/// What compiled code calls (through MLIR's C interface for a memref
/// result): `result` becomes the arena as a memref<?xi8> of `bytes`. Prints
/// one line and exits with status 2 when the memory cannot be had (the
/// compiled code has no way to fail); the JIT binds a version that calls
/// gacc-run's handler instead.
void _mlir_ciface_gacc_step_arena(gaccrt::ByteBufferDescriptor *result,
                                  int64_t bytes);
}

#endif // GACC_RUNTIME_STEPARENA_H
