// RUN: gacc-opt %s -split-input-file -gacc-mark-noalias-pointers -verify-diagnostics | FileCheck %s

// The pointer arguments recorded by gacc-outline-linalg-ops become
// llvm.noalias, and the record goes; a function without one is unchanged.

// CHECK-LABEL: llvm.func @outlined(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr {llvm.noalias}, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr {llvm.noalias}, %{{[^:]+}}: i64)
// CHECK-NOT: gacc.noalias_pointers
// CHECK-LABEL: llvm.func @plain(
// CHECK-SAME: %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
llvm.func @outlined(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64) attributes {gacc.noalias_pointers = array<i64: 1, 4>} {
  llvm.return
}
llvm.func @plain(%a0: !llvm.ptr, %a1: !llvm.ptr) {
  llvm.return
}

// -----

// A declaration (no body, no block arguments) is marked through its type
// (it crashed reading block arguments).

// CHECK-LABEL: llvm.func @declared(!llvm.ptr {llvm.noalias}, i64)
// CHECK-NOT: gacc.noalias_pointers
llvm.func @declared(!llvm.ptr, i64) attributes {gacc.noalias_pointers = array<i64: 0>}

// -----

// A record that names no pointer is an error, not a silent miscompile.
// expected-error @below {{argument 2 named by gacc.noalias_pointers is not a pointer argument}}
llvm.func @wrong(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64) attributes {gacc.noalias_pointers = array<i64: 2>} {
  llvm.return
}
