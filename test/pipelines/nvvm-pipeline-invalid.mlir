// Bad options of gacc-lower-to-nvvm-pipeline are errors, not a pipeline
// that silently does something else.
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="block-size=-5" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: gacc-lower-to-nvvm-pipeline: block-size must be in [1, 1024], got -5
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="format=bogus" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: gacc-lower-to-nvvm-pipeline: format must be isa, bin or fatbin, got 'bogus'
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="chip=sm_1" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: gacc-lower-to-nvvm-pipeline: chip must be an NVPTX target from sm_50 on
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="opt-level=7" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: gacc-lower-to-nvvm-pipeline: opt-level must be in [0, 3], got 7
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="cuda-graph=true resumable=true" 2>&1 | FileCheck %s --check-prefix=GRAPH
// GRAPH: error: gacc-lower-to-nvvm-pipeline: cuda-graph excludes resumable: the resumable functions' micro-batch bounds are host values that change from call to call
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="features=+bogus" 2>&1 | FileCheck %s --check-prefix=FEATURES
// FEATURES: error: gacc-lower-to-nvvm-pipeline: features must be PTX versions LLVM knows, as +ptxNN separated by commas (e.g. +ptx80, +ptx81), got '+bogus'
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="features=+ptx99" 2>&1 | FileCheck %s --check-prefix=PTX99
// PTX99: got '+ptx99'
// Given PTX features older than the chip's are an error, not LLVM's fatal
// one (the default +ptx80 is raised instead: emit-ptx.test).
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="chip=sm_90 features=+ptx70" 2>&1 | FileCheck %s --check-prefix=OLDPTX
// OLDPTX: error: gacc-lower-to-nvvm-pipeline: sm_90 needs PTX ISA 7.8 or later (features=+ptx78), got features '+ptx70'
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="chip=sm_100 features=+ptx80" 2>&1 | FileCheck %s --check-prefix=OLDPTX100
// OLDPTX100: error: gacc-lower-to-nvvm-pipeline: sm_100 needs PTX ISA 8.6 or later (features=+ptx86), got features '+ptx80'
// Options that refine another one given without it, and a negative window.
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="cublaslt" 2>&1 | FileCheck %s --check-prefix=LT
// LT: error: gacc-lower-to-nvvm-pipeline: cublaslt chooses cuBLASLt for the GEMMs that cublas sends to a library; give cublas too
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="cublas cublaslt-gelu" 2>&1 | FileCheck %s --check-prefix=GELU
// GELU: error: gacc-lower-to-nvvm-pipeline: cublaslt-gelu folds GELU into cuBLASLt's epilogues; give cublaslt (and cublas) too
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="defer-window-bytes=-1" 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: error: gacc-lower-to-nvvm-pipeline: defer-window-bytes must be >= 0, got -1
// A chip written with a leading zero is not one llc knows.
// RUN: not gacc-opt %s -gacc-lower-to-nvvm-pipeline="chip=sm_090" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: chip must be an NVPTX target from sm_50 on (e.g. sm_80, sm_90, sm_90a), got 'sm_090'
func.func @f() {
  return
}
