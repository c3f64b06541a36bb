// RUN: gacc-opt %s -split-input-file -gacc-place-transient-buffers | FileCheck %s

// A chain of buffers: b (32 floats, 128 bytes) is the largest and goes to
// offset 0; a (64 bytes) lives with b, so above it at 128; c is born after
// a's dealloc and lives with b, so it takes a's bytes at 128. The arena is
// 192 bytes, the most that is live at once. The deallocs go.
// CHECK:      func.func private @gacc_step_arena(index) -> memref<?xi8> attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @chain
// CHECK:      %[[BYTES:.+]] = arith.constant 192 : index
// CHECK-NEXT: %[[ARENA:.+]] = call @gacc_step_arena(%[[BYTES]]) : (index) -> memref<?xi8>
// CHECK:      %[[OA:.+]] = arith.constant 128 : index
// CHECK-NEXT: %[[A:.+]] = memref.view %[[ARENA]][%[[OA]]][] : memref<?xi8> to memref<16xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK:      %[[OB:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[B:.+]] = memref.view %[[ARENA]][%[[OB]]][] : memref<?xi8> to memref<32xf32>
// CHECK:      %[[OC:.+]] = arith.constant 128 : index
// CHECK-NEXT: %[[C:.+]] = memref.view %[[ARENA]][%[[OC]]][] : memref<?xi8> to memref<16xf32>
// CHECK-NOT:  memref.dealloc
// CHECK:      return
func.func @chain(%out: memref<16xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<16xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  %b0 = memref.subview %b[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  linalg.copy ins(%a : memref<16xf32>) outs(%b0 : memref<16xf32, strided<[1]>>)
  memref.dealloc %a : memref<16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.copy ins(%b0 : memref<16xf32, strided<[1]>>) outs(%c : memref<16xf32>)
  memref.dealloc %b : memref<32xf32>
  linalg.copy ins(%c : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %c : memref<16xf32>
  return
}

// -----

// A buffer of indices is sized by the data layout: 16 × 8 bytes for index
// (64 bits by default), 16 × 2 bytes for i16, in 64-byte blocks.
// CHECK-LABEL: func.func @index_elements
// CHECK:      %[[BYTES:.+]] = arith.constant 192 : index
// CHECK-NEXT: %[[ARENA:.+]] = call @gacc_step_arena(%[[BYTES]])
// CHECK:      memref.view %[[ARENA]][%{{.+}}][] : memref<?xi8> to memref<16xindex>
// CHECK:      memref.view %[[ARENA]][%{{.+}}][] : memref<?xi8> to memref<16xi16>
// CHECK-NOT:  memref.dealloc
func.func @index_elements(%out: memref<16xindex>, %out16: memref<16xi16>) {
  %c3 = arith.constant 3 : index
  %s = arith.constant 3 : i16
  %a = memref.alloc() : memref<16xindex>
  linalg.fill ins(%c3 : index) outs(%a : memref<16xindex>)
  %b = memref.alloc() : memref<16xi16>
  linalg.fill ins(%s : i16) outs(%b : memref<16xi16>)
  linalg.copy ins(%a : memref<16xindex>) outs(%out : memref<16xindex>)
  linalg.copy ins(%b : memref<16xi16>) outs(%out16 : memref<16xi16>)
  memref.dealloc %a : memref<16xindex>
  memref.dealloc %b : memref<16xi16>
  return
}

// -----

// A buffer of the loop body lives within an iteration; the one made before
// the loop and freed after it lives across every iteration: distinct
// offsets, 128 bytes in all. The arena is taken once, at the entry.
// CHECK-LABEL: func.func @loop
// CHECK:      %[[BYTES:.+]] = arith.constant 128 : index
// CHECK-NEXT: %[[ARENA:.+]] = call @gacc_step_arena(%[[BYTES]])
// CHECK:      %[[HELD:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<?xi8> to memref<16xf32>
// CHECK:      scf.for
// CHECK:        %[[O:.+]] = arith.constant 64 : index
// CHECK-NEXT:   memref.view %[[ARENA]][%[[O]]][] : memref<?xi8> to memref<16xf32>
// CHECK-NOT:  gacc_step_arena
// CHECK-NOT:  memref.dealloc
// CHECK:      return
func.func @loop(%out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %held = memref.alloc() : memref<16xf32>
  linalg.copy ins(%out : memref<16xf32>) outs(%held : memref<16xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc() : memref<16xf32>
    linalg.copy ins(%held : memref<16xf32>) outs(%t : memref<16xf32>)
    linalg.copy ins(%t : memref<16xf32>) outs(%out : memref<16xf32>)
    memref.dealloc %t : memref<16xf32>
  }
  memref.dealloc %held : memref<16xf32>
  return
}

// -----

// What the arena cannot hold keeps its allocation: a returned buffer (no
// dealloc), a dynamic shape, a buffer freed through a view of it. A
// function with nothing to place takes no arena.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:  gacc_step_arena
// CHECK:      memref.alloc() : memref<16xf32>
// CHECK:      memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:      memref.dealloc
// CHECK:      memref.alloc() : memref<4xf32>
// CHECK:      memref.dealloc
// CHECK-NOT:  gacc_step_arena
func.func @kept(%n: index) -> memref<16xf32> {
  %r = memref.alloc() : memref<16xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  %e = memref.alloc() : memref<4xf32>
  %v = memref.cast %e : memref<4xf32> to memref<?xf32>
  memref.dealloc %v : memref<?xf32>
  return %r : memref<16xf32>
}

// -----

// Only entry functions take the arena: not a private function, nor a
// public one the module calls (two such calls could be live at once).
// CHECK-NOT:  gacc_step_arena
// CHECK-LABEL: func.func private @helper
// CHECK:      memref.alloc
// CHECK-LABEL: func.func @called
// CHECK:      memref.alloc
// CHECK-NOT:  gacc_step_arena
func.func private @helper(%out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}

func.func @called(%out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}

func.func @calls(%out: memref<16xf32>) {
  call @helper(%out) : (memref<16xf32>) -> ()
  call @called(%out) : (memref<16xf32>) -> ()
  return
}

// -----

// A function that runs code from outside the module (here through a
// private function) takes no arena: the other module's step may take the
// same arena while this function's buffers are live.
// CHECK-NOT:  gacc_step_arena
// CHECK-LABEL: func.func @driver
// CHECK:      memref.alloc
// CHECK-NOT:  gacc_step_arena
func.func private @other_step(memref<16xf32>)

func.func private @wrapper(%b: memref<16xf32>) {
  call @other_step(%b) : (memref<16xf32>) -> ()
  return
}

func.func @driver(%out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  call @wrapper(%a) : (memref<16xf32>) -> ()
  linalg.copy ins(%a : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  return
}
