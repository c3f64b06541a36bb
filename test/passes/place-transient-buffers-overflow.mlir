// RUN: gacc-opt %s -gacc-place-transient-buffers | FileCheck %s

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
