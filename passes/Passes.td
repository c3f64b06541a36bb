//===- Passes.td - gacc passes ------------------------------*- tablegen -*-===//
//
// Every gacc pass, grouped by level: gradient, accumulation, fusion,
// conversion and target. Pipelines are in Pipelines.h.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_TD
#define GACC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

def GAccSetAccumulationSchedulePass
    : Pass<"gacc-set-accumulation-schedule", "ModuleOp"> {
  let summary = "Re-specialize training steps for another micro-batch size "
                "and number of accumulation steps";
  let description = [{
    What gacc-run's `--micro-batch`, `--accum-steps` and `--data-parallel`
    do to the model before compiling it, as a pass, so that
    `gacc-opt -gacc-set-accumulation-schedule=...` prints the IR gacc-run
    compiles. For every `gacc.train_step`:

    - both options given: N = `accum-steps`, m = `micro-batch` (the
      effective batch becomes N × m);
    - `micro-batch` alone: m, and N = effective batch / m, which must
      divide exactly (the declared effective batch is kept);
    - `accum-steps` alone: N, and m = effective batch / N, likewise;
    - neither (0, the default): the model's schedule.

    With `ragged`, a `micro-batch` alone that does not divide the effective
    batch E is accepted: N = ceil(E / m) and the step keeps `effective_batch
    = E`, so the last micro-batch of each window holds E − (N − 1) · m
    samples and padding (what gacc-run's `--memory-budget` chooses).

    The body is re-typed for m (TrainStepOp::setSchedule): every input's
    leading dimension, and every op the samples reach, from its operands.
    A value no sample reaches keeps its type (a broadcast to 4 rows that
    the model sums stays 4 rows); where it meets the samples it is made
    again at their size if every position along the dimension that changes
    holds the same value (an empty tensor, a fill, a splat constant, a
    broadcast, an elementwise op of those). `data-parallel` sets the
    step's `data_parallel` unit attribute.

    ```mlir
    // -gacc-set-accumulation-schedule="micro-batch=64"
    gacc.train_step @s params [...] attributes {accum_steps = 8 : i64,
        micro_batch = 32 : i64, effective_batch = 256 : i64, ...}
    // becomes accum_steps = 4, micro_batch = 64, inputs tensor<64x784xf32>
    ```

    Errors: a negative option; a micro-batch or number of steps that does
    not divide the effective batch; a window of more than 2^24 samples; a
    body whose ops cannot be re-typed for m (an operand of a fixed size on
    the micro-batch's loop, a non-splat constant that meets the samples, a
    slice of part of the micro-batch; one error at the op, with the op's
    own reason where its verifier refuses the new types); a new schedule
    for a step already
    differentiated (it is set on the model, before gacc-autodiff).
  }];
  let options = [
    Option<"microBatch", "micro-batch", "uint64_t", /*default=*/"0",
           "Micro-batch size m (0: keep the model's)">,
    Option<"accumSteps", "accum-steps", "uint64_t", /*default=*/"0",
           "Accumulation steps N per optimizer step (0: keep the model's)">,
    Option<"dataParallel", "data-parallel", "bool", /*default=*/"false",
           "Mark the steps data-parallel (one all-reduce per optimizer "
           "step)">,
    Option<"ragged", "ragged", "bool", /*default=*/"false",
           "Accept a micro-batch that does not divide the effective batch: "
           "N = ceil(E / m), the last micro-batch of each window ragged">
  ];
}

def GAccPlanMemoryPass : Pass<"gacc-plan-memory", "ModuleOp"> {
  let summary = "Print the static peak-memory plan of each training step";
  let description = [{
    An analysis: the IR is not changed. For every `gacc.train_step`, a copy
    of the module is re-specialized for micro-batch `micro-batch` (0: the
    model's; N = ceil(effective batch / m), the last micro-batch ragged
    when m does not divide it), compiled through the to-buffers pipeline
    (autodiff, accumulation, fusion, bufferization, deallocation hoisted
    to each buffer's last use), and the step function's buffers are read
    over its ops. Printed to standard output as a table: the bytes of
    parameters, gradient accumulators, optimizer state, persistent
    statistics, the window's inputs (N × m samples), activations (written
    in the forward and live at `gacc.phase_begin backward`), temporaries
    and the target's workspace at the peak, the peak, and the op where it
    occurs (first reached) with its phase (setup, forward, backward or
    update: the last `gacc.phase_begin` before it, setup before the first)
    and source location.

    Bytes are the runtime's blocks: on `target=cpu` each buffer rounded up
    to 64 bytes, and as workspace the fp32 copies of a bf16/fp16 step's
    largest GEMM factors (OpenBLAS multiplies fp32; one pair per CPU
    thread that widens them, the plan counts one); on `target=cuda` each
    rounded up to the
    device arena's 256-byte blocks, scalars (8 bytes or less) in the
    1 MiB scalar pool, plus the 32 MiB cuBLAS workspace (abi/MemoryABI.h).
    One micro-batch of the loop stands for all N: the loop frees what it
    allocates.

    ```
    $ gacc-opt examples/fashion_mlp.mlir -gacc-plan-memory=micro-batch=32 -o /dev/null
    memory plan of @fashion_mlp on cpu: micro-batch 32 × 8 accumulation steps
      at the peak                               bytes        MiB
      parameters                               814144       0.78
      ...
      peak                                    3346048       3.19
      peak at linalg.generic in the backward (examples/fashion_mlp.mlir:21:8)
      ...
    ```

    Errors: a micro-batch the step cannot be re-typed for, a target other
    than cpu or cuda, a buffer without a static size.
  }];
  let options = [
    Option<"microBatch", "micro-batch", "uint64_t", /*default=*/"0",
           "Micro-batch size m to plan for (0: the model's)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Where the step runs: cpu or cuda">,
    Option<"deferWindowBytes", "defer-window-bytes", "int64_t",
           /*default=*/"0",
           "Plan the step with gacc-defer-weight-gradients and this "
           "max-window-bytes (0, the default: without it; gacc-run plans "
           "with the value of the step it compiles), its launch-elements "
           "the target's">,
    Option<"fp32Storage", "fp32-storage", "bool", /*default=*/"false",
           "Plan a bf16/fp16 step with its rounded values in fp32 tensors "
           "(without gacc-narrow-stored-values)">,
    Option<"fusedAttention", "fused-attention", "bool", /*default=*/"false",
           "Plan a bf16/fp16 step's attention as fused kernels "
           "(gacc-fuse-attention, gacc-run --cuda-attention=cudnn); their "
           "library workspace is not counted">
  ];
}

def GAccFuseLinearCrossEntropyPass
    : Pass<"gacc-fuse-linear-cross-entropy", "ModuleOp"> {
  let summary = "Fuse a large classifier head into its cross-entropy, "
                "computed in blocks of rows";
  let description = [{
    Rewrites `gacc.cross_entropy` of the logits of a `gacc.linear` that
    nothing else reads into one `gacc.linear_cross_entropy`, which computes
    the head and the loss over blocks of rows and recomputes each block's
    logits in its adjoint, so that no [rows, classes] tensor is kept from
    the forward to the backward or built whole in either. It pays where the
    logits are large (a language model's vocabulary: GPT-2's are 3.1 GiB
    per fp32 copy at 16 × 1024 tokens) and costs the head's product once
    more in the backward, so it applies only where one micro-batch's logits
    take at least `min-logits-bytes` (fp32). Runs before gacc-autodiff.

    ```mlir
    %z = gacc.linear %h, %w : tensor<16x1024x768xf32>, tensor<50304x768xf32> -> tensor<16x1024x50304xf32>
    %l = gacc.cross_entropy %z, %y : tensor<16x1024x50304xf32>, tensor<16x1024xi32> -> tensor<f32>
    // becomes
    %l = gacc.linear_cross_entropy %h, %w, %y : tensor<16x1024x768xf32>, tensor<50304x768xf32>, tensor<16x1024xi32> -> tensor<f32>
    ```
  }];
  let options = [
    Option<"minLogitsBytes", "min-logits-bytes", "int64_t",
           /*default=*/"::mlir::gacc::kFuseLogitsBytes",
           "Fuse only where one micro-batch's logits take at least these "
           "bytes (fp32); 0 fuses every head">
  ];
}

def GAccMaskBatchStatisticsPass
    : Pass<"gacc-mask-batch-statistics", "ModuleOp"> {
  let summary = "Keep the padding samples of a ragged micro-batch out of "
                "batch statistics";
  let description = [{
    A ragged micro-batch (the last of a window when m does not divide the
    effective batch, or any micro-batch of a short window at the end of an
    epoch) is padded to m rows whose targets are the loss's padding value
    (its ignore_index). Their loss and gradients are zero, but an op whose
    result depends on the whole batch (`gacc.batch_norm`) would count them
    in its statistics and change the normalization of every real sample.
    For each op implementing `BatchStatisticsOpInterface`, this pass sets
    a sample mask: a [m] f32 tensor, 1 for a sample with
    a target that is not the padding value (the loss op's targets and
    padding value, through `LossOpInterface`), built once per training step
    where the targets are defined. An op with a mask the model gives (a
    constant, an input: a padding row holds a copy of a real sample's
    inputs) gets the product of that mask and this one, so a padding row
    never counts. It runs before gacc-autodiff, so the gradients follow the
    masked statistics.

    ```mlir
    %n = gacc.batch_norm %x, %g, %b running(@m, @v) {...} : ...
    // becomes
    %mask = linalg.generic ... (%y != -100 ? 1 : 0 per row)
    %n = gacc.batch_norm %x, %g, %b mask %mask running(@m, @v) {...} : ...
    ```

    Errors: a yielded loss that is not produced by a loss op; an op whose
    input's dimension 0 is not the micro-batch size.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Gradient level
//===----------------------------------------------------------------------===//

def GAccAutodiffPass : Pass<"gacc-autodiff", "ModuleOp"> {
  let summary = "Reverse-mode gradients of each training step's body";
  let description = [{
    Differentiates the micro-batch body of every `gacc.train_step` with
    respect to each trainable parameter (not `frozen`) and appends the
    gradients to its `gacc.yield`. The loss adjoint is 1 (the body's loss is a sum over the
    micro-batch; normalization happens once, in the deferred update), or
    the run-time loss scale (`gacc.loss_scale`) with loss scaling. Ops are
    visited in reverse order; each builds the adjoints of its tensor
    operands through `DifferentiableOpInterface`, and adjoints of a value
    used several times are added (a contribution that is zero outside a
    slice, the adjoint of an `extract_slice` such as a convolution's or a
    pool's tap, is added into that slice only). Only values that depend on
    a trainable parameter get adjoints (no gradient of the input data or of
    a frozen parameter is computed).

    What it differentiates:
    - gacc's layer ops: their hand-written rules (losses, normalizations,
      relu's tie, gelu, embedding), or, for an op without one (gacc.linear),
      its decomposition (linalg::AggregatedOpInterface), built again after
      the forward ops; what the adjoints do not read is removed;
    - `arith` and `math` floating-point ops on tensors (addf, subf, mulf,
      divf, negf, maximumf, minimumf, select, extf, truncf, exp, log, log1p,
      tanh, sqrt, rsqrt, erf, powf, abs, sin, cos, …): the scalar
      derivative of each (`ScalarAdjointOpInterface`, PyTorch's formulas)
      applied elementwise;
    - `linalg.generic` and every named linalg op: the adjoint of an input
      is a `linalg.generic` over the same iteration space, its output
      indexed by the input's map (a projected permutation), the dimensions
      the input does not index becoming reductions; its body recomputes the
      op's body and applies the scalar rules in reverse. Reductions must be
      sums, maxima (ties share the adjoint, as torch.amax) or minima. Sums
      over reduced dimensions accumulate in f64 unless they are
      contractions (then f32, as a GEMM). `linalg.matmul` and
      `linalg.batch_matmul` keep matrix products in their adjoints (dW =
      op(A)ᵀ·dC, for `gacc-fuse-accumulation`); `linalg.softmax` has its
      closed form y ⊙ (dy − Σ dy ⊙ y);
    - `tensor` expand_shape, collapse_shape, cast, extract_slice,
      insert_slice, concat and pad with a constant.

    Before:
    ```mlir
    %y = gacc.linear %x, %w bias %b : ... -> tensor<32x10xf32>
    %l = gacc.cross_entropy %y, %t : ... -> tensor<f32>
    gacc.yield %l : tensor<f32>
    ```
    After:
    ```mlir
    ...
    %dy = linalg.generic ... // softmax − one-hot
    %dw = linalg.matmul indexing_maps = [...] ins(%dy, %x ...) outs(...)
    %db = linalg.generic ... // Σ_batch dy (f64), then rounded
    gacc.yield %l, %dw, %db : tensor<f32>, tensor<10x784xf32>, tensor<10xf32>
    ```

    Errors (each naming the op): an op on the path from a parameter to the
    loss that is not differentiable (the message lists what is); a body op
    without a scalar rule on that path; a needed operand whose indexing map
    is not a projected permutation; a reduction that is not a sum, maximum
    or minimum; a body reading a parameter-dependent value from above, or a
    parameter-dependent scalar operand (gradients flow through tensors); a
    pad with a non-constant value; a loss that does not depend on any
    parameter; a step that is already differentiated.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GAccRecomputeActivationsPass
    : Pass<"gacc-recompute-activations", "ModuleOp"> {
  let summary = "Recompute marked forward ops in the backward instead of "
                "keeping their outputs";
  let description = [{
    Activation recomputation (gradient checkpointing; Chen et al. 2016,
    "Training Deep Nets with Sublinear Memory Cost"; the selective form of
    Korthikanti et al. 2022). In every differentiated `gacc.train_step`, each
    forward op (before `gacc.phase_begin backward`) that carries the unit
    attribute `gacc.recompute` and whose results the backward reads is
    cloned into the backward, just before the first op there that reads
    it, and every backward use is redirected to the clone. Its results
    then die in the forward; only the inputs of the recomputed region
    (values of ops that are not recomputed, parameters, the micro-batch's
    inputs) stay live across the boundary. A chain of marked ops is
    recomputed together, so marking every op of a block (an MLP, an
    attention block) recomputes the block from its inputs; marking one op
    recomputes it alone. The inputs pass through `gacc.recompute_inputs`,
    which keeps CSE from merging the clones back.

    The clones compute the same values with the same ops in the same
    order, so gradients are bit-identical with and without recomputation;
    the backward does the marked ops' work a second time.

    Policies (option `policy`): `marked` (the default) recomputes the ops
    that carry the attribute; `none` recomputes nothing; `cheap` first
    marks every forward op that is cheap to recompute
    (`RecomputableOpInterface`: relu, gelu, layer_norm, embedding, the
    pools, group_norm; elementwise arith/math ops on tensors; linalg ops
    without reductions) unless the inputs it would keep alive (values of
    unmarked forward ops) hold more bytes than its results, and keeps the
    outputs of the rest (contractions, losses). gacc-run's `--recompute
    cheap` marks the model the same way. The marks are removed once used.
    Ops without operands and uses by the terminator (the loss the body
    yields) are not recomputed.

    ```mlir
    %h = gacc.linear %x, %w bias %b : ...
    %a = gacc.gelu %h {gacc.recompute} : tensor<16x128xf32>
    %y = gacc.linear %a, %w2 : ...
    gacc.phase_begin backward
    ...                                  // backward reads of %a become:
    %h2 = gacc.recompute_inputs %h : tensor<16x128xf32>
    %a2 = gacc.gelu %h2 : tensor<16x128xf32>
    ```

    Errors: a marked op with memory effects (it names the op).
  }];
  let options = [
    Option<"policy", "policy", "::mlir::gacc::RecomputePolicy",
           /*default=*/"::mlir::gacc::RecomputePolicy::Marked",
           "Which forward ops to recompute",
           [{::llvm::cl::values(
             clEnumValN(::mlir::gacc::RecomputePolicy::None, "none",
                        "none (marks ignored)"),
             clEnumValN(::mlir::gacc::RecomputePolicy::Marked, "marked",
                        "the ops carrying gacc.recompute"),
             clEnumValN(::mlir::gacc::RecomputePolicy::Cheap, "cheap",
                        "also every op cheap to recompute whose kept "
                        "inputs are no larger than its outputs"))}]>
  ];
}

//===----------------------------------------------------------------------===//
// Accumulation level
//===----------------------------------------------------------------------===//

def GAccExpandAccumulationPass
    : Pass<"gacc-expand-accumulation", "ModuleOp"> {
  let summary = "Build the micro-batch loop, accumulators and deferred update";
  let description = [{
    Replaces every differentiated `gacc.train_step @S` by two functions.

    `func.func @S(params…, accumulators…, optimizer state…, running
    statistics…, inputs…, %lr: f32, %step: i64, %first_sample: i64[,
    %loss_scale: f32]) -> (f32, f32, f32, f32[, f32])` runs one optimizer
    step (the calling convention of abi/StepABI.h). All state is passed as memrefs owned by
    the caller and allocated once for the program (argument attributes
    `gacc.param`, `gacc.accumulator`, `gacc.optimizer_state`,
    `gacc.statistic`): accumulators persist across optimizer steps and
    are never zeroed. Only trainable parameters have accumulators and
    optimizer state; a `frozen` one is read only. Each input holds the whole window: a leading dimension
    N (accum_steps) before the micro-batch's own shape. The body runs in an
    `scf.for` over the N micro-batches (fully unrolled with `unroll`); each
    parameter gradient enters its accumulator through `gacc.accumulate`,
    whose `first` flag is true on the window's first micro-batch (it
    writes; later ones add). Each micro-batch also adds its normalization
    count, read from its targets by the loss op (`mean`: samples with a
    target that is not ignored; `token_mean`: targets that are not
    ignored; `sum`: none, the count is 1), so the count is a run-time
    value of what the window really holds, with no look-ahead at its
    labels. After the loop, one `gacc.apply_optimizer` per parameter divides
    the accumulated sum once by that count (at least 1), so a short last
    window and unequal micro-batches are exact; nothing else divides. The
    function returns the window's objective, Σ loss / count (the loss whose
    gradient was applied), the count, the learning rate used and the
    pre-clip global gradient norm. Each micro-batch starts with
    `gacc.phase_begin forward` and the optimizer step with
    `gacc.phase_begin update`, so the memory plan tells the phases apart
    also where canonicalization folds a single micro-batch's loop.

    Once per optimizer step, never per micro-batch: the learning rate of
    `lr_schedule` is computed from `%step`; the global L2 norm of the
    normalized accumulated gradient (f64 sums) gives the `max_grad_norm`
    clipping coefficient. With `precision` bf16/fp16 the body reads a copy
    of the parameters rounded once before the loop, and inputs and
    intermediates are rounded where they are produced; gradients entering
    the accumulators stay fp32, and so does every value that reaches
    nothing but a gradient through ops that only move or sum values
    (tensor reshapes, slices and concatenations, linalg.transpose, the sum
    of two adjoint contributions): a convolution's weight gradient, a
    product expanded to OIHW, is not rounded before it is accumulated. The
    functions whose micro-batches compute
    so carry `gacc.compute_precision = #gacc.precision<bf16>` (or `fp16`),
    from which gacc-mark-gemm-inputs proves which matrix products read
    values of that precision only (to run them on tensor cores). With loss
    scaling a last argument carries the scale (the reverse pass's seed,
    `gacc.loss_scale`), the update divides by count · scale and runs only
    if the norm is finite; otherwise
    the accumulators are zeroed, the parameters kept, and a fifth result
    reports the skip.

    Running statistics (`gacc.statistic`, named by ops implementing
    `BatchStatisticsOpInterface`) are loop-carried: a `per_micro_batch`
    `gacc.batch_norm` moves them after each micro-batch (torch's momentum
    rule, the unbiased variance); a `per_window` one carries the window's
    count, mean and M2, combined per micro-batch by Chan, Golub and
    LeVeque's formula, and moves them once after the loop. A micro-batch of
    padding only moves nothing. They are written back into their arguments.

    Random ops (`RandomOpInterface`: `gacc.dropout`) get their key in every
    micro-batch's clone: the step's `seed` (a constant), `%step`, and the
    global index of the micro-batch's first sample, `%first_sample` + i·m;
    an op and its adjoint (or recomputed clone) get the same key, so they
    draw the same mask, and N × m draws what 1 × (N·m) draws.

    `func.func @S_predict(params…, running statistics…, inputs…, %out)`
    writes the model output (the loss op's prediction, LossOpInterface) for one
    micro-batch into `%out`, in evaluation: an op with batch statistics
    normalizes by the running statistics, a random op draws nothing
    (`buildInference`; dropout passes its input).

    With `resumable`, the step is also built split at micro-batch
    boundaries, for checkpoints in the middle of a window (gacc-run
    --checkpoint-dir): `func.func @S_accumulate(@S's arguments, %begin: i64,
    %end: i64, %loss_sum: f32, %count: f32) -> (f32, f32)` runs
    micro-batches [begin, end) of the window (the same loop body, `first`
    still i == 0) from the window's sums so far and returns them updated;
    `func.func @S_update(@S's arguments, %loss_sum: f32, %count: f32)`
    runs what follows the N-th micro-batch and returns @S's results.
    @S_accumulate(0, N, 0, 0) then @S_update computes @S's values with the
    same operations in the same order.

    ```mlir
    func.func @train(%w: memref<10x784xf32> {gacc.param = @w}, ...,
                     %acc_w: memref<10x784xf32> {gacc.accumulator = @w}, ...,
                     %x: memref<8x32x784xf32>, %y: memref<8x32xi32>,
                     %lr: f32, %step: i64) -> (f32, f32, f32, f32) {
      %r:6 = scf.for %i = %c0 to %c8 step %c1 iter_args(...) {
        %first = arith.cmpi eq, %i, %c0 : index
        gacc.phase_begin forward
        ... body (its gacc.phase_begin backward among it) ...
        %a = gacc.accumulate %dw into %acc first %first : tensor<10x784xf32>
      }
      gacc.phase_begin update
      %p1 = gacc.apply_optimizer #gacc.sgd<lr = 0.05> param(%p) accumulator(%a) count(%count) lr(%lr) step(%step) ...
      bufferization.materialize_in_destination %p1 in restrict writable %w ...
    }
    ```

    With `ema_decay`, each parameter's last state tensor is its moving
    average, updated after the optimizer: ema · d + param · (1 − d), in the
    same branch as the update (a skipped fp16 window keeps it).

    Errors: a step not yet differentiated (run gacc-autodiff first); a loss
    not produced by a loss op; `ema_decay` with `arena-update`;
    `per_window` batch statistics with `resumable` or in a data-parallel
    step (not supported yet).
  }];
  let options = [
    Option<"unroll", "unroll", "bool", /*default=*/"false",
           "Fully unroll the micro-batch loop instead of emitting scf.for">,
    Option<"arenaUpdate", "arena-update", "bool", /*default=*/"false",
           "Leave the update to the arena kernels of "
           "gacc-build-arena-kernels, which the runtime calls after the "
           "step over its parameter, accumulator and state arenas: the step "
           "stops after the accumulators (all-reduced when data-parallel), "
           "the count, the rate and the norm">,
    Option<"resumable", "resumable", "bool", /*default=*/"false",
           "Also build @S_accumulate and @S_update: the step split at "
           "micro-batch boundaries, so that a run can stop (and resume) in "
           "the middle of a window">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion level
//===----------------------------------------------------------------------===//

def GAccDeferWeightGradientsPass
    : Pass<"gacc-defer-weight-gradients", "ModuleOp"> {
  let summary = "Compute a weight gradient once per window instead of "
                "accumulating it per micro-batch, where that moves fewer "
                "bytes";
  let description = [{
    Runs after `gacc-fuse-accumulation`. A weight gradient of a linear
    layer accumulated in the micro-batch loop,
    `gacc.matmul_accumulate %dy, %x into %acc first (i == lb) {transpose_a}`
    with `%dy` [m, M] and `%x` [m, K] per micro-batch and `%acc` [M, K]
    carried by the loop, costs the window (N micro-batches) one GEMM with
    an inner dimension of m per micro-batch, each reading and writing the
    whole accumulator. Its alternative: keep `%dy` and `%x` of every
    micro-batch in window buffers [N·m, M] and [N·m, K] (rows
    [i·m, (i + 1)·m) for micro-batch i) and compute the gradient once
    after the loop, one GEMM with inner dimension N·m and β = 0 into the
    accumulator. The sum is the same: Σ_i dy_iᵀ·x_i = DYᵀ·X.

    The cost model counts the elements each way moves per window:
    accumulating, (2N − 1)·M·K (the accumulator written by the first
    micro-batch, read and written by the others); deferring,
    2·N·m·(M + K) + M·K (the operand rows written to the window and read
    back, the accumulator written once). Each launch adds
    `launch-elements` (0 on the CPU; on the GPU kGpuLaunchElements, 2^21,
    about the device time of a small kernel in a CUDA graph): N GEMMs
    accumulating; deferring, one GEMM and N copies per operand that is
    neither a window input's slice nor computed in the loop by an op
    writing a fresh tensor (empty-tensor elimination builds such an
    operand in its window rows, with no copy). On the GPU a weight
    gradient of a few thousand elements (fashion_mlp's 10 × 256) is then
    deferred too. The pass defers where deferring costs
    less, and where its window buffers, N·m·(M + K)·4 bytes (both
    operands counted, copied or not; the limit is per weight gradient),
    fit in `max-window-bytes`: a small
    micro-batch and a wide layer (fashion_mlp's 784 × 256 layer at
    m = 8: about 12.6 M elements against 0.7 M), not a micro-batch of
    thousands of tokens. An operand that is already a slice of a window
    input (`tensor.extract_slice %in[i, 0, 0] [1, m, K]` of an
    [N, m, K] tensor from before the loop) is not copied: the product reads
    the input collapsed to [N·m, K].

    A bias gradient accumulated in the loop as the column sums of a
    deferred product's operand (`first ? g : acc + g` of g = the sums over
    dimension 0 of `%dy` [m, M] from a zero fill, in f64 truncated to f32
    or in f32) is computed once after the loop too, as the column sums of
    `%dy`'s window: one reduction over N·m rows instead of one per
    micro-batch and an accumulate (in f64 the whole window's sum is rounded
    once).

    The window buffers are loop-carried tensors, so bufferization and the
    memory plan see them (they live across the loop, like the
    accumulators). The choice shows in the IR: the accumulator passes
    through the loop unchanged, and its `gacc.matmul_accumulate` follows
    the loop with `first` true.

    A product of a bf16/fp16 step's rounded values keeps accumulating
    (unless `narrow-storage` is false): gacc-narrow-stored-values stores
    its operands in the compute type for tensor-core GEMMs, which fp32
    window buffers would undo.

    Applies only to `scf.for` loops with a static trip count of at least
    2 whose accumulator restarts at the first iteration (`first` is
    `iv == lb`: not a resumable window that spans calls), to products with
    `transpose_a` and without `transpose_b`, static shapes, and an
    accumulator that only this product updates in the loop.

    ```mlir
    %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %acc0) -> ... {
      %first = arith.cmpi eq, %i, %c0 : index
      %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : ...
      scf.yield %a : tensor<256x784xf32>
    }
    // becomes
    %r:2 = scf.for %i = ... iter_args(%acc = %acc0, %w = %empty) -> ... {
      %row = arith.muli %i, %c32 : index
      %w1 = tensor.insert_slice %dy into %w[%row, 0] [32, 256] [1, 1] : ...
      scf.yield %acc, %w1 : ...
    }
    %a = gacc.matmul_accumulate %r#1, %xs into %r#0 first %true {transpose_a} : ...
    ```

    Errors: none; what does not match stays as it is.
  }];
  let options = [
    Option<"maxWindowBytes", "max-window-bytes", "int64_t",
           /*default=*/"::mlir::gacc::kDeferWindowBytes",
           "Bytes that the window buffers of one deferred weight gradient "
           "may take at most">,
    Option<"launchElements", "launch-elements", "int64_t", /*default=*/"0",
           "What one launch (a GEMM, a copy kernel) costs in the model, "
           "as fp32 elements moved: 0 on the CPU, 2^21 "
           "(kGpuLaunchElements) on the GPU">,
    Option<"narrowStorage", "narrow-storage", "bool", /*default=*/"true",
           "A bf16/fp16 step's rounded values are stored in the compute "
           "type (gacc-narrow-stored-values runs): products of them keep "
           "accumulating. False with fp32-storage">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GAccFuseAccumulationPass
    : Pass<"gacc-fuse-accumulation", "ModuleOp"> {
  let summary = "Fuse the accumulation into the gradient contractions and the "
                "update into one kernel per parameter";
  let description = [{
    Rewrite patterns (`populateFuseAccumulationPatterns`) on the output of
    gacc-expand-accumulation:

    1. `gacc.accumulate` of a gradient produced by a zero-initialized f32
       contraction (`linalg.matmul` in any transposition, a
       `linalg.generic` contraction, a batch matmul whose weight is shared
       by the batch) that is one matrix product of consecutive dimension
       groups becomes one `gacc.matmul_accumulate` on the operands
       collapsed to matrices, writing the product straight into the
       accumulator (β = 0 on the first micro-batch, 1 afterwards): no
       temporary gradient tensor remains.
    2. Any other such contraction (a batched one) accumulates in place: its
       init becomes the accumulator, and its body starts from 0 instead of
       the accumulator's old value at the first reduction point of the
       window's first micro-batch (no zero-fill).
    3. Every other `gacc.accumulate` becomes one elementwise
       `linalg.generic` (`first ? g : acc + g`).
    4. Every `gacc.apply_optimizer` becomes one `linalg.generic` that reads
       the accumulator, parameter and optimizer state once and writes the
       parameter and state: the division by the count (times the loss
       scale), the clipping coefficient and the optimizer's own element
       update (OptimizerAttrInterface: SGD, Adam, AdamW, Lion, with weight
       decay unless the parameter has none) are folded in.

    Before:
    ```mlir
    %dw = linalg.matmul indexing_maps = [...] ins(%dy, %x : ...) outs(%zero : ...)
    %a = gacc.accumulate %dw into %acc first %first : tensor<10x784xf32>
    ```
    After:
    ```mlir
    %a = gacc.matmul_accumulate %dy, %x into %acc first %first {transpose_a} : ...
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GAccBuildArenaKernelsPass
    : Pass<"gacc-build-arena-kernels", "ModuleOp"> {
  let summary = "Build the multi-tensor accumulate, sum-of-squares and "
                "update kernels over flat arenas";
  let description = [{
    For each `gacc.train_step @S`, adds to the module the kernels of the GPU
    path that work on flat arenas: one buffer each for the parameters, the
    accumulators and every optimizer-state slot, with all tensors of the
    step stored contiguously in one order (the parameters with weight decay
    first), each padded to 16 bytes, so the length is a multiple of 4 and
    one launch covers every tensor (the multi-tensor-apply idea of NVIDIA
    Apex). The functions are plain `scf.parallel` loops on memrefs: the CPU
    pipeline runs them (which is how their semantics are tested) and the
    NVVM pipeline turns each loop into one kernel.

    - `@S_accumulate_arena_<t>(acc: memref<?xf32>, grad: memref<?x t>,
      weight: f32, first: i32, nonfinite: memref<1xi32>)`, t = f32, plus
      bf16 or f16 for a step with that `precision`: acc = w·g when
      `first` ≠ 0 (β = 0: the old contents are not read, so no zero-fill
      exists), acc = acc + w·g otherwise, in fp32 (a low-precision gradient
      is widened, never the accumulator narrowed), 4 elements per thread
      with 16-byte vector loads and stores of the accumulator; sets
      nonfinite[0] = 1 when a result is ±inf or NaN (dynamic loss
      scaling watches the whole window). Length: a multiple of 4.
    - `@S_sum_squares_arena(acc, partials: memref<65792xf64>, result:
      memref<1xf64>)`: Σ acc² in f64 in three stages (65536 threads with
      fixed strided subsets, 256 sums of 256, one sum of 256), each in a
      fixed order: the same bits on every run, whatever the scheduling.
    - `@S_update_arena(param, acc, state…: memref<?xf32>, decay_end: index,
      count: memref<1xf32>, sum_squares: memref<1xf64>, nonfinite:
      memref<1xi32>, lr: f32, step: i64, loss_scale: f32)`: one pass that
      reads accumulator, parameter and state once and writes parameter and
      state. Inside: the skip of a window with nonfinite[0] ≠ 0 (nothing is
      written), the one division by max(count, 1) · loss_scale, the clipping
      coefficient min(1, max_grad_norm / (‖g‖ + 1e-6)) with ‖g‖ =
      sqrt(sum_squares) / divisor (torch.nn.utils.clip_grad_norm_), the
      learning-rate schedule at `step`, and the optimizer's element rule
      (OptimizerAttrInterface), with weight decay for elements below
      `decay_end`. Four elements per thread with 16-byte loads and stores
      (length: a multiple of 4); what depends on the step alone (the bias
      corrections β^t, the scheduled learning rate) is computed before the
      element loop, so once per step by the host code.

    Kernels per optimizer step on the GPU: N accumulates (one per
    micro-batch, for the gradients no GEMM wrote), 3 for the norm when the
    step clips, 1 update.

    Errors: a step whose arena kernels (any of the names above) already
    exist.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

def ConvertGAccToLinalgPass : Pass<"convert-gacc-to-linalg", "ModuleOp"> {
  let summary = "Lower the gacc layer ops to linalg, tensor, arith and math";
  let description = [{
    Replaces every aggregated op (linalg::AggregatedOpInterface) outside a
    `gacc.train_step`, i.e. after gacc-expand-accumulation, by its
    decomposition: the gacc layer ops (`gacc.linear`: a linalg.matmul with
    the weight transposed plus a broadcast bias add, leading dimensions
    flattened; `gacc.relu`, `gacc.gelu`: elementwise generics;
    `gacc.layer_norm`: row statistics then one elementwise kernel;
    `gacc.embedding`: a gather; `gacc.cross_entropy`: stable log-sum-exp
    reductions; `gacc.dropout`: its Philox mask from each element's indices
    and the key) and upstream's `linalg.softmax`, which no loop lowering
    takes. One conversion pattern (`populateGAccToLinalgConversionPatterns`)
    applied with a ConversionTarget on which every aggregated op is
    illegal: an op whose decomposition fails is an error. The formulas are
    those of the adjoints (dialect/LinalgBuilders.h).

    A `gacc.train_step` is left as it is, with a warning saying so.

    Errors: a random op (RandomOpInterface) without the key that
    gacc-expand-accumulation binds; an op whose decomposition fails.

    ```mlir
    %y = gacc.linear %x, %w : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
    // becomes
    %y = linalg.matmul indexing_maps = [...] ins(%x, %w : ...) outs(%zero : ...)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvertGAccToCuDNNPass : Pass<"convert-gacc-to-cudnn", "ModuleOp"> {
  let summary = "Lower memref fused attention kernels to cuDNN calls of the "
                "runtime";
  let description = [{
    After bufferization, rewrites `gacc.fused_attention` and
    `gacc.fused_attention_backward` on memrefs into calls of
    `gacc_cudnn_attention_forward_bf16` (`_f16`) and
    `gacc_cudnn_attention_backward_bf16` (`_f16`) (abi::cudnnAttention),
    which run cuDNN's fused scaled-dot-product attention
    (runtime/CudnnAttention.h: cudnn-frontend's SDPA graphs, libcudnn
    opened at run time, plans built once per shape). Arguments: the
    operands in order, each cast to a rank-4 memref of dynamic sizes and
    strides, then the scale (f32) and the causal flag (i32). The patterns
    (`populateGAccToCuDNNConversionPatterns`) are applied with a
    ConversionTarget on which both ops are illegal: a tensor form left
    here is an error. The calls queue on the process's stream like the
    GEMMs' (gacc-async-launches orders them without a wait).

    ```mlir
    gacc.fused_attention %q, %k, %v into %o, %l {causal, scale = 0.125 : f64} : memref<2x4x128x32xbf16, strided<...>>, ... into memref<2x4x128x32xbf16>, memref<2x4x128x1xf32>
    // becomes
    call @gacc_cudnn_attention_forward_bf16(%q', %k', %v', %o', %l', %scale, %causal) : (memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, ...) -> ()
    ```

    Errors, at the op: every kernel with a buffer the entry point cannot
    take (another memory space, a layout that is not strided), each once,
    before anything is converted; an entry point's name taken by a
    function of another type.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ConvertGAccToBLASPass : Pass<"convert-gacc-to-blas", "ModuleOp"> {
  let summary = "Lower memref matmuls to cblas_sgemm calls of the runtime";
  let description = [{
    After bufferization, rewrites `gacc.matmul_accumulate` (β = first ? 0 :
    1) and fp32 `linalg.matmul` on memrefs (C += A·B, β = 1) into calls of
    `gacc_sgemm`, a runtime function (runtime/Blas.cpp) that calls
    OpenBLAS's `cblas_sgemm` with the operands' strides, or (`callee =
    gacc_cublas_sgemm`, for host code of the NVVM pipeline) cuBLAS's
    `cublasSgemm` on device memory (runtime/CudaMemory.cpp, libcublas opened
    at run time), or (`callee = gacc_cublaslt_sgemm`) cuBLASLt's
    `cublasLtMatmul`, its descriptors and algorithm chosen once per
    shape (runtime/CublasLt.h), all with the same beta
    semantics (names from abi/RuntimeABI.h). The conversion patterns
    (`populateGAccToBLASConversionPatterns`) are applied with a
    ConversionTarget on which both memref forms are illegal. OpenBLAS is the
    project's choice for CPU GEMMs: accumulate-into (beta = 1) is part of
    the BLAS contract, and with beta = 0 BLAS never reads C, so the first
    micro-batch writes its accumulator without a zero-fill. For the same
    reason a `linalg.matmul` into a fresh buffer that a `linalg.fill` with
    zeros set for it alone (`getInitializingFill`: the fill is the last op
    of the block to touch the `memref.alloc` before the product, which no
    other operand views) becomes a call with β = 0, and the fill is erased:
    no zero-fill kernel (or loop) before the GEMM.

    With `gacc_sgemm`, an fp32 `linalg.batch_matmul` on memrefs whose maps
    are a plain product per batch index (either operand may be transposed
    through its map, as the adjoints of attention's products are) becomes a
    call of `gacc_sgemm_batched`: one `cblas_sgemm` per matrix of the batch
    (C[b] += op(A[b])·op(B[b]), β = 1); with `gacc_cublaslt_sgemm` it
    becomes one strided batched `cublasLtMatmul`
    (`gacc_cublaslt_sgemm_batched`). With `gacc_cublas_sgemm` batch
    products stay loops.

    cuBLASLt's calls take one more argument, `inputs` (abi::GemmInputs):
    what the fp32 operands hold. A product that gacc-mark-gemm-inputs marks
    `gacc.gemm_inputs = #gacc.precision<bf16>` (or `fp16`) has operands
    that hold bf16 (fp16) values: cuBLASLt then computes with
    `CUBLAS_COMPUTE_32F_FAST_16BF` (`_16F`), on tensor cores, which round
    the inputs to that format (exactly, for such values) and sum the
    products in fp32. Any other product passes fp32 (`CUBLAS_COMPUTE_32F`).

    With `gacc_cublaslt_sgemm`, a linear layer's forward is one call: an
    fp32 `linalg.matmul` whose next op with memory effects is an
    elementwise `linalg.generic` over its C that adds a packed bias by
    column (C[i, j] += bias[j]) becomes a call of
    `gacc_cublaslt_sgemm_epilogue` with cuBLASLt's BIAS epilogue
    (abi::GemmEpilogue `bias`), which adds the bias as it writes C. When the
    generic also writes max(C[i, j] + bias[j], 0) to a second output Y
    (`gacc.relu`, which gacc-fuse-elementwise joins to the bias add), zeros
    start C and C is a buffer nothing else reads (the ReLU's adjoint reads
    Y), the call uses RELU_BIAS and writes Y: C's buffer goes with the
    product. Y must be apart from the operands (`mayAlias`). cuBLASLt
    documents the epilogue as D = relu(α·op(A)·op(B) + β·C + bias), the
    order of the ops it replaces; its ReLU is documented as max(x, 0)
    without a word on NaN, which `arith.maximumf` keeps and a GPU's fmaxf
    turns into 0: a NaN pre-activation (from a NaN or infinite input or
    weight) may become 0 in the activation, where the generic would pass it
    on. fp16 steps, whose loss scaling must see an overflow's infinities
    turn into NaN, take no epilogue. The generic's payload must be pure,
    C's other users only the product, its zero fill and frees.

    A bf16 step's linear layer (bf16 operands and bias after
    gacc-narrow-stored-values) writes its sum rounded to bf16, or the ReLU
    of the rounded sum, to a second output Y of bf16, and C (fp32) is dead:
    the call (`gacc_cublaslt_sgemm_epilogue_bf16`, without `inputs`) writes
    Y, cuBLASLt computing the sum and the ReLU in fp32 and
    rounding once; round(max(s, 0)) and max(round(s), 0) agree, as rounding
    keeps the order of values and their sign. cuBLAS and OpenBLAS calls
    keep the generic.

    The tanh GELU (`gacc.gelu {approximate = "tanh"}`, whose payload
    `isTanhGelu` recognises op by op) goes into cuBLASLt's epilogues too
    (option `gelu-epilogues`; on by default here, off by default in
    gacc-lower-to-nvvm-pipeline and gacc-run until a device has run it),
    for fp32 products whose C is
    a contiguous [m, n] buffer with n a multiple of 8 (cuBLASLt's rule for
    the auxiliary matrix's leading dimension) that zeros start:
    - forward: a bias add into C followed by the GELU of C (the next op
      with memory effects, reading C or a reshape of it, as a linear layer
      on [m, T, d] makes) or the bias add's own second output holding the
      GELU (the 2-D form gacc-fuse-elementwise joins) becomes one call of
      `gacc_cublaslt_sgemm_gelu_bias` (GELU_AUX_BIAS): the GELU into the
      generic's output (viewed as [m, n]), the sum into C, which the GELU's
      adjoint reads;
    - backward: a product onto zeros whose next op multiplies it (dy, C or
      a reshape of C that nothing else reads) by the tanh GELU's derivative
      at an input X (`isTanhGeluGrad`) becomes one call of
      `gacc_cublaslt_sgemm_gelu_grad` (DGELU) into the generic's output,
      X read as the auxiliary matrix; C goes.
    gacc takes cuBLASLt's GELU to be the tanh approximation (NVIDIA
    documents no formula; llm.c relies on it for GPT-2's), computed by the
    library, so its values are not gacc's kernels' bit for bit (the GPU
    parity test, train-cuda-gpt, holds both against float64 PyTorch). The
    bias-gradient epilogues (BGRADA/BGRADB, DGELU_BGRAD) are not used:
    gacc sums bias gradients in fp64 (cuBLASLt sums in the output type) and
    accumulates them over the window, where cuBLASLt writes them.

    ```mlir
    gacc.matmul_accumulate %a, %b into %c first %f {transpose_a} : memref<32x10xf32>, memref<32x784xf32> into memref<10x784xf32>
    // becomes
    func.call @gacc_sgemm(%a_, %b_, %c_, %ta, %tb, %beta) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, ...) -> ()

    linalg.batch_matmul ins(%q, %kt : memref<64x128x32xf32>, memref<64x32x128xf32>) outs(%s : memref<64x128x128xf32>)
    // becomes
    func.call @gacc_sgemm_batched(%q_, %kt_, %s_, %false, %false, %one) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, ...) -> ()

    // callee = gacc_cublaslt_sgemm, a product marked gacc.gemm_inputs bf16
    func.call @gacc_cublaslt_sgemm_batched(%q_, %kt_, %s_, %false, %false, %one, %bf16) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, ..., i32) -> ()

    // callee = gacc_cublaslt_sgemm: a product onto zeros, its bias and ReLU
    linalg.matmul ins(%x, %w : ...) outs(%c : memref<32x256xf32>)
    linalg.generic ins(%b : memref<256xf32>) outs(%c, %y : ...) {
      // yield c + b, max(c + b, 0)
    }
    // becomes (beta 0, inputs fp32, epilogue 1 = RELU_BIAS)
    func.call @gacc_cublaslt_sgemm_epilogue(%x_, %w_, %y_, %b_, %false, %true, %zero, %fp32, %relu) : (..., memref<?xf32, strided<[?], offset: ?>>, i32, i32, f32, i32, i32) -> ()

    // callee = gacc_cublaslt_sgemm: a product onto zeros, its bias, then
    // the tanh GELU of C into %y (through a reshape)
    // becomes (GELU_AUX_BIAS: %y_ is %y viewed as [m, n], C keeps the sum)
    func.call @gacc_cublaslt_sgemm_gelu_bias(%x_, %w_, %y_, %b_, %c_, %false, %true, %zero, %fp32) : (..., memref<?xf32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32, f32, i32) -> ()
    ```
  }];
  let options = [
    Option<"callee", "callee", "std::string",
           /*default=*/"::gacc::abi::kSgemm",
           "The runtime GEMM to call: gacc_sgemm (OpenBLAS, host memory), "
           "gacc_cublas_sgemm (cuBLAS, device memory; the cuda target) or "
           "gacc_cublaslt_sgemm (cuBLASLt, device memory)">,
    Option<"geluEpilogues", "gelu-epilogues", "bool", /*default=*/"true",
           "With gacc_cublaslt_sgemm: fold a linear layer's tanh GELU into "
           "its GEMM (GELU_AUX_BIAS) and the GELU's gradient into the "
           "data-gradient GEMM that feeds it (DGELU)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ConvertGAccToRuntimePass : Pass<"convert-gacc-to-runtime", "ModuleOp"> {
  let summary = "Lower memref gacc.all_reduce to a call of the runtime's collective";
  let description = [{
    After bufferization, rewrites each memref `gacc.all_reduce` into a call
    of `gacc_all_reduce_sum_f32`, the runtime's in-place sum over the ranks
    of the data-parallel job (runtime/Collectives.cpp: one `MPI_Allreduce`
    with `MPI_IN_PLACE` and `MPI_SUM` on MPI_COMM_WORLD, the identity on one
    process). The call is the collective: one op in the IR is one call, so
    the number of collectives per optimizer step can be read off the IR.
    The pattern (`populateGAccToRuntimeConversionPatterns`) is applied with
    a ConversionTarget on which the memref form is illegal.

    MLIR's own `mpi` dialect was considered: in LLVM 22 its OpenMPI lowering
    names the sum `ompi_mpi_sum` (OpenMPI exports `ompi_mpi_op_sum`) and
    has no `MPI_IN_PLACE`, which an in-place reduction of the accumulators
    needs; a runtime call also lets the collective count itself.

    ```mlir
    gacc.all_reduce %buf : memref<203532xf32>
    // becomes
    %c = memref.cast %buf : memref<203532xf32> to memref<?xf32, strided<[?], offset: ?>>
    func.call @gacc_all_reduce_sum_f32(%c) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ConvertGAccToSCFPass : Pass<"convert-gacc-to-scf", "ModuleOp"> {
  let summary = "Lower memref gacc.matmul_accumulate to a parallel loop nest";
  let description = [{
    After bufferization, rewrites `gacc.matmul_accumulate` into an
    `scf.parallel` over the [M, N] accumulator whose body reduces over K with
    `scf.for` from the initial value `first ? 0 : C[i, j]` (fp32 FMAs), so
    β = 0 never reads C. This is the GEMM of targets without a library call
    (the NVVM pipeline maps the parallel loop to GPU threads). The pattern
    (`populateGAccToSCFConversionPatterns`) is applied with a
    ConversionTarget on which the memref form is illegal. The same patterns
    erase `gacc.phase_begin`, the memory plan's phase marker.

    ```mlir
    gacc.matmul_accumulate %a, %b into %c first %f : memref<4x3xf32>, memref<3x2xf32> into memref<4x2xf32>
    // becomes
    scf.parallel (%i, %j) = ... { %init = arith.select %f, %zero, %cij ... scf.for %k ... }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// Target level
//===----------------------------------------------------------------------===//

def GAccFuseElementwisePass : Pass<"gacc-fuse-elementwise", "ModuleOp"> {
  let summary = "Fuse chains of elementwise linalg ops on tensors";
  let description = [{
    Applies upstream's elementwise fusion patterns
    (`linalg::populateElementwiseOpsFusionPatterns`: producer–consumer
    fusion of linalg ops whose producer is all-parallel; with them come
    upstream's folding of fills and splat constants into the bodies that
    read them and the removal of unread operands) to tensors before
    bufferization, for producers with a single use that the consumer reads
    through a permutation map, so that nothing is computed twice (a
    producer read once per point of a reduction or broadcast stays). A
    chain of elementwise ops (an activation's adjoint, a mixed-precision
    rounding, the accumulate of a bias gradient) becomes one loop nest on
    the CPU and one kernel on the GPU. Unlike upstream's
    `linalg-fuse-elementwise-ops` it does not propagate reshapes. The fused
    body applies the same scalar ops in the same order: results are
    bit-identical.

    ```mlir
    %a = linalg.generic {...} ins(%x : ...) outs(%e0 : ...) { tanh }
    %b = linalg.generic {...} ins(%a, %y : ...) outs(%e1 : ...) { mulf }
    // becomes
    %b = linalg.generic {...} ins(%x, %y : ...) outs(%e1 : ...) { tanh, mulf }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GAccFuseAttentionPass : Pass<"gacc-fuse-attention", "ModuleOp"> {
  let summary = "Make a bf16 or fp16 step's attention one fused kernel each "
                "way";
  let description = [{
    In a function that gacc-expand-accumulation marks
    `gacc.compute_precision = #gacc.precision<bf16>` (or `fp16`), rewrites
    a `gacc.attention` and the `gacc.attention_backward` that reads its
    result (gacc-autodiff's adjoint) into one `gacc.fused_attention`, which
    also returns the softmax statistics (each row's log-sum-exp), and one
    `gacc.fused_attention_backward`, which reads them; an attention that
    no adjoint reads (evaluation) becomes a `gacc.fused_attention` alone.
    The fused ops take their operands rounded to the compute type
    (`arith.truncf` as a linalg.generic, which gacc-fuse-elementwise merges
    into the producer) and their results are extended back to fp32, so the
    rest of the step is unchanged. Where the attention was decomposed, the
    T × T scores and probabilities of a query block were stored and read by
    separate GEMMs and kernels; fused, they never leave the chip (Dao 2023,
    "FlashAttention-2"), and only the statistics [m, H, T, 1] (fp32) and
    the bf16 output live from the forward to the backward.

    Fuses only head sizes that are multiples of 8 up to 128, which cuDNN's
    fused forward and backward support on every architecture from sm_80 on
    (cudnn-frontend's sdpa_support_surface.h); other heads, and fp32 steps
    (cuDNN's fused attention takes fp16 and bf16 only), keep the
    decomposition. The NVVM pipeline runs it with `cudnn-attention`,
    before convert-gacc-to-linalg; convert-gacc-to-cudnn lowers the fused
    ops after bufferization.

    ```mlir
    %o = gacc.attention %q, %k, %v {causal} : tensor<2x4x128x32xf32>, ...
    %dq, %dk, %dv = gacc.attention_backward %q, %k, %v, %o, %do {causal} : ...
    // becomes (q16 = truncf q, ...)
    %o16, %l = gacc.fused_attention %q16, %k16, %v16 into %e0, %e1 {causal, scale = 0.1767766952966369 : f64} : ...
    %dq16, %dk16, %dv16 = gacc.fused_attention_backward %q16, %k16, %v16, %o16, %do16, %l into ... : ...
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GAccNarrowStoredValuesPass : Pass<"gacc-narrow-stored-values", "ModuleOp"> {
  let summary = "Store the values a bf16 or fp16 step rounds in tensors of "
                "that type";
  let description = [{
    In a function that gacc-expand-accumulation marks
    `gacc.compute_precision = #gacc.precision<bf16>` (or `fp16`), every
    value is rounded to the compute precision where it is produced, but
    kept in an fp32 tensor: a linalg op whose body yields
    `arith.extf %t : bf16 to f32`. This pass gives such a result the
    compute type instead (the op yields `%t` into a bf16 init), so its
    buffer takes half the bytes, and each reader extends it back:
    - a `linalg.generic` input: `arith.extf` of the block argument, in the
      body (no tensor of fp32 copies);
    - `linalg.matmul`, `linalg.batch_matmul` and `gacc.matmul_accumulate`
      A and B operands: the product takes them as they are (each product
      of the operands extended to fp32, summed in fp32; on the CPU the
      runtime extends them, cublasGemmEx and cuBLASLt read them as bf16);
    - `tensor.collapse_shape`, `tensor.expand_shape`,
      `tensor.extract_slice`, `tensor.cast`, `linalg.transpose`,
      `linalg.broadcast` and `gacc.recompute_inputs` pass the narrowed type
      on, and so does `tensor.insert_slice` with its destination (a
      `tensor.empty` or a fill of a constant exact in the type becomes one
      of the type: a concatenation); their results' readers follow the
      same rules.

    Values that must change together (a view and its source, an insertion
    and what it inserts into, the two operands of a product: a product
    never mixes fp32 and bf16 operands) form one group, and a group is
    narrowed only where every member is a rounded value or passes one on
    and every reader of a member is one of the above; anything else (a
    loop's yield, a function's result, a product whose other operand is
    not rounded) keeps the whole group in fp32. Extending a
    rounded value is exact, so the step computes the same values, bit for
    bit, with half the bytes for each narrowed tensor: the activations a
    step keeps from its forward for its backward above all (Micikevicius
    et al. 2018, "Mixed Precision Training", store them in fp16; PyTorch's
    autocast keeps the low-precision outputs of its casts). Accumulators,
    parameters, optimizer state and every gradient that enters an
    accumulator stay fp32. Runs on tensors, after the layer ops are
    decomposed and fused and before gacc-mark-gemm-inputs, which reads the
    function's mark this pass leaves in place.

    ```mlir
    %x16 = linalg.generic ... outs(%e : tensor<32x256xf32>) {
      %t = arith.truncf %v : f32 to bf16
      %r = arith.extf %t : bf16 to f32
      linalg.yield %r : f32 } -> tensor<32x256xf32>
    %y = linalg.matmul ins(%x16, %w16 : tensor<32x256xf32>, tensor<256x10xf32>) ...
    // becomes
    %x16 = linalg.generic ... outs(%e : tensor<32x256xbf16>) {
      %t = arith.truncf %v : f32 to bf16
      linalg.yield %t : bf16 } -> tensor<32x256xbf16>
    %y = linalg.matmul ins(%x16, %w16 : tensor<32x256xbf16>, tensor<256x10xbf16>) ...
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GAccMarkGemmInputsPass : Pass<"gacc-mark-gemm-inputs", "ModuleOp"> {
  let summary = "Mark the matrix products whose operands hold bf16 or fp16 "
                "values";
  let description = [{
    In a function that gacc-expand-accumulation marks
    `gacc.compute_precision = #gacc.precision<bf16>` (or `fp16`), marks
    each matrix product (`gacc.matmul_accumulate`, `linalg.matmul`,
    `linalg.batch_matmul` on tensors) whose A and B operands provably hold
    values of that precision in their fp32 elements with
    `gacc.gemm_inputs = #gacc.precision<bf16>`. convert-gacc-to-blas then
    lets cuBLASLt multiply them on tensor cores
    (`CUBLAS_COMPUTE_32F_FAST_16BF`), whose rounding of the inputs to bf16
    is exact for such values: the products are those of fp32 compute, and
    only their accumulation in fp32 (its order and rounding, which tensor
    cores do their own way) differs.

    The proof follows an operand back to the rounding that produced it (a
    linalg op whose body yields an `arith.extf` from the compute type:
    every intermediate value of the micro-batch body, the parameters' and
    inputs' low-precision copies) through ops that only move values
    (`tensor` reshapes, slices, casts, concatenation, and padding with a
    value that is itself proved; linalg ops whose result yields one of
    their inputs unchanged: copies, transposes, broadcasts, fills), and
    constants exact in the compute type. A linalg result counts only where
    the op writes every element (all-parallel loops, a permutation as the
    init's map) or its init holds such values too. Marks the input already
    carries are dropped first: only proved products are marked.
    A value computed inside a layer op's decomposition and never rounded
    (attention's probabilities, which the forward's product with the values
    reads) is not such a value: that product stays fp32. Runs on tensors,
    after the layer ops are decomposed and before bufferization; the mark
    survives bufferization. The functions' `gacc.compute_precision` is
    consumed (removed).

    ```mlir
    func.func @step(...) attributes {gacc.compute_precision = #gacc.precision<bf16>} {
      %w16 = linalg.generic ... { %t = arith.truncf %x : f32 to bf16
                                  %e = arith.extf %t : bf16 to f32
                                  linalg.yield %e : f32 } -> tensor<10x256xf32>
      %y = linalg.matmul ins(%x16, %w16 : ...) outs(%z : ...) -> tensor<32x10xf32>
      // becomes
      %y = linalg.matmul {gacc.gemm_inputs = #gacc.precision<bf16>} ins(%x16, %w16 : ...) ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GAccPrivatizeInitsPass : Pass<"gacc-privatize-inits", "ModuleOp"> {
  let summary = "Give every destination-style op an init tensor of its own";
  let description = [{
    A `tensor.empty` or `linalg.fill` that several destination-style ops
    take as their init (as CSE leaves identical ones) is cloned before each
    use but the first. One-shot bufferization then writes each result in
    place instead of allocating and copying a shared buffer, which makes
    CSE safe before bufferization.

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %a = linalg.generic {...} outs(%z : tensor<4xf32>) ...
    %b = linalg.generic {...} outs(%z : tensor<4xf32>) ...
    // becomes
    %a = linalg.generic {...} outs(%z : tensor<4xf32>) ...
    %z2 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.generic {...} outs(%z2 : tensor<4xf32>) ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GAccStridedCopiesToLinalgPass
    : Pass<"gacc-strided-copies-to-linalg", "ModuleOp"> {
  let summary = "Rewrite strided memref.copy ops into linalg.copy";
  let description = [{
    After bufferization, a `memref.copy` between buffers of which one is not
    contiguous row-major (a strided `tensor.insert_slice`, the interior of
    a `tensor.pad`, the adjoint of a strided slice) becomes `linalg.copy`,
    which the pipelines lower with the other linalg ops: loops on the CPU,
    kernels on the GPU. The LLVM lowering would otherwise call
    `memrefCopy` of MLIR's C runner utilities, which gacc's runtime does
    not provide (and which on the GPU path would copy on the host).
    Contiguous copies stay: they become `memcpy`.

    ```mlir
    memref.copy %a, %s : memref<2x2xf32> to memref<2x2xf32, strided<[3, 1], offset: 4>>
    // becomes
    linalg.copy ins(%a : memref<2x2xf32>) outs(%s : memref<2x2xf32, strided<[3, 1], offset: 4>>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GAccApproximateMathPass : Pass<"gacc-approximate-math", "ModuleOp"> {
  let summary = "Replace f32 transcendental math ops by upstream MLIR's "
                "polynomial approximations (the CPU path)";
  let description = [{
    LLVM lowers `math.tanh`, `math.exp` and the like to calls of the C
    library, one element at a time: its loop vectorizer cannot vectorize a
    loop that calls `tanhf`. This pass applies upstream MLIR's polynomial
    approximations (`populateMathPolynomialApproximationPatterns`, the
    Cephes and Eigen formulas of mlir/lib/Dialect/Math/Transforms/
    PolynomialApproximation.cpp) to the f32 ops named in `ops`, so that the
    generated loops are straight-line arithmetic that LLVM vectorizes. The
    approximations are within a few ulp of the C library and keep its
    limits (exp(-inf) = 0, tanh(±inf) = ±1, NaN in NaN out); results are
    not bit-identical to the library's.

    The CPU pipeline runs it after the linalg ops became loops. The GPU
    pipeline does not: libdevice's functions are already vector-free
    device code.

    ```mlir
    %y = math.tanh %x : f32
    // becomes a clamp, a rational polynomial in %x and a select
    ```

    Errors: an `ops` entry that is not one of the ops upstream
    approximates (acos, asin, atan, atan2, cbrt, cos, erf, erfc, exp,
    expm1, log, log1p, log2, sin, tanh). Ops of other element types, ops
    on tensors and ops not named stay.
  }];
  let options = [
    ListOption<"opNames", "ops", "std::string",
               "Mnemonics of the math ops to approximate (default: tanh, "
               "exp, expm1, log, log1p, erf; any of acos, asin, atan, "
               "atan2, cbrt, cos, erf, erfc, exp, expm1, log, log1p, log2, "
               "sin, tanh)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def GAccReassociateReductionsPass
    : Pass<"gacc-reassociate-reductions", "func::FuncOp"> {
  let summary = "Let the CPU's code generator reorder the floating-point "
                "sums of linalg reductions (the CPU path)";
  let description = [{
    A linalg reduction lowered to loops adds one element at a time into its
    output, and LLVM keeps that order: without the `reassoc` fast-math flag
    its loop vectorizer refuses the loop ("cannot prove it is safe to
    reorder floating-point operations"), so every reduction of a step (the
    batch statistics of batch and layer normalization, the bias gradients,
    the softmax sums) runs at one add per floating-point latency. This pass
    finds the combiner of every output of a linalg op with reduction
    iterators (upstream `matchReduction`: the chain of ops from the
    output's block argument to its yielded value) and adds `reassoc` to the
    combiner's arith fast-math flags, so LLVM may keep several partial sums
    in vector registers and add them at the end.

    The order of the additions then depends on the vector width the code
    generator chose, not on the data or the run: results stay
    deterministic, but differ from the sequential sum by rounding (the
    long reductions of gacc, over the rows of a micro-batch, accumulate in
    f64: LinalgBuilders.cpp). Nothing else
    is reordered: elementwise arithmetic keeps its flags, and no `contract`
    (fused multiply-add) flag is added.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "reduction"]} ... {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
    // %s becomes: arith.addf %acc, %in fastmath<reassoc> : f32
    ```

    The combiners of named contractions (the add of a `linalg.matmul`
    lowered to loops with `--no-blas`) get the flag too.

    Errors: none; ops without reduction iterators and combiners that are
    not arith floating-point ops stay as they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GAccCollapseDimensionsPass
    : Pass<"gacc-collapse-dimensions", "func::FuncOp"> {
  let summary = "Run consecutive dimensions of a linalg.generic on buffers "
                "as one loop (the CPU path)";
  let description = [{
    A linalg.generic lowered to loops gets one loop per iteration
    dimension; over image activations [m, C, H, W] the innermost loop runs
    W (14 or 28) times, too few for LLVM's vectorizer (and few enough for
    its full unrolling, after which it vectorizes the next loop with gathers).
    This pass merges each run of consecutive iteration dimensions of one
    iterator type that every indexing map keeps in order
    (`linalg::areDimSequencesPreserved`) and that every operand lays out
    contiguously (static strides: the outer dimension strides over the
    whole inner one) into one dimension, with upstream
    `linalg::collapseOpIterationDims` (`memref.collapse_shape` of the
    operands). An elementwise op becomes one loop over all its elements,
    a per-channel op over [m, C, H, W] a loop of H·W per channel; strided
    views (a pooling window's taps) keep their dimensions. Ops reading
    `linalg.index` are left alone.

    ```mlir
    linalg.generic {indexing_maps = [(n, c, h, w) -> (n, c, h, w), (n, c, h, w) -> (c), (n, c, h, w) -> (n, c, h, w)], iterator_types = [parallel × 4]}
        ins(%x, %mean : memref<32x32x28x28xf32>, memref<32xf32>) outs(%y : memref<32x32x28x28xf32>)
    // becomes, over (n, c, hw):
    %xc = memref.collapse_shape %x [[0], [1], [2, 3]] : memref<32x32x28x28xf32> into memref<32x32x784xf32>
    linalg.generic {indexing_maps = [(n, c, s) -> (n, c, s), (n, c, s) -> (c), ...]} ins(%xc, %mean ...) outs(%yc ...)
    ```

    Errors: none.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def GAccParallelizeLoopsPass
    : Pass<"gacc-parallelize-loops", "func::FuncOp"> {
  let summary = "Split each large linalg op on buffers into one slab per "
                "CPU thread (an scf.parallel for convert-scf-to-openmp)";
  let description = [{
    The CPU step's loops (every linalg op that is not a GEMM: elementwise
    chains, normalizations, im2col, pools, reductions) run on one core
    unless they are split. This pass tiles each linalg op with buffer
    semantics, static loop ranges and at least `min-iterations`
    iterations in all along one parallel iteration dimension into
    `threads` slabs (upstream `linalg::tileLinalgOp` with
    `LinalgTilingLoopType::ParallelLoops`): an `scf.parallel` of `threads`
    iterations whose body is the op on subviews. Upstream
    `convert-scf-to-openmp` then runs each as an OpenMP parallel loop
    (static schedule, one slab per thread of the team).

    The dimension split is the parallel one (at least `threads`
    iterations, a result of every output's indexing map, each a projected
    permutation, so that the slabs write disjoint outputs) whose largest
    slab holds the smallest share of the op, the outermost of equals.
    Reduction dimensions are never split, so every output element is
    computed by one thread, in the op's order
    over its reduction dimensions: a run is deterministic whatever the
    threads' timing. (A slab's shorter loops may be vectorized or
    unrolled otherwise than the whole op's, so a reduction whose combiner
    carries `reassoc`, from gacc-reassociate-reductions, may round
    differently for another thread count.) Ops already inside an
    `scf.parallel` or `scf.forall`, with dynamic ranges, or below
    `min-iterations` stay as they are (a fork and join of the team costs about as much as
    32768 simple iterations). Run it before `gacc-outline-linalg-ops`, so
    that the outlined function computes one slab of whole buffers (whose
    pointers stay `noalias`) and the OpenMP region only calls it.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<64x1024xf32>) outs(%y : memref<64x1024xf32>) {...}
    // with threads=2 becomes
    scf.parallel (%i) = (%c0) to (%c64) step (%c32) {
      %xs = memref.subview %x[%i, 0] [32, 1024] [1, 1] : ... to memref<32x1024xf32, strided<[1024, 1], offset: ?>>
      %ys = memref.subview %y[%i, 0] [32, 1024] [1, 1] : ...
      linalg.generic {...} ins(%xs : ...) outs(%ys : ...) {...}
    }
    ```

    Errors: `threads` or `min-iterations` below 1, or `threads` above 1024
    (kMaxCpuThreads; one error, before any function runs); an op that
    upstream tiling cannot split (one error at the op).
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "CPU threads of the OpenMP team the loops run on (1: nothing "
           "changes)">,
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Ops with fewer iterations in all (the product of their loop "
           "ranges) stay serial">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GAccOutlineLinalgOpsPass : Pass<"gacc-outline-linalg-ops", "ModuleOp"> {
  let summary = "Give every linalg op on buffers a function of its own, "
                "shared by identical ops (the CPU path)";
  let description = [{
    LLVM's loop analyses (ScalarEvolution's invalidation in the loop
    passes) cost time that grows with the square of the loops in a
    function, and a step function holds one loop nest per linalg op of
    every micro-batch: examples/kjv_gpt.mlir took 86 s to compile, almost
    all of it in LLVM. This pass moves each linalg op with buffer
    semantics into a private function that takes the op's operands and
    the values its body uses from above (constants are remade inside, so
    sizes and factors stay constant), marks it `noinline` (LLVM's
    `passthrough`), and calls it where the op was. Ops that are the same
    but for their operands and locations (the blocks of a transformer, the
    same elementwise op in forward and backward, the step and its predict
    function) call one function, which LLVM then compiles once; finding
    them is linear in the ops (passes/analysis/FunctionKey.h).

    ```mlir
    func.func @s(...) {
      linalg.generic {...} ins(%a : memref<16x128xf32>) outs(%b : memref<16x128xf32>) {...}
    }
    // becomes
    func.func @s(...) {
      call @s_generic_0(%a, %b) : (memref<16x128xf32>, memref<16x128xf32>) -> ()
    }
    func.func private @s_generic_0(%arg0: memref<16x128xf32>, %arg1: memref<16x128xf32>)
        attributes {passthrough = ["noinline"]} {
      linalg.generic {...} ins(%arg0 : memref<16x128xf32>) outs(%arg1 : memref<16x128xf32>) {...}
      return
    }
    ```

    Functions are named `<caller>_<op>_<k>` (the k-th linalg op of the
    caller), which is also what a profile of the JIT shows. Ops on tensors
    are left alone. Errors: none.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def GAccMarkNoaliasPointersPass
    : Pass<"gacc-mark-noalias-pointers", "ModuleOp"> {
  let summary = "Mark llvm.noalias the pointers gacc-outline-linalg-ops "
                "found disjoint (the CPU path)";
  let description = [{
    A loop nest that reads one buffer and writes another vectorizes only
    where LLVM knows they do not overlap: without it, the loop vectorizer
    checks at run time (and falls back to a scalar loop for an in-place
    operation), and a reduction into an output buffer cannot keep its
    partial sums in registers (LICM cannot promote the output's loads and
    stores across the input's). gacc-outline-linalg-ops knows which
    operands of each outlined op view distinct buffers (allocations, or
    distinct arguments of the step, which never overlap) and records the
    positions of their aligned pointers in the function's LLVM signature
    as `gacc.noalias_pointers`; convert-func-to-llvm drops memref argument
    attributes, so this pass, after it, marks those pointer arguments
    `llvm.noalias` and removes the record.

    ```mlir
    llvm.func @s_generic_3(%arg0: !llvm.ptr, %arg1: !llvm.ptr, ...) attributes {gacc.noalias_pointers = array<i64: 1, 6>, ...}
    // becomes
    llvm.func @s_generic_3(%arg0: !llvm.ptr, %arg1: !llvm.ptr {llvm.noalias}, ..., %arg6: !llvm.ptr {llvm.noalias}, ...)
    ```

    Errors: a recorded position that is not a pointer argument.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GAccHoistDeallocationsPass
    : Pass<"gacc-hoist-deallocations", "func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Ownership-based deallocation (`buffer-deallocation-pipeline`) frees a
    block's buffers at the end of the block, so every buffer of a
    micro-batch's forward and backward stays allocated until the
    micro-batch ends. This pass moves each `memref.dealloc` of a buffer
    allocated in the same block up to just after the last op of the block
    that uses the buffer or a view of it (`BufferViewFlowAnalysis`; a use
    inside a loop counts as the whole loop). A buffer with a use outside
    the block keeps its dealloc where it is. What the memory plan
    (`gacc-plan-memory`) reads, and what the step then allocates, is the
    live set of the program as it runs.

    ```mlir
    %a = memref.alloc() : memref<32x256xf32>
    linalg.generic ... outs(%a ...)
    linalg.generic ins(%a ...) outs(%b ...)
    ...                                   // %a is dead here
    memref.dealloc %a : memref<32x256xf32>
    // becomes: the dealloc right after the last linalg.generic reading %a
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def GAccPlaceTransientBuffersPass
    : Pass<"gacc-place-transient-buffers", "ModuleOp"> {
  let summary = "Place a CPU step's transient buffers in one arena at "
                "offsets chosen at compile time";
  let description = [{
    The bufferized step allocates and frees its activations and
    temporaries in every micro-batch. Through the heap, their memory
    fragments (the measured peak of fashion_cnn_groupnorm and kjv_gpt was
    5 to 18% above the plan) and every buffer costs a malloc and a free.
    This pass gives each entry function (public, called by nothing in the
    module) one arena, `func.call @gacc_step_arena(%bytes)` at its entry
    (abi/RuntimeABI.h; the runtime keeps one per thread and hands it back
    to every call), and turns each buffer the arena can hold into a
    `memref.view` of it at a constant offset, removing its dealloc.

    The offsets come from the buffers' live ranges over the function's ops
    (an allocation to its dealloc), packed greedy by size
    (passes/analysis/BufferPlacement.h: Pisarchyk and Lee, 2020, as
    TensorFlow Lite's GreedyMemoryPlanner): buffers live at the same time
    never overlap, so the arena's size is the memory the step's transient
    buffers take, known before it runs; `gacc-plan-memory` reports the
    same number. A buffer the arena cannot hold (a dynamic shape, a layout,
    one freed elsewhere or through a view) keeps its allocation.

    ```mlir
    func.func @step(...) {
      %a = memref.alloc() {alignment = 64 : i64} : memref<32x256xf32>
      ...
      memref.dealloc %a : memref<32x256xf32>
    }
    // becomes
    func.func @step(...) {
      %arena = call @gacc_step_arena(%c65536) : (index) -> memref<?xi8>
      %a = memref.view %arena[%c32768][] : memref<?xi8> to memref<32x256xf32>
      ...
    }
    ```

    Errors: a symbol `@gacc_step_arena` that is not the runtime's
    function.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def GAccCheckKernelParametersPass
    : Pass<"gacc-check-kernel-parameters", "ModuleOp"> {
  let summary = "Refuse a kernel whose parameters exceed what PTX allows";
  let description = [{
    After `gpu-kernel-outlining`, sums each kernel's (`gpu.func ... kernel`
    of every `gpu.module`)
    parameters as the LLVM lowering passes them (kernelArgumentBytes: a
    memref as its descriptor of two pointers, the offset and a size and a
    stride per dimension; a scalar or fixed-size vector of B bytes, its bit
    width from the kernel's data layout (`DataLayout::closest`), as PTX lays
    it out: the power of two at or above B, aligned to that (an i64 takes 8
    bytes at an 8-byte boundary, vector<3xf32> 16 at a 16-byte one); each
    parameter starting at its alignment)
    and fails with one error at the kernel's location, naming it and its
    bytes, where they exceed `max-parameter-bytes`: ptxas would refuse the
    kernel later, in the middle of the pipeline's serialization, with an
    error about a `.ptx` file the user never sees. The passes that put
    several ops in one kernel keep within the same limit
    (`gacc-linalg-to-parallel-loops`, `gacc-merge-single-thread-loops`);
    this is the check that they did, and it runs without ptxas
    (`format=isa`).

    ```
    error: kernel @big_kernel takes 6120 bytes of parameters (192
    arguments), more than the 4352 that PTX allows before ISA 8.1 (ISA
    8.1 or later allows 32764: features=+ptx81, or a chip from sm_100 on,
    whose default PTX is newer)
    ```
  }];
  let options = [
    Option<"maxParameterBytes", "max-parameter-bytes", "int64_t",
           /*default=*/"::mlir::gacc::kPtxKernelParameterBytes",
           "The most bytes of parameters a kernel may take (4352 by "
           "default, PTX's limit before ISA 8.1)">,
  ];
}

def GAccMergeGPUModulesPass : Pass<"gacc-merge-gpu-modules", "ModuleOp"> {
  let summary = "Gather every outlined GPU kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` puts each kernel in its own `gpu.module`. This
    pass moves every `gpu.func` into the first `gpu.module` (renamed
    `@<name>` from the `name` option) and retargets each `gpu.launch_func`,
    so a training step compiles to one PTX module and one cubin. Of kernels
    that are identical up to their names and locations (the same ops on
    the same types and attributes: the repeated blocks of a transformer,
    the same elementwise op in the forward and the backward) only the first
    is kept, and the launches of the others launch it, so the device code
    and its compile time do not grow with a model's depth.

    Outlining names each kernel after its function, so kernels of
    different modules can share a name. A kept kernel is named after its
    module (`<module>_<kernel>` when the module holds several), or after
    the first name in its location where it has one (gacc names its
    accumulate and update ops); a name already taken by a kept kernel or a
    device function gets `_<k>` (SymbolTable::generateSymbolName).
    GACC_CUDA_PROFILE reports a kept kernel's name for all the launches
    that use it. Device functions keep their names: calls name them.

    ```mlir
    gpu.module @a_kernel { gpu.func @a_kernel() kernel { ... } }
    gpu.module @b_kernel { gpu.func @b_kernel() kernel { ... } }
    // becomes
    gpu.module @gacc_kernels { gpu.func @a_kernel() kernel { ... }
                               gpu.func @b_kernel() kernel { ... } }
    ```

    The merged module keeps the modules' targets (`#nvvm.target`), which
    must be the same for all of them.

    Errors: an empty `name`; a `name` that another symbol of the module
    already holds; modules with different targets; a device function (or
    other symbol) of the same name in two modules; a `gpu.launch_func` of
    a kernel outside the merged modules.
  }];
  let options = [
    Option<"moduleName", "name", "std::string", /*default=*/"\"gacc_kernels\"",
           "Symbol name of the merged gpu.module">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GAccLinalgToParallelLoopsPass
    : Pass<"gacc-linalg-to-parallel-loops", "func::FuncOp"> {
  let summary = "Lower linalg ops on buffers to one-dimensional scf.parallel "
                "loops for the GPU (coalesced, reductions in registers, "
                "split sums, scalars on the device, fills folded, "
                "ops of the same positions fused)";
  let description = [{
    Lowers every `linalg` op on buffers with static, non-empty shapes whose
    outputs are indexed by parallel dimensions only to `scf.parallel`
    loops, before `convert-linalg-to-parallel-loops` takes what is left
    (dynamic shapes, a zero-size dimension, an output map with a constant
    or a reduction dimension). The GPU mapping then turns each parallel
    loop into one kernel:

    - **One thread per output element, coalesced.** The parallel dimensions
      become one `scf.parallel` over their row-major linear index
      (coordinates by division and remainder by constants), so consecutive
      threads of a block take consecutive elements of the innermost
      dimension and every thread of a block has work.
      (`convert-linalg-to-parallel-loops` keeps one loop dimension per op
      dimension, and the block-size tiling and mapping give the threads of
      a block the outermost one: for a `[8432, 64]` result, 256 threads
      strided 64 elements apart.)
    - **Reductions in registers.** The reduction dimensions become
      `scf.for` loops inside it whose `iter_args` carry the outputs: loaded
      once, stored once (not loaded and stored per term, a round trip
      through memory on the GPU). The innermost one is unrolled 8 times
      (`loopUnrollByFactor`, with an epilogue for the remainder): the
      terms' loads do not depend on the running value, so they are in
      flight together. The terms are still added in the op's own order, so
      the results are bit-identical to the CPU path's loops. A bias
      gradient (Σ over the rows of a `[rows, features]` gradient, iterators
      `[reduction, parallel]`) thereby runs as one kernel, not as a host
      loop that launches a kernel per row (8432 launches per micro-batch
      for examples/kjv_char.mlir).
    - **Split of long sums.** An op whose every output is a sum (`out +
      term`, `out` used nowhere else, the term computed from no output)
      with at least 256 terms per output
      and fewer than 16384 output positions (too few threads to fill a
      GPU) is split in two kernels: `split` threads per position, thread `k`
      summing terms `k, k + split, ...` from the identity (-0.0 for floats)
      into a partials buffer
      per output (`memref.alloc`, freed after), then one thread per
      position adding the `split` partial sums to each output in the order
      `k = 0, 1, ...`. A layer norm's weight and bias gradients (two sums
      over 8432 rows in one op) are one such op.
      `split` is the largest divisor of the term count that is at most
      min(terms / 32, 65536 / outputs, 512). The order of the additions
      changes (results differ from the CPU path by rounding) but is fixed:
      the same bits on every run. This is the split-reduction scheme of
      `linalg::splitReduction`, on buffers, with an interleaved split.
    - **Scalars on the device.** An op without parallel dimensions (a sum
      to a scalar such as the loss or the squared gradient norm, or a
      rank-0 computation) becomes a one-thread (or split) parallel loop, so
      its kernel runs where its operands live instead of the host reading
      device memory.
    - **Initializing fills folded.** Bufferization leaves a reduction into
      a fresh buffer behind a `linalg.fill` of it with the reduction's
      identity (a row maximum's -inf, a sum's zero). Where that fill is the
      last op of the block to touch the buffer before the op, the buffer is
      a `memref.alloc` of the function that no other operand of the op
      views, and the op writes every element of it
      (`getInitializingFill`, `writesEveryElement`), each thread starts
      from the fill's value in a register instead of loading it, and the
      fill is erased: one kernel less per such output (ten per micro-batch
      of examples/fashion_mlp.mlir, with the GEMMs' fills that
      `convert-gacc-to-blas` folds). The values are the same.
    - **Ops of the same positions in one kernel.** Ops lowered in place
      (not split) with the same output positions (parallel sizes) share one
      parallel loop, placed where the last of them was, each thread doing
      its work for each op in program order, when
      every buffer two of them share and one writes is accessed through
      the same memref value at the same element by every access, an element
      that is each parallel coordinate once (a different element for each
      thread), and what lies between them lets the earlier ops' work run
      after it (`classifyCrossing`): allocations, frees (a free of a buffer
      an earlier op views moves after the kernel), memory-free ops, and
      other ops or kernels, a call of one of the `gemm-callees` (the
      runtime's GEMMs) included, that write nothing the earlier ops read
      or write and read nothing they write (two function arguments may
      share memory unless `distinct-arguments` says the caller never binds
      them so), and the kernel's parameters stay within
      `max-parameter-bytes` (kernelParameterBytes: each memref the kernel
      takes is a descriptor of (3 + 2 · rank) · 8 bytes once outlined, any
      other value up to 24 bytes (a rank-0 buffer in the graph form),
      constants none (the NVVM pipeline sinks them into the kernels), with
      128 bytes kept for the kernel's own index arguments: a GPT-2-small
      step's 74 bf16 copies of its [768] vectors
      made one kernel of 5920 bytes, which ptxas rejects below PTX ISA
      8.1). An op joins the latest of the last 8 kernels it may join. A
      bias added in place and its activation, a row maximum and the sums
      that read it, a bias gradient and the accumulate of it (across the
      weight gradient's GEMM), two chains of elementwise ops of different
      sizes that interleave: each chain one kernel. A thread reads back
      what it stored, so the values are the same.

    ```mlir
    // Σ_i x[i, j] over 8432 rows into out[128]:
    linalg.generic {iterator_types = ["reduction", "parallel"]} ...
    // becomes (split 248, 34 terms per thread):
    %partials = memref.alloc() : memref<31744xf32>
    scf.parallel (%t) = (%c0) to (%c31744) step (%c1) {
      // k = t / 128, j = t % 128; Σ_{c < 34} x[c·248 + k, j], 8 terms
      // per iteration and an epilogue for the last 2
      %s = scf.for %c = %c0 to %c32 step %c8 iter_args(%a = %zero) -> f32
      memref.store %s, %partials[%t]
    }
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      // out[j] + partials[j] + partials[128 + j] + ...
    }
    memref.dealloc %partials
    ```

  }];
  let options = [
    ListOption<"gemmCallees", "gemm-callees", "std::string",
               "The runtime's GEMM entry points (abi/RuntimeABI.h: A and B "
               "read, C read and written, no other memory): a call of one "
               "that touches nothing an op writes, and writes nothing it "
               "reads, does not keep that op from a kernel with the op after "
               "the call">,
    Option<"distinctArguments", "distinct-arguments", "bool",
           /*default=*/"false",
           "The function's memref arguments are memory of their own "
           "(abi::kDistinctArguments: the caller binds no two to "
           "overlapping memory), so ops that read one and write another "
           "may share a kernel">,
    Option<"maxParameterBytes", "max-parameter-bytes", "int64_t",
           /*default=*/"::mlir::gacc::kPtxKernelParameterBytes",
           "The most bytes of kernel parameters one kernel of several ops "
           "may take (4352 by default, PTX's limit before ISA 8.1): an op "
           "that would take its kernel past it starts another">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GAccAsyncLaunchesPass : Pass<"gacc-async-launches", "ModuleOp"> {
  let summary = "Launch kernels asynchronously on one stream; synchronize "
                "the host only before it touches memory";
  let description = [{
    Runs on host code after `gpu-kernel-outlining`. In every function that
    queues device work (launches kernels or calls a stream-ordered
    function), each synchronous `gpu.launch_func` (which the GPU to
    LLVM lowering follows with a stream synchronization) becomes
    `gpu.launch_func async [%stream]` on one token made at the function's
    entry (`gpu.wait async`, a stream), so the launches queue in program
    order without the host waiting for each. A call of
    `synchronize-callee` (default `gacc_cuda_synchronize`, declared by the
    pass; it waits for that stream) is inserted where the host may touch
    memory the queued work uses:

    - before a `memref.load`, `memref.store`, `memref.copy` or any other op
      with read or write effects, a call of another function (unknown
      effects), or a loop or branch containing one, when work may be
      pending;
    - before the function returns.

    Allocation and deallocation do not synchronize: the arena allocator
    behind them only keeps books, and the device's uses of a block, before
    and after it is freed and reused, are ordered on the one stream. Calls
    of the `stream-ordered-callees` (the cuBLAS GEMM) queue work on the
    same stream like a launch. A loop or branch that launches is entered
    with work pending (a host access at the top of a loop body waits for
    the previous iteration's kernels), and so is every block of the
    function but its entry.

    Without it every launch costs a round trip to the device: 53 launches
    per micro-batch of examples/kjv_char.mlir each waited for.

    ```mlir
    gpu.launch_func @m::@k ...  // then a memref.load %x
    // becomes
    %s = gpu.wait async                    // at the function's entry
    %0 = gpu.launch_func async [%s] @m::@k ...
    func.call @gacc_cuda_synchronize() : () -> ()
    memref.load %x
    ```

    Errors: an empty `synchronize-callee`, or one naming a symbol that is
    not a `func.func` of type `() -> ()`.
  }];
  let options = [
    Option<"synchronizeCallee", "synchronize-callee", "std::string",
           /*default=*/"::gacc::abi::kCudaSynchronize",
           "Function (no arguments, no results) that waits until the "
           "stream's work is done">,
    ListOption<"streamOrderedCallees", "stream-ordered-callees",
               "std::string",
               "Functions whose calls queue their work on the same stream "
               "(no synchronization before them)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect"];
}

def GAccMergeSingleThreadLoopsPass
    : Pass<"gacc-merge-single-thread-loops", "func::FuncOp"> {
  let summary = "Merge runs of one-iteration scf.parallel loops into one "
                "(one one-thread kernel instead of several)";
  let description = [{
    On the cuda target's host code at the `scf.parallel` level (after
    `gacc-linalg-to-parallel-loops` and `gacc-device-resident-scalars`,
    before the GPU mapping), the device's scalar work is one-iteration
    parallel loops: a loss summed to a scalar, its conversion to f32, the
    micro-batch loop's carried values. The GPU mapping makes each one a
    kernel of one thread, and a launch costs far more than the few
    arithmetic ops inside. This pass merges, in every block of the host
    code, each run of one-dimensional one-iteration loops without
    reductions that only these separate: an allocation (the moved body
    cannot use its buffer), a free, an op without memory effects, or
    another kernel (an op with regions, a GEMM call) that writes nothing
    the earlier loops read or write and reads nothing they write (its
    memory effects, `classifyCrossing`). Each loop's body is
    put at the start of the next one's (its induction variable replaced by
    its one value), so the one thread runs the bodies in their program
    order: the same loads and stores in the same order, the same results.
    A free of a buffer an earlier loop views moves after the merged loop
    (`classifyCrossing`). Anything else between two loops (a host read, a
    kernel that conflicts) ends the run, and so does a loop whose merge
    would take more than `max-parameter-bytes` of kernel parameters: each
    memref the merged loop uses from above is a descriptor of
    (3 + 2 · rank) · 8 bytes once outlined, any other value up to 24
    bytes (a rank-0 buffer in the graph form), constants none (the NVVM
    pipeline sinks them into the kernels), and 128 bytes are kept for the
    kernel's own index arguments (kernelParameterBytes). (A GPT's clipping sums
    one rank-0 buffer per parameter in one thread: merged whole, kjv_gpt's
    kernel took 6120 bytes, which ptxas rejects below PTX ISA 8.1.)
    examples/fashion_mlp.mlir's
    step in graph form launches seven kernels fewer per micro-batch: its
    loss sum merges with the micro-batch loop's carried values across the
    backward's kernels and GEMMs.

    ```mlir
    scf.parallel (%i) = (%c0) to (%c1) step (%c1) { A(%i) }
    %b = memref.alloc() : memref<f32>
    scf.parallel (%j) = (%c0) to (%c1) step (%c1) { B(%j, %b) }
    // becomes
    %b = memref.alloc() : memref<f32>
    scf.parallel (%j) = (%c0) to (%c1) step (%c1) { A(%c0); B(%j, %b) }
    ```
  }];
  let options = [
    ListOption<"gemmCallees", "gemm-callees", "std::string",
               "The runtime's GEMM entry points (abi/RuntimeABI.h: A and B "
               "read, C read and written, no other memory): a call of one "
               "that writes nothing the earlier loops read or write, and "
               "reads nothing they write, does not end a run">,
    Option<"distinctArguments", "distinct-arguments", "bool",
           /*default=*/"false",
           "The function's memref arguments are memory of their own "
           "(abi::kDistinctArguments: the caller binds no two to "
           "overlapping memory), so a kernel or GEMM that writes one "
           "argument does not end a run whose loops read another">,
    Option<"maxParameterBytes", "max-parameter-bytes", "int64_t",
           /*default=*/"::mlir::gacc::kPtxKernelParameterBytes",
           "The most bytes of kernel parameters a merged loop may take "
           "(4352 by default, PTX's limit before ISA 8.1): a loop whose "
           "merge would take more starts a new run">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GAccDeviceResidentScalarsPass
    : Pass<"gacc-device-resident-scalars", "ModuleOp"> {
  let summary = "Keep a function's per-call and device-computed scalars on "
                "the device, so that its work can be captured as a CUDA "
                "graph";
  let description = [{
    Runs on the cuda target's host code at the `scf.parallel` level (after
    `gacc-linalg-to-parallel-loops`, before the GPU mapping), where every
    top-level `scf.parallel` becomes a kernel and everything else runs on
    the host. A CUDA graph captured from such a function replays its
    kernels with the arguments they had at capture, so no value that
    changes from call to call may be a kernel argument computed by the
    host, and the host may not read device memory (capture executes
    nothing). In each public function with a body (or each one named by
    `functions`):

    - every scalar argument (integer, index or float: the step's `lr`,
      `step`, `first_sample`, loss scale) becomes a rank-0 memref of its
      type in the same position: the caller writes it before a launch;
    - the host values that depend on those arguments or on a host
      `memref.load` are *tainted*, to a fixed point through `scf.for`
      carried values and `scf.if` results;
    - each maximal run of host `memref.load`/`memref.store` and tainted
      scalar arithmetic (untainted scalar arithmetic between them stays on
      the host and is captured) becomes one one-iteration `scf.parallel`
      (one device thread); tainted operands from outside the run are
      loaded from their rank-0 buffers, and results used after it are
      stored into new ones (allocated at the function's entry, freed
      before it returns);
    - tainted `scf.for` carried values and `scf.if` results live in such
      buffers: initialized before the loop, and updated at the end of each
      iteration (or branch) by one thread that loads every new value
      before storing any, so a loop that swaps two carried values stays
      correct; the loop or branch keeps its untainted values;
    - a branch on a tainted condition (an fp16 window skipped on a
      non-finite gradient) runs both sides' host code, each of their
      kernels guarded in its body by the condition loaded from its buffer
      (or its negation), the results through buffers both sides store
      into under their guards;
    - a kernel (`scf.parallel`) that reads a tainted value loads it from
      its buffer at the top of its body;
    - the results (scalars of one type T, R of them) are stored into a
      trailing `memref<R x T>` argument, and the function returns nothing.

    The graph form of a training step (abi/StepABI.h, `graphForm`) is what
    this gives. The rewrite is exact: the device computes what the host
    computed, with the same operations in the same order.

    Errors (one, at the op, naming the function): results of different or
    non-scalar types; a tainted loop bound or parallel-loop bound; a
    parallel loop with results the host would read; a call under a branch
    on a tainted condition; a tainted operand of any other op (a call, an
    allocation size, a view's offset, an `scf.while`), which the host
    would have to read; a name in `functions` that is no public func.func
    with a body.

    ```mlir
    %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %zero) -> f32 {
      scf.parallel ... { ... memref.store %loss, %l[] }   // a kernel
      %x = memref.load %l[] : memref<f32>                 // host read
      %t = arith.addf %s, %x : f32
      scf.yield %t : f32
    }
    return %sum : f32
    // becomes (with %s_buf and %t_buf allocated at the entry)
    scf.parallel (%u) = (%c0) to (%c1) step (%c1) { memref.store %zero, %s_buf[] }
    scf.for %i = %c0 to %c8 step %c1 {
      scf.parallel ... { ... memref.store %loss, %l[] }
      scf.parallel (%u) = (%c0) to (%c1) step (%c1) {
        %x = memref.load %l[]
        %s = memref.load %s_buf[]
        %t = arith.addf %s, %x : f32
        memref.store %t, %t_buf[]
      }
      scf.parallel (%u) = (%c0) to (%c1) step (%c1) {
        %t = memref.load %t_buf[]
        memref.store %t, %s_buf[]
      }
    }
    scf.parallel (%u) = (%c0) to (%c1) step (%c1) {
      %r = memref.load %s_buf[]
      memref.store %r, %results[%c0]
    }
    return
    ```
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The functions to rewrite (default: every public function "
               "with a body)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // GACC_PASSES_TD
