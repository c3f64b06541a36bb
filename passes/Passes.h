//===- Passes.h - gacc passes -----------------------------------*- C++ -*-===//
//
// Declarations of every gacc pass (generated from Passes.td), their
// registration, and the pattern sets the conversion and fusion passes
// apply (for reuse in other pipelines).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_PASSES_H
#define GACC_PASSES_PASSES_H

#include "abi/RuntimeABI.h"
#include "dialect/GAccDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

/// For a pass's `initialize`: an error (at no location: an option has
/// none) naming `pass` and its option `name` when `value` is below `min`.
inline LogicalResult checkOptionAtLeast(MLIRContext *ctx, StringRef pass,
                                        StringRef name, int64_t value,
                                        int64_t min) {
  if (value >= min)
    return success();
  return emitError(UnknownLoc::get(ctx))
         << pass << ": option " << name << " must be at least " << min
         << ", got " << value;
}

/// The recomputation policies of gacc-recompute-activations and gacc-run's
/// --recompute: none, marked (the ops carrying kRecomputeAttrName), cheap
/// (also every forward op cheap to recompute).
enum class RecomputePolicy { None, Marked, Cheap };

/// The bytes of window buffers that one weight gradient computed once per
/// window may take (gacc-defer-weight-gradients' max-window-bytes, its
/// default): the CPU pipeline's and gacc-run's default.
inline constexpr int64_t kDeferWindowBytes = int64_t(64) << 20;

/// What one launch costs on the GPU in gacc-defer-weight-gradients' cost
/// model (its launch-elements on the cuda target), counted as fp32
/// elements moved: 2^21 elements (8 MiB) take about 2 µs of an H200's
/// 4.8 TB/s, the device time of a small kernel or GEMM node in a CUDA
/// graph. On the CPU a call costs next to nothing (0).
inline constexpr int64_t kGpuLaunchElements = int64_t(1) << 21;

/// The fp32 logits of one micro-batch from which a classifier head is fused
/// into its cross-entropy (gacc-fuse-linear-cross-entropy's
/// min-logits-bytes, its default): 64 MiB.
inline constexpr int64_t kFuseLogitsBytes = int64_t(64) << 20;

/// The most bytes of parameters a kernel may take in PTX before ISA 8.1
/// (ptxas: "Kernel parameter size larger than 4352 bytes requires PTX ISA
/// .version 8.1 or later"; the NVVM pipeline's default features are
/// +ptx80): the default limit of gacc-linalg-to-parallel-loops' fused
/// kernels and gacc-merge-single-thread-loops' merged ones.
inline constexpr int64_t kPtxKernelParameterBytes = 4352;

/// ... and from PTX ISA 8.1 on (CUDA 12.1, Volta and later).
inline constexpr int64_t kPtxIsa81KernelParameterBytes = 32764;

/// The most CPU threads a step's loops run on (the CPU pipeline's threads,
/// gacc-parallelize-loops' threads, gacc-run's --cpu-threads).
inline constexpr int64_t kMaxCpuThreads = 1024;

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The discardable unit attribute that marks a forward op of a training
/// step for recomputation in the backward (gacc-recompute-activations).
constexpr llvm::StringLiteral kRecomputeAttrName = "gacc.recompute";

/// The discardable attribute gacc-outline-linalg-ops puts on an outlined
/// function: the positions, in its LLVM signature, of the aligned pointers
/// of memref arguments that no other argument overlaps where one is
/// written (what gacc-mark-noalias-pointers marks `llvm.noalias` after
/// convert-func-to-llvm, which drops memref argument attributes).
constexpr llvm::StringLiteral kNoaliasPointersAttrName =
    "gacc.noalias_pointers";

/// The discardable attribute (a #gacc.precision) that gacc-mark-gemm-inputs
/// puts on a matrix product whose A and B operands hold values of that
/// precision: convert-gacc-to-blas passes it to cuBLASLt, which then
/// multiplies them on tensor cores.
constexpr llvm::StringLiteral kGemmInputsAttrName = "gacc.gemm_inputs";

/// Whether every memref operand of `op` is contiguous in its innermost
/// dimension, as cuBLAS and cuBLASLt read their operands
/// (convert-gacc-to-blas). On the CPU path an op with a strided innermost
/// access (a pooling window's tap) keeps its loops as they are: collapsed
/// into long loops (gacc-collapse-dimensions) or told that its buffers do
/// not overlap (gacc-outline-linalg-ops), LLVM vectorizes it with gathers,
/// measured 3 times slower than its scalar loops (docs/benchmarks.md).
bool hasUnitInnerStrides(Operation *op);

