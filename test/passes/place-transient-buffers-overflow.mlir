// RUN: gacc-opt %s -split-input-file -gacc-place-transient-buffers | FileCheck %s

// A buffer whose size overflows 2^63 bytes stays on the heap (its size
// wrapped to 0, and the 4-element buffer's view overlapped it at offset 0).

// CHECK-LABEL: func.func @huge(
// CHECK: call @gacc_step_arena(%{{.+}}) : (index) -> memref<?xi8>
// CHECK: memref.alloc() : memref<4611686018427387904xf32>
// CHECK: memref.view %{{.+}} : memref<?xi8> to memref<4xf32>
func.func @huge() {
  %a = memref.alloc() : memref<4611686018427387904xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4611686018427387904xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// Four buffers of 2^62 bytes each fit one by one, but their sum passes
// 2^63 - 1: the arena's offsets would wrap (to a negative size, and views
// overlapping the small buffer), so no buffer is placed.

// CHECK-LABEL: func.func @sum_overflows(
// CHECK-NOT:   gacc_step_arena
// CHECK-COUNT-5: memref.alloc()
// CHECK-NOT:   memref.view
func.func @sum_overflows() {
  %a = memref.alloc() : memref<1152921504606846976xf32>
  %b = memref.alloc() : memref<1152921504606846976xf32>
  %c = memref.alloc() : memref<1152921504606846976xf32>
  %d = memref.alloc() : memref<1152921504606846976xf32>
  %e = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<1152921504606846976xf32>
  memref.dealloc %b : memref<1152921504606846976xf32>
  memref.dealloc %c : memref<1152921504606846976xf32>
  memref.dealloc %d : memref<1152921504606846976xf32>
  memref.dealloc %e : memref<4xf32>
  return
}
