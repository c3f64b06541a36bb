// RUN: gacc-opt %s -gacc-place-transient-buffers -verify-diagnostics

// The runtime's name taken by another function: one error, nothing placed.
// expected-error @below {{@gacc_step_arena is the runtime's step arena, (index) -> memref<?xi8>}}
func.func private @gacc_step_arena(index) -> memref<?xf32>

func.func @step(%out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}
