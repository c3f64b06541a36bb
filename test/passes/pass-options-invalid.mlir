// A pass option out of its range is one error naming the pass and the
// option, before the pass runs (its `initialize`), not silently taken.
// RUN: not gacc-opt %s -gacc-fuse-linear-cross-entropy=min-logits-bytes=-5 2>&1 | FileCheck %s --check-prefix=LOGITS
// LOGITS: error: gacc-fuse-linear-cross-entropy: option min-logits-bytes must be at least 0, got -5
// RUN: not gacc-opt %s -gacc-defer-weight-gradients=max-window-bytes=-1 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: error: gacc-defer-weight-gradients: option max-window-bytes must be at least 0, got -1
// RUN: not gacc-opt %s -gacc-defer-weight-gradients=launch-elements=-2 2>&1 | FileCheck %s --check-prefix=LAUNCH
// LAUNCH: error: gacc-defer-weight-gradients: option launch-elements must be at least 0, got -2
// RUN: not gacc-opt %s -gacc-merge-single-thread-loops=max-parameter-bytes=0 2>&1 | FileCheck %s --check-prefix=MERGE
// MERGE: error: gacc-merge-single-thread-loops: option max-parameter-bytes must be at least 1, got 0
// RUN: not gacc-opt %s -gacc-linalg-to-parallel-loops=max-parameter-bytes=-1 2>&1 | FileCheck %s --check-prefix=KERNELS
// KERNELS: error: gacc-linalg-to-parallel-loops: option max-parameter-bytes must be at least 1, got -1
// RUN: not gacc-opt %s -gacc-check-kernel-parameters=max-parameter-bytes=-1 2>&1 | FileCheck %s --check-prefix=CHECK-PARAMS
// CHECK-PARAMS: error: gacc-check-kernel-parameters: option max-parameter-bytes must be at least 1, got -1
// RUN: not gacc-opt %s -gacc-plan-memory=defer-window-bytes=-3 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: error: gacc-plan-memory: option defer-window-bytes must be at least 0, got -3
module {
}