/// Parses "none", "marked" or "cheap".
std::optional<RecomputePolicy> parseRecomputePolicy(StringRef name);

/// Marks with kRecomputeAttrName every forward op of `step`'s body (before
/// the backward marker, or every op when the step is not differentiated
/// yet) that is cheap to recompute: a RecomputableOpInterface op that says
/// so, an elementwise op on tensors, a linalg op without reduction loops;
/// memory-effect free, not a loss, and keeping no more bytes alive than it
/// frees (its tensor operands defined by unmarked ops of the body, against
/// its results). Returns how many it marked.
unsigned markCheapRecomputation(TrainStepOp step);

/// What the to-buffers pipeline (buildTrainingStepToBuffersPipeline) does
/// beyond gacc-expand-accumulation's options, as the step that runs:
/// gacc-defer-weight-gradients within `deferWindowBytes` (0: none) with
/// launches worth `launchElements` (kGpuLaunchElements on the GPU), a
/// bf16/fp16 step's rounded values in fp32 tensors with `fp32Storage` (no
/// gacc-narrow-stored-values), attention as fused kernels with
/// `fusedAttention` (gacc-fuse-attention: the cuda target's cuDNN path).
/// (Set the fields by name: their order is not part of the interface.)
struct StepToBuffersOptions {
  int64_t deferWindowBytes = 0;
  int64_t launchElements = 0;
  bool fp32Storage = false;
  bool fusedAttention = false;
};

/// convert-gacc-to-linalg: every aggregated op outside a training step (the
/// gacc layer ops, linalg.softmax) replaced by its decomposition
/// (linalg::AggregatedOpInterface).
void populateGAccToLinalgConversionPatterns(RewritePatternSet &patterns);

/// convert-gacc-to-blas: memref gacc.matmul_accumulate and fp32 memref
/// linalg.matmul as calls of `callee` (abi::kSgemm, abi::kCublasSgemm or
/// abi::kCublasLtSgemm); with abi::kSgemm or abi::kCublasLtSgemm, fp32
/// memref linalg.batch_matmul as calls of abi::kSgemmBatched or
/// abi::kCublasLtSgemmBatched. cuBLASLt's calls pass the abi::GemmInputs of
/// the product's kGemmInputsAttrName (fp32 without it). With
/// abi::kCublasLtSgemm, a product's bias add and ReLU go into cuBLASLt's
/// epilogue, and with `geluEpilogues` a tanh GELU after the bias add and
/// the GELU's gradient after a data-gradient product too.
void populateGAccToBLASConversionPatterns(RewritePatternSet &patterns,
                                          StringRef callee,
                                          bool geluEpilogues = true);

/// convert-gacc-to-cudnn: memref gacc.fused_attention and
/// gacc.fused_attention_backward as calls of the runtime's cuDNN attention
/// (abi::cudnnAttention).
void populateGAccToCuDNNConversionPatterns(RewritePatternSet &patterns);

/// gacc-fuse-attention: in a bf16/fp16 step, gacc.attention and the
/// gacc.attention_backward reading it (or an attention alone) as
/// gacc.fused_attention and gacc.fused_attention_backward, where the head
/// size allows.
void populateFuseAttentionPatterns(RewritePatternSet &patterns);

/// convert-gacc-to-scf: memref gacc.matmul_accumulate as a parallel loop
/// nest.
void populateGAccToSCFConversionPatterns(RewritePatternSet &patterns);

/// convert-gacc-to-runtime: memref gacc.all_reduce as a call of the
/// runtime's collective.
void populateGAccToRuntimeConversionPatterns(RewritePatternSet &patterns);

/// gacc-fuse-accumulation: contraction-produced gradients written into
/// their accumulators (a GEMM when the contraction is one, otherwise the
/// contraction accumulating in place), the other accumulates and the
/// deferred updates as one elementwise kernel each.
void populateFuseAccumulationPatterns(RewritePatternSet &patterns);

/// gacc-fuse-linear-cross-entropy: gacc.cross_entropy of a single-use
/// gacc.linear whose fp32 logits take at least `minLogitsBytes`, as one
/// gacc.linear_cross_entropy.
void populateFuseLinearCrossEntropyPatterns(RewritePatternSet &patterns,
                                            int64_t minLogitsBytes);

/// gacc-strided-copies-to-linalg: memref.copy between buffers of which one
/// is strided, as linalg.copy.
void populateStridedCopiesToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::gacc

#endif // GACC_PASSES_PASSES_H
