// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline=threads=2 | FileCheck %s
// RUN: gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline | FileCheck %s --check-prefix=SERIAL

// With threads=2 the step's large loops run on an OpenMP team of two
// (gacc-parallelize-loops, then upstream convert-scf-to-openmp): in
// fashion_mlp, the first layer's bias gradient (the column sums of its
// deferred [256, 256] output-gradient window, 65536 elements read) and the
// SGD update of the 256 x 784 weight (200704 elements).
// Each thread calls the outlined update with its slab's first row; the
// outlined function still takes whole buffers, marked noalias, so its
// loops vectorize as the serial step's do.
// CHECK-LABEL: llvm.func @fashion_mlp(
// CHECK: %[[TWO:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: omp.parallel num_threads(%[[TWO]] : i32) {
// CHECK: omp.terminator
// CHECK: omp.parallel num_threads(%[[TWO]] : i32) {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[SLAB:.+]]) : i64 =
// CHECK: llvm.call @[[UPDATE:fashion_mlp_generic_[0-9]+]]({{.*}}, %[[SLAB]], {{.*}})
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK: llvm.func @[[UPDATE]](%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr {llvm.noalias}
// CHECK-LABEL: llvm.func @fashion_mlp_predict(

// SERIAL-NOT: omp.

// A team of no threads is an error, not a serial pipeline.
// RUN: not gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline=threads=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: gacc-lower-to-cpu-pipeline: threads must be in [1, 1024], got 0
// RUN: not gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline=threads=2000 2>&1 | FileCheck %s --check-prefix=MANY
// MANY: error: gacc-lower-to-cpu-pipeline: threads must be in [1, 1024], got 2000
// RUN: not gacc-opt %gacc_src/examples/fashion_mlp.mlir -gacc-lower-to-cpu-pipeline=defer-window-bytes=-5 2>&1 | FileCheck %s --check-prefix=DEFER
// DEFER: error: gacc-lower-to-cpu-pipeline: defer-window-bytes must be >= 0, got -5
