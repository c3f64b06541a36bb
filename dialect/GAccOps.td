//===- GAccOps.td - gacc operations -------------------------*- tablegen -*-===//
//
// Operations of the gacc dialect by level: the model level (parameters, the
// training step and its yield, the loss-scale placeholder, and the layer
// ops, which are aggregated ops that decompose into linalg), the
// accumulation level (accumulate, apply_optimizer), the fusion level
// (matmul_accumulate) and the collective of data-parallel steps
// (all_reduce).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_OPS_TD
#define GACC_OPS_TD

include "dialect/GAccDialect.td"
include "dialect/GAccAttrs.td"
include "dialect/GAccInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"
include "mlir/Dialect/Shard/Interfaces/ShardingInterface.td"

// Layer ops work on statically shaped tensors (the step is specialized for
// its micro-batch size).
def GAcc_F32Tensor : StaticShapeTensorOf<[F32]>;
// A matrix product's A or B operand: fp32, or a low-precision step's stored
// bf16 or fp16 values.
def GAcc_GemmOperandTensor : StaticShapeTensorOf<[F32, BF16, F16]>;
def GAcc_GemmOperandMemRef : MemRefRankOf<[F32, BF16, F16], [2]>;
def GAcc_LabelTensor : StaticShapeTensorOf<[I32, I64]>;
def GAcc_ScalarLoss : 0DTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

// A layer op: the users' vocabulary. It decomposes into upstream linalg,
// tensor, arith and math ops (linalg's AggregatedOpInterface), which is how
// convert-gacc-to-linalg lowers it and, unless it also implements
// DifferentiableOpInterface with a hand-written rule, how gacc-autodiff
// differentiates it. docs/adding-an-op.md lists what a new one needs.
// A layer op decomposes into linalg (AggregatedOpInterface) and states its
// iteration space the way upstream's structured ops do: its loops, parallel
// or reduction, and the affine map from them to each operand's and result's
// indices (shard::ShardingInterface; GAccShardingInterface.cpp). That is
// where the samples of a micro-batch go through it, what the training
// step's verifier follows (SampleIndependence.cpp).
class GAcc_LayerOp<string mnemonic, list<Trait> traits = []>
    : GAcc_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<AggregatedOpInterface,
                                  ["decomposeOperation"]>,
        DeclareOpInterfaceMethods<ShardingInterface,
                                  ["getLoopIteratorTypes", "getIndexingMaps"]>])>;

def GAcc_ParamOp : GAcc_Op<"param", [Symbol]> {
  let summary = "a persistent parameter with its initializer";
  let description = [{
    Declares one parameter: a statically shaped fp32 tensor that persists
    across optimizer steps (torch's layouts: a linear layer's weight is
    `[out_features, in_features]`). `frozen` marks it not trainable
    (torch's `requires_grad = False`, e.g. the pretrained weights under
    LoRA adapters): it gets no gradient, no accumulator, no optimizer state
    and no update, and does not count in the clipping norm. `initializer` is one of
    `#gacc.zeros`, `#gacc.constant<value>`, `#gacc.uniform<low, high>`,
    `#gacc.normal<mean, std>` or `#gacc.kaiming_uniform<fan_in>`; the runtime draws the values from the
    training step's `seed`.

    ```mlir
    gacc.param @fc1_weight : tensor<256x784xf32> = #gacc.kaiming_uniform<fan_in = 784>
    ```

    Errors: a type that is not a statically shaped f32 tensor, one with no
    elements or larger than 1 TiB, or an initializer that is not a gacc
    initializer attribute.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<GAcc_F32Tensor>:$type,
                       AnyAttr:$initializer,
                       UnitAttr:$no_weight_decay,
                       UnitAttr:$frozen);
  let assemblyFormat = "$sym_name `:` $type `=` $initializer attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def GAcc_TrainStepOp : GAcc_Op<"train_step", [
    Symbol, IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one optimizer step over accum_steps micro-batches";
  let description = [{
    A training step whose effective batch of `effective_batch` =
    `accum_steps` (N) × `micro_batch` (m) samples is processed as N
    micro-batches of m samples. The single-block region is the micro-batch
    body: its arguments are the parameters listed in `params` (in order, with
    their declared types) followed by the micro-batch inputs (each with
    leading dimension m; f32 features, i32 or i64 labels and token ids). It
    yields the loss of
    the micro-batch summed over its samples as `tensor<f32>`, the result of
    a loss op (one implementing `LossOpInterface`: gacc.cross_entropy or
    gacc.linear_cross_entropy) itself: a term added after it (a
    regularizer, a sum of two losses) is not supported (weight decay is
    the optimizer's); after
    `gacc-autodiff` it also yields one gradient per trainable parameter
    (those not `frozen`).

    `normalization` says how the summed loss of the whole effective batch is
    normalized (see `#gacc.normalization`); it is applied exactly once, in
    the deferred update, by a run-time count of the window's samples.
    `optimizer` is the update applied once per optimizer step
    (`#gacc.sgd`, `#gacc.adam`, `#gacc.adamw`, `#gacc.lion`); `lr_schedule`
    (`#gacc.lr_schedule`) moves its learning rate once per optimizer step;
    `max_grad_norm` clips the global L2 norm of the normalized accumulated
    gradient before the update (torch.nn.utils.clip_grad_norm_).
    `ema_decay` d keeps an exponential moving average of the weights,
    updated once per applied optimizer step (never per micro-batch) after
    the optimizer: ema = d · ema + (1 − d) · param, starting from the
    initial parameters (as timm's ModelEmaV2, Polyak averaging); it is the
    last optimizer-state tensor of each parameter and a skipped fp16 window
    leaves it unchanged. gacc-run evaluates it with `--eval-ema`.
    `precision` (`#gacc.precision`) is the body's compute precision and
    `loss_scaling` (`#gacc.loss_scaling`) its dynamic loss scaling. `seed`
    seeds the parameter initializers and the data order. `data_parallel`
    marks a step replicated over the ranks of a data-parallel job: each rank
    runs the N micro-batches of its own slice of the global effective batch
    (m × N × ranks samples), and gacc-expand-accumulation inserts exactly
    one `gacc.all_reduce` (sum) of the accumulators, the loss sum and the
    normalization count after the N-th micro-batch, before clipping and the
    update.

    ```mlir
    gacc.train_step @train params [@w, @b] attributes {
        accum_steps = 8 : i64, micro_batch = 32 : i64, effective_batch = 256 : i64,
        normalization = #gacc.normalization<mean>,
        optimizer = #gacc.sgd<lr = 0.05, momentum = 0.9>, seed = 0 : i64} {
    ^bb0(%w: tensor<10x784xf32>, %b: tensor<10xf32>, %x: tensor<32x784xf32>, %y: tensor<32xi32>):
      %z = gacc.linear %x, %w bias %b : tensor<32x784xf32>, tensor<10x784xf32>, tensor<10xf32> -> tensor<32x10xf32>
      %l = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
      gacc.yield %l : tensor<f32>
    }
    ```

    When m does not divide the effective batch E, N = ceil(E / m) and the
    last micro-batch of each window is ragged: it holds E − (N − 1) · m
    samples and padding that counts for nothing (targets at the loss's
    ignore_index), which the window's run-time count already covers.

    Errors: a name that is not an identifier (letters, digits and `_`, not
    starting with a digit: it names the compiled functions and kernels); a
    dynamically shaped value other than a `tensor.cast`'s, or one read by
    an op other than a `tensor.cast` (the round trip through a dynamic
    shape is the one the step allows);
    N or m not positive, or N × m beyond int64; a negative seed; effective_batch
    above N × m or not above
    (N − 1) × m; a symbol in
    `params` that is not a `gacc.param`, listed twice, or whose type differs
    from its block argument; a block argument (parameter or input) that is
    never used; an input whose leading dimension is not m or whose element
    type is not f32, i32 or i64; a tensor (input, an input's window of N
    micro-batches, or value of the body) with no elements or larger than
    1 TiB; an unranked tensor; in a model's body (yielding only its loss),
    an op gacc-autodiff builds (gacc.phase_begin, gacc.loss_scale,
    gacc.recompute_inputs, gacc.attention_backward); a yield that is
    not a scalar f32 loss (plus, after autodiff, one gradient per trainable
    parameter of the parameter's type); a yielded loss that is not a loss
    op's result (reported at the gacc.yield, naming the op that produces
    it; gacc-autodiff reports there, too, a loss that depends on no
    trainable parameter); loss targets that are not an input of the body
    (a value computed from one: the runtime fills and pads the targets
    input); an optimizer attribute gacc does not know; a
    max_grad_norm that is not positive; an ema_decay outside [0, 1); an op
    that depends on batch
    statistics without declaring their accumulation; any other op of the
    forward that mixes the samples of the micro-batch before the loss
    (reduces over them, reads them at anything but one loop index,
    combines two of them, or, in a tensor op, keeps some of them or moves
    them from their positions; a linalg payload may read a tensor of
    samples defined above it only with tensor.extract of each sample's own
    row, at the linalg.index of a parallel loop over the micro-batch that
    is dimension 0 of every result: verifySampleIndependence follows the
    inputs' leading dimension through the ops whose layout it knows), whose
    step would depend on the split into micro-batches and on padding.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefArrayAttr:$params,
                       I64Attr:$accum_steps,
                       I64Attr:$micro_batch,
                       OptionalAttr<I64Attr>:$effective_batch,
                       GAcc_NormalizationAttr:$normalization,
                       AnyAttr:$optimizer,
                       OptionalAttr<GAcc_LRScheduleAttr>:$lr_schedule,
                       OptionalAttr<F64Attr>:$max_grad_norm,
                       OptionalAttr<F64Attr>:$ema_decay,
                       OptionalAttr<GAcc_PrecisionAttr>:$precision,
                       OptionalAttr<GAcc_LossScalingAttr>:$loss_scaling,
                       DefaultValuedAttr<I64Attr, "0">:$seed,
                       UnitAttr:$data_parallel);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `params` $params attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    unsigned getNumParams() { return getParams().size(); }
    /// Block arguments holding the parameters.
    ::mlir::Block::BlockArgListType getParamArguments() {
      return getBodyBlock().getArguments().take_front(getNumParams());
    }
    /// Block arguments holding one micro-batch's inputs.
    ::mlir::Block::BlockArgListType getInputArguments() {
      return getBodyBlock().getArguments().drop_front(getNumParams());
    }
    /// True once gacc-autodiff has added the gradients to the yield.
    bool isDifferentiated();
    /// The yielded summed loss of the micro-batch.
    ::mlir::Value getLoss();
    /// The loss op that produces the yielded loss (the verifier requires
    /// one; null only in an unverified step).
    LossOpInterface getLossOp();
    /// The yielded gradients, one per trainable parameter (empty before
    /// gacc-autodiff).
    ::mlir::ValueRange getGradients();
    /// Whether parameter `i` (of `params`) is trainable (not `frozen`).
    bool isTrainable(unsigned i);
    /// The block arguments of the trainable parameters, in order.
    ::llvm::SmallVector<::mlir::BlockArgument> getTrainableParamArguments();
    /// The gacc.param ops named by `params`, in order.
    ::llvm::SmallVector<ParamOp> getParamOps();
    /// The forward's ops: the body's ops before `gacc.phase_begin backward`, or
    /// all but the terminator before gacc-autodiff. A clone recomputed in
    /// the backward (gacc-recompute-activations) is not among them.
    ::llvm::iterator_range<::mlir::Block::iterator> getForwardOps();
    /// The body's ops whose results depend on the whole micro-batch
    /// (BatchStatisticsOpInterface), in order.
    ::llvm::SmallVector<BatchStatisticsOpInterface> getBatchStatisticsOps();
    /// True when the loss is scaled before differentiation (fp16 bodies, or
    /// an explicit loss_scaling attribute).
    bool hasLossScaling() {
      return getLossScaling() ||
             (getPrecision() && *getPrecision() == Precision::fp16);
    }
    /// The loss-scaling parameters (GradScaler's defaults if implicit).
    LossScalingAttr getLossScalingOrDefault();
    /// Re-specializes the step for `accumSteps` (N) micro-batches of
    /// `microBatch` (m) samples and `effectiveBatch` (E) samples per window,
    /// (N - 1)·m < E ≤ N·m (TrainStepRetyping.cpp): sets the attributes,
    /// the leading dimension of every input, and re-types every op from its
    /// operands (inferred types, elementwise ops, linalg ops with their
    /// inits remade, linalg.softmax, tensor reshapes, slices, pads,
    /// concatenations, casts). Fails with a diagnostic on a schedule
    /// outside those bounds or naming the op that cannot follow.
    ::llvm::LogicalResult setSchedule(int64_t accumSteps, int64_t microBatch,
                                      int64_t effectiveBatch);
  }];
}

def GAcc_LossScaleOp : GAcc_Op<"loss_scale", [Pure, GAcc_BuiltByAutodiff,
    HasParent<"TrainStepOp">]> {
  let summary = "the current dynamic loss scale";
  let description = [{
    The loss scale of the optimizer step being run, as `tensor<f32>`: the
    adjoint of the loss that `gacc-autodiff` seeds the reverse pass with
    when the step scales its loss. `gacc-expand-accumulation` replaces it by
    the step function's run-time scale. Only a step with `loss_scaling`
    has one (an error otherwise).

    ```mlir
    %s = gacc.loss_scale : tensor<f32>
    ```
  }];
  let results = (outs GAcc_ScalarLoss:$scale);
  let assemblyFormat = "attr-dict `:` type($scale)";
  let hasVerifier = 1;
}

def GAcc_YieldOp : GAcc_Op<"yield", [Pure, Terminator, ReturnLike,
                                     HasParent<"TrainStepOp">]> {
  let summary = "yields the micro-batch loss (and gradients) of the body";
  let description = [{
    Terminates the body of `gacc.train_step`. The first operand is the loss
    summed over the micro-batch, `tensor<f32>`; after `gacc-autodiff` one
    gradient per parameter follows, with the parameter's type.

    ```mlir
    gacc.yield %loss : tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let builders = [OpBuilder<(ins), [{ }]>];
}

def GAcc_LinearOp : GAcc_LayerOp<"linear", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "fully connected layer y = x·Wᵀ + b";
  let description = [{
    Applies the affine map of `torch.nn.Linear`: for `input` [..., in]
    (rank ≥ 2: a micro-batch of vectors, or of sequences position-wise),
    `weight` [out, in] (torch's layout) and optional `bias` [out], the
    result [..., out] is `input · weightᵀ + bias`. All fp32.

    Decomposition: the leading dimensions collapsed into matrix rows, a
    `linalg.matmul` with the weight transposed through its indexing maps,
    a `linalg.generic` adding the bias to each row, the rows expanded back.
    No hand-written adjoint: gacc-autodiff differentiates the
    decomposition (the upstream matmul rule gives dx = dy · W and the
    weight gradient dW = dyᵀ · x as its own `linalg.matmul`, which
    `gacc-fuse-accumulation` computes straight into the accumulator; the
    bias rule gives db = Σ_rows dy, summed in f64).

    ```mlir
    %y = gacc.linear %x, %w bias %b : tensor<32x784xf32>, tensor<256x784xf32>, tensor<256xf32> -> tensor<32x256xf32>
    ```

    Errors: an input of rank < 2, a weight that is not rank 2, in-features
    that differ, a bias that is not [out], a result that is not [..., out].
  }];
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_F32Tensor:$weight,
                       Optional<GAcc_F32Tensor>:$bias);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def GAcc_ReluOp : GAcc_LayerOp<"relu", [SameOperandsAndResultType,
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>]> {
  let summary = "rectified linear unit max(x, 0)";
  let description = [{
    Elementwise max(x, 0) on an fp32 tensor of any shape (torch.nn.ReLU).
    Decomposition: one elementwise `linalg.generic` (`arith.maximumf`).
    Adjoint (hand-written: torch's threshold_backward(dy, result, 0), as
    torch's derivatives.yaml states it): dx = dy where y > 0, else 0, so
    x = 0 passes nothing, where the rule of `arith.maximumf` would split
    dy between x and 0. It reads the result, not the input (y > 0 exactly
    where x > 0, NaN included), so the pre-activation need not be kept
    for the backward, and a GEMM may write y directly (cuBLASLt's
    RELU_BIAS epilogue).

    ```mlir
    %a = gacc.relu %h : tensor<32x256xf32>
    ```
  }];
  let arguments = (ins GAcc_F32Tensor:$input);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def GAcc_CrossEntropyOp : GAcc_LayerOp<"cross_entropy", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<GAcc_LossOpInterface>]> {
  let summary = "softmax cross-entropy with integer class labels, summed";
  let description = [{
    For `logits` [m, C] or [m, S, C] (fp32) and `labels` [m] or [m, S] (i32
    or i64 class indices in [0, C)), returns Σ −log softmax(logits)[label]
    over every target as `tensor<f32>`, the sum over the micro-batch (and
    its sequence positions): `torch.nn.functional.cross_entropy(...,
    reduction='sum', ignore_index=ignore_index)` on the flattened targets. Samples whose label equals
    `ignore_index` (default −100, as torch) contribute nothing, and are not
    counted by the step's normalization. The training step divides by the
    window's count; this op never normalizes.

    The log-sum-exp is computed stably: max_j z_ij + log Σ_j exp(z_ij − max)
    (the decomposition: row maxima, one reduction of the exponentials and
    the label's logit, a sum over the rows in f64). Adjoint (hand-written:
    a loss): dz_ij = dL · (softmax(z_i)_j − [j = y_i]) for non-ignored
    rows.

    `label_smoothing` ε in [0, 1] (default 0) mixes the one-hot target with
    the uniform distribution over the C classes, with
    torch.nn.functional.cross_entropy's formula (Szegedy et al. 2016,
    "Rethinking the Inception Architecture"): each non-ignored row adds
    (1 − ε)·(−log p_iy) + (ε/C)·Σ_j (−log p_ij) = lse_i − Σ_j w_ij z_ij
    with w_ij = (1 − ε)·[j = y_i] + ε/C, and dz_ij = dL · (p_ij − w_ij).
    Ignored rows add nothing, so under `token_mean` the sum is divided by
    the window's non-ignored targets, as torch's mean over one batch.

    ```mlir
    %l = gacc.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
    %s = gacc.cross_entropy %z, %y {label_smoothing = 0.1 : f64} : tensor<32x10xf32>, tensor<32xi32> -> tensor<f32>
    ```

    Errors: logits that are not rank 2 or 3, labels whose shape is not the
    logits' shape without the class dimension, a label smoothing outside
    [0, 1], an `ignore_index` that is not a value of the labels' type.
  }];
  let arguments = (ins GAcc_F32Tensor:$logits, GAcc_LabelTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs GAcc_ScalarLoss:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->`
    type($loss)
  }];
  let hasVerifier = 1;
}

def GAcc_LinearCrossEntropyOp : GAcc_LayerOp<"linear_cross_entropy", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<GAcc_LossOpInterface>]> {
  let summary = "a classifier head and its cross-entropy in blocks of rows";
  let description = [{
    `gacc.cross_entropy` of the logits `gacc.linear` computes, without the
    logits: for `input` [m, K] or [m, S, K], `weight` [C, K], optional
    `bias` [C] and `labels` [m] or [m, S] (i32 or i64), returns
    Σ −log softmax(input·weightᵀ + bias)[label] over every target that is
    not `ignore_index`, with `label_smoothing` as `gacc.cross_entropy` (the
    formula of torch.nn.functional.cross_entropy, reduction='sum'). The
    prediction (what evaluation scores) is the logits [m, C] or [m, S, C].

    The rows (the targets, m·S) are processed in blocks of `row_block`
    (default: as many rows as keep a block's logits within 2^24 elements,
    64 MiB in fp32; all rows when C is small; never more than 128 blocks,
    which the verifier also asks of `row_block`, since each block is
    unrolled), so no [m·S, C] tensor exists:
    the memory of a language model's output layer over a large vocabulary
    (GPT-2's: [16·1024, 50304] logits, 3.1 GiB per fp32 copy). This is the
    "fused linear cross-entropy" of Liger Kernel (Hsu et al. 2024) and of
    Wijmans et al. 2024 ("Cut your losses in large-vocabulary language
    models"), here over blocks of rows. Decomposition, per block: the
    logits as a `linalg.matmul` (+ bias), the row statistics and the loss,
    chained in f64 in row order (the sum of one unblocked op).

    Adjoint (hand-written): per block, the logits are computed again from
    the input and weight (read through `gacc.recompute_inputs`, so CSE
    cannot merge them into the forward's), dz = dL·(softmax − target
    weights) as `gacc.cross_entropy`'s, then d input = dz·W for the block's
    rows, dW += dzᵀ·x and d bias += Σ_rows dz. The price is the head's
    product computed twice (three matrix products in the backward instead
    of two); `gacc-fuse-linear-cross-entropy` builds this op only where the
    logits are large. In a bf16/fp16 step the backward's recomputed logits
    are rounded like every value the body computes, the forward's (inside
    the op) are not.

    ```mlir
    %l = gacc.linear_cross_entropy %h, %w, %y : tensor<16x1024x768xf32>, tensor<50304x768xf32>, tensor<16x1024xi32> -> tensor<f32>
    %s = gacc.linear_cross_entropy %h, %w, %y bias %b {row_block = 256 : i64, label_smoothing = 0.1 : f64} : tensor<8x64xf32>, tensor<10x64xf32>, tensor<8xi32>, tensor<10xf32> -> tensor<f32>
    ```

    Errors: an input that is not rank 2 or 3, a weight that is not rank 2
    or whose in-features differ from the input's, an empty dimension (no
    rows, features or classes), a bias that is not [C],
    labels whose shape is not the input's without its last dimension, a
    label smoothing outside [0, 1], an `ignore_index` that is not a value
    of the labels' type, a `row_block` below 1 or one that gives more than
    128 blocks.
  }];
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_F32Tensor:$weight,
                       Optional<GAcc_F32Tensor>:$bias,
                       GAcc_LabelTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$row_block);
  let results = (outs GAcc_ScalarLoss:$loss);
  let assemblyFormat = [{
    $input `,` $weight `,` $labels (`bias` $bias^)? attr-dict `:`
    type($input) `,` type($weight) `,` type($labels) (`,` type($bias)^)?
    `->` type($loss)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Rows per block: `row_block`, or the most rows whose logits fit in
    /// kRowBlockElements (LinalgBuilders.h; at least 1), at most all the
    /// rows.
    int64_t getRowBlockOrDefault();
  }];
}

def GAcc_EmbeddingOp : GAcc_LayerOp<"embedding", [
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<GAcc_TableLookupOpInterface>]> {
  let summary = "embedding lookup y[..., :] = W[indices[...], :]";
  let description = [{
    `torch.nn.functional.embedding`: for `indices` [...] (i32 or i64 in
    [0, V)) and `weight` [V, D] (fp32), the result [..., D] holds the rows
    of the weight. Indices out of range are undefined behaviour (gacc-run
    validates its data).

    Decomposition: a `linalg.generic` that reads the table with
    `tensor.extract` (a gather, which gacc-autodiff cannot differentiate,
    hence the hand-written adjoint). Adjoint: dW = onehot(indices)ᵀ · dy, a
    matmul over the flattened positions, so `gacc-fuse-accumulation`
    writes it straight into the accumulator (the scatter-add of torch's
    embedding backward). The one-hot rows [positions, V] are built in
    blocks of positions that keep each within 2^24 elements (64 MiB), each
    block's product added into the one before it, so a large vocabulary
    (GPT-2's 50304 over 16 × 1024 positions: 3.1 GiB whole) never has its
    whole one-hot matrix. With more than one block the gradient is that
    running sum, which the accumulate adds elementwise (one [V, D]
    temporary), not a product written into the accumulator. The products
    cost positions·V·D multiply-adds, as the whole one did: a scatter-add
    would cost positions·D.

    ```mlir
    %e = gacc.embedding %tokens, %table : tensor<32x128xi32>, tensor<80x64xf32> -> tensor<32x128x64xf32>
    ```

    Errors: a weight that is not rank 2, a result that is not
    indices' shape + [D].
  }];
  let arguments = (ins GAcc_LabelTensor:$indices, GAcc_F32Tensor:$weight);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $indices `,` $weight attr-dict `:` type($indices) `,` type($weight) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def GAcc_LayerNormOp : GAcc_LayerOp<"layer_norm", [
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `torch.nn.functional.layer_norm(x, [D], weight, bias, eps)` (Ba et al.,
    2016, "Layer Normalization"): over the last dimension of `input`
    [..., D], y = (x − mean) / sqrt(var + eps) · weight + bias with the
    biased variance. `weight` and `bias` are [D]. All fp32.

    Decomposition: row means and reciprocal standard deviations, then one
    elementwise `linalg.generic`. Adjoint (hand-written: a normalization,
    whose closed form needs two row sums instead of the decomposition's
    chain), with x̂ = (x − mean)·rstd and g = dy·weight:
    dx = rstd · (g − mean_D(g) − x̂ · mean_D(g·x̂)),
    dweight = Σ dy·x̂, dbias = Σ dy (sums over every leading position).
    This op normalizes within one sample, so it does not depend on batch
    statistics.

    ```mlir
    %y = gacc.layer_norm %x, %g, %b : tensor<32x128x64xf32>, tensor<64xf32>, tensor<64xf32>
    ```

    Errors: an input of rank 0, weight or bias that is not [D], eps not
    positive, finite and normal in f32.
  }];
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_F32Tensor:$weight,
                       GAcc_F32Tensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight)
    `,` type($bias)
  }];
  let hasVerifier = 1;
}

def GAcc_GeluOp : GAcc_LayerOp<"gelu", [SameOperandsAndResultType,
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>]> {
  let summary = "Gaussian error linear unit (exact or tanh form)";
  let description = [{
    `torch.nn.functional.gelu(x, approximate=...)` (Hendrycks & Gimpel,
    2016): `approximate = "none"`: x·Φ(x) = 0.5·x·(1 + erf(x/√2));
    `"tanh"`: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).

    Decomposition: one elementwise `linalg.generic`. Adjoint (hand-written,
    torch's gelu_backward formula in one kernel), exact: Φ(x) + x·φ(x),
    φ(x) = exp(−x²/2)/√(2π); tanh: 0.5·(1 + t) +
    0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²).

    ```mlir
    %a = gacc.gelu %h {approximate = "tanh"} : tensor<32x128x64xf32>
    ```

    Errors: `approximate` other than "none" or "tanh".
  }];
  let arguments = (ins GAcc_F32Tensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def GAcc_DropoutOp : GAcc_LayerOp<"dropout", [
    AllTypesMatch<["input", "result"]>,
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<GAcc_RandomOpInterface>]> {
  let summary = "dropout whose mask is the same under any accumulation";
  let description = [{
    `torch.nn.functional.dropout(x, p, training=True)` (Srivastava et al.
    2014): each element is zeroed with probability `p` and the kept ones
    are scaled by 1/(1 − p), so the expectation is x; in evaluation (the
    predict function) the op is the identity. `input` is fp32 [m, ...],
    dimension 0 the micro-batch.

    The mask is a pure function, not a random state: element e (row-major
    position within its sample) of the sample with global index s in the
    epoch's order, at optimizer step t, under the step's seed, is kept when
    the Philox 4x32-10 word e mod 4 of counter (e div 4, s, t, `stream`)
    and key (seed mod 2³², seed div 2³²) is at least round(p · 2³²)
    (Salmon et al. 2011). So N micro-batches of m and one batch of N·m draw
    the same masks, as do ranks of a data-parallel step; a different
    optimizer step draws new ones. `stream` (default 0) tells the dropouts
    of a model apart: those of one forward pass must differ. PyTorch's
    generator (a state advanced per call) draws other masks; the
    distribution is the same.

    The key (seed, optimizer step, the global index of row 0), three i64
    values, is bound by `gacc-expand-accumulation` in every micro-batch; at
    the model level the op has none. Decomposition (with its key): one
    elementwise `linalg.generic` computing the Philox rounds from
    `linalg.index`. Adjoint (hand-written): dx = dropout(dy) with the same
    key and stream, so the backward draws the mask again instead of keeping
    it.

    ```mlir
    %d = gacc.dropout %h {p = 0.1 : f64, stream = 2 : i64} : tensor<16x128x128xf32>
    // after gacc-expand-accumulation:
    %d = gacc.dropout %h key(%seed, %step, %first) {p = 0.1 : f64, stream = 2 : i64} : tensor<16x128x128xf32>
    ```

    Errors: p outside [0, 1), a negative stream or one of 2³² or more, a
    key of other than three values, an input of rank 0. Decomposing it
    without a key is an error naming the pass that binds it.
  }];
  let arguments = (ins GAcc_F32Tensor:$input, Variadic<I64>:$key,
                       F64Attr:$p, DefaultValuedAttr<I64Attr, "0">:$stream);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input (`key` `(` $key^ `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Model level: sequence layers (SequenceOps.cpp)
//===----------------------------------------------------------------------===//

def GAcc_SoftmaxOp : GAcc_LayerOp<"softmax", [SameOperandsAndResultType,
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "softmax over the last dimension";
  let description = [{
    torch.softmax(x, dim=-1) for an fp32 tensor of rank ≥ 1, computed
    stably: exp(x − max) / Σ exp(x − max) along the last dimension.

    Decomposition: `linalg.softmax` on the last dimension (which upstream
    decomposes into its maximum, exponentials, sum and division).
    gacc-autodiff uses its closed-form adjoint dx = y ⊙ (dy − Σ dy ⊙ y)
    (torch's _softmax_backward_data).

    ```mlir
    %p = gacc.softmax %s : tensor<8x16x16xf32>
    ```

    Errors: a rank-0 input.
  }];
  let arguments = (ins GAcc_F32Tensor:$input);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def GAcc_AttentionOp : GAcc_LayerOp<"attention", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>]> {
  let summary = "scaled dot-product attention, optionally causal";
  let description = [{
    For `query`, `key` and `value` [m, H, T, d] (fp32: micro-batch, heads,
    positions, head size) the result [m, H, T, d] is
    softmax(q·kᵀ · scale + mask)·v per (sample, head), as
    torch.nn.functional.scaled_dot_product_attention (Vaswani et al. 2017,
    "Attention Is All You Need"): `scale` defaults to 1/sqrt(d); with
    `causal` the mask is −∞ above the diagonal (position i attends to
    positions j ≤ i), as is_causal=True.

    Blockwise, after memory-efficient and flash attention (Rabe and Staats
    2021, "Self-attention does not need O(n²) memory"; Dao 2023,
    "FlashAttention-2"): the queries are cut into blocks of `query_block`
    rows (default min(T, 128), or T/64 rounded up where that is larger; a
    value above T is one block; the last block may be shorter), and each
    block's scores and probabilities
    [m·H, rows, keys] exist only while that block is computed. A causal
    block of rows [r, r + n) reads only the keys [0, r + n): the blocks
    above the diagonal are never computed. Unlike FlashAttention, a block
    holds all the keys its rows see (one softmax per row, no running
    maximum), and the adjoint recomputes the softmax instead of keeping a
    log-sum-exp. The blocks are unrolled at compile time, each with its
    own product shapes: T / query_block blocks per op, at most 64
    (kMaxQueryBlocks: compile time grows with them).

    Decomposition, per block: the (m·H) heads as a batch, the scores
    q·kᵀ by one `linalg.batch_matmul` (kᵀ through its indexing map), a
    `linalg.generic` scaling them and masking the future, `linalg.softmax`
    over the keys, one `linalg.batch_matmul` with the values inserted into
    the block's rows of the result.

    Adjoint (hand-written): one `gacc.attention_backward`, whose
    decomposition keeps nothing of the forward's blocks; per query block,
    last first, the probabilities P are recomputed from q and k, then
    dv += Pᵀ·dO for the keys the block read, dP = dO·vᵀ,
    dS = P ⊙ (dP − D)·scale with D = rowsum(P ⊙ dP) (softmax's adjoint; a
    row's keys all lie in its block), dq = dS·k for the block's rows and
    dk += dSᵀ·q for its keys. Only q, k and v live across the
    forward/backward boundary, and the backward's transient bytes are those
    of one block. In a bf16/fp16 step the op's result (and the adjoint's)
    is rounded like every value the body computes; inside, only the
    adjoint's P and dS are, before their products, as FlashAttention-2's
    kernels round them. On the cuda target a bf16/fp16 step may run the
    pair as fused kernels instead (gacc-fuse-attention, cuDNN).

    ```mlir
    %o = gacc.attention %q, %k, %v {causal} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
    %p = gacc.attention %q, %k, %v {causal, query_block = 64 : i64} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
    ```

    Errors: operands that are not rank 4, not of one shape or with an empty
    dimension, a scale that is not positive, finite and normal in f32, a
    `query_block` below 1 or one that cuts T into more than 64 blocks.
  }];
  let arguments = (ins GAcc_F32Tensor:$query, GAcc_F32Tensor:$key,
                       GAcc_F32Tensor:$value, OptionalAttr<F64Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$query_block);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` type($query) `,` type($key)
    `,` type($value)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale of the scores: `scale`, or 1/sqrt(d).
    double getScaleOrDefault();
    /// Query rows per block: `query_block` (at most T), or min(T, 128).
    int64_t getQueryBlockOrDefault();
  }];
}

def GAcc_AttentionBackwardOp : GAcc_LayerOp<"attention_backward", [
    GAcc_BuiltByAutodiff,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the adjoint of gacc.attention: dq, dk and dv";
  let description = [{
    What gacc-autodiff emits for a `gacc.attention` %o = attention(q, k, v)
    whose result has the adjoint dO: `query`, `key` and `value` are the
    forward's operands, `output` its result o and `output_grad` dO, all
    [m, H, T, d] fp32; the results are dq, dk and dv of that shape. `scale`,
    `causal` and `query_block` are the forward's (defaults as there).

    Its decomposition is the blockwise adjoint of gacc.attention (after Dao
    2023, "FlashAttention-2", Algorithm 2, with the softmax recomputed from
    q and k per query block instead of read back from a log-sum-exp): per
    query block, last first, the probabilities P are recomputed, then
    dv += Pᵀ·dO, dP = dO·vᵀ, dS = P ⊙ (dP − rowsum(P ⊙ dP))·scale
    (torch's _softmax_backward_data), dq = dS·k for the block's rows and
    dk += dSᵀ·q for its keys. q, k and v are read through
    `gacc.recompute_inputs`, so that CSE cannot merge the recomputed blocks
    with the forward's; `output` is not read by the decomposition (it is
    for a fused kernel, `gacc.fused_attention_backward`, which needs it).
    A result nobody reads costs nothing once decomposed: its ops are dead.

    ```mlir
    %dq, %dk, %dv = gacc.attention_backward %q, %k, %v, %o, %do {causal} : tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>, tensor<16x4x128x32xf32>
    ```

    Errors: those of gacc.attention, and an output or output adjoint of
    another shape.
  }];
  let arguments = (ins GAcc_F32Tensor:$query, GAcc_F32Tensor:$key,
                       GAcc_F32Tensor:$value, GAcc_F32Tensor:$output,
                       GAcc_F32Tensor:$output_grad,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$query_block);
  let results = (outs GAcc_F32Tensor:$query_grad, GAcc_F32Tensor:$key_grad,
                      GAcc_F32Tensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $output_grad attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($output) `,`
    type($output_grad)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale of the scores: `scale`, or 1/sqrt(d).
    double getScaleOrDefault();
    /// Query rows per block: `query_block` (at most T), or min(T, 128).
    int64_t getQueryBlockOrDefault();
  }];
}

//===----------------------------------------------------------------------===//
// Model level: vision layers (VisionOps.cpp, VisionDecompositions.cpp)
//===----------------------------------------------------------------------===//

// Two spatial sizes (height, width), each ≥ 0 (padding) or ≥ 1.
def GAcc_Spatial2DAttr : ConfinedAttr<DenseI64ArrayAttr,
    [DenseArrayCount<2>]>;

def GAcc_Conv2DOp : GAcc_LayerOp<"conv2d", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "2-D convolution (cross-correlation) y = W ⋆ x + b, NCHW";
  let description = [{
    torch.nn.functional.conv2d: for `input` [N, C, H, W], `weight`
    [O, C / groups, KH, KW] (OIHW, torch's layout) and optional `bias` [O],
    the result [N, O, OH, OW] is
    y[n, o, i, j] = b[o] + Σ_{c, kh, kw} W[o, c, kh, kw] ·
                    xp[n, g·C/G + c, i·sh + kh·dh, j·sw + kw·dw]
    with g = o / (O / G) and xp the input zero-padded by `padding` on both
    sides of each spatial dimension; OH = (H + 2·ph − dh·(KH − 1) − 1) / sh
    + 1 (rounded down), and likewise OW. All fp32; `stride`, `padding`,
    `dilation` are [height, width] (defaults [1, 1], [0, 0], [1, 1]).

    Decomposition (per group): the padded input's KH·KW strided taps
    (`tensor.extract_slice`) stacked by `tensor.concat` and transposed into
    the im2col matrix [N·OH·OW, C/G·KH·KW], one `linalg.matmul` against the
    weight viewed as [O/G, C/G·KH·KW] (transposed through its indexing
    maps), the bias added per row, the result transposed back to NCHW;
    groups concatenated along the channels. No hand-written adjoint:
    gacc-autodiff differentiates the decomposition, so dx is the sum of the
    taps' strided scatters (col2im) and the weight gradient is a
    `linalg.matmul` (dyᵀ · im2col) that `gacc-fuse-accumulation` computes
    straight into the accumulator (β = 0 on the first micro-batch, 1
    after).

    ```mlir
    %y = gacc.conv2d %x, %w bias %b {padding = array<i64: 1, 1>} : tensor<32x1x28x28xf32>, tensor<32x1x3x3xf32>, tensor<32xf32> -> tensor<32x32x28x28xf32>
    ```

    Errors: an input or weight that is not rank 4 or has an empty
    dimension, groups < 1 or not
    dividing both channel counts, input channels ≠ weight channels ×
    groups, a bias that is not [O], a stride or dilation < 1, a padding
    < 0, a kernel of more than 1024 taps (KH·KW, each unrolled as one
    slice), a padding or dilation whose sizes overflow int64, an empty
    output, a result that is not the inferred shape.
  }];
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_F32Tensor:$weight,
                       Optional<GAcc_F32Tensor>:$bias,
                       DefaultValuedAttr<GAcc_Spatial2DAttr, "{1, 1}">:$stride,
                       DefaultValuedAttr<GAcc_Spatial2DAttr, "{0, 0}">:$padding,
                       DefaultValuedAttr<GAcc_Spatial2DAttr, "{1, 1}">:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

class GAcc_Pool2DOp<string mnemonic, string summaryText, string doc>
    : GAcc_LayerOp<mnemonic, [GAcc_RecomputableOpInterface,
        DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = summaryText;
  let description = doc;
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_Spatial2DAttr:$kernel,
                       OptionalAttr<GAcc_Spatial2DAttr>:$stride,
                       DefaultValuedAttr<GAcc_Spatial2DAttr, "{0, 0}">:$padding);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The stride, the kernel size when absent (torch's default).
    ::llvm::ArrayRef<int64_t> getStrideOrKernel() {
      return getStride() ? *getStride() : getKernel();
    }
  }];
}

def GAcc_MaxPool2DOp : GAcc_Pool2DOp<"max_pool2d",
    "2-D max pooling, NCHW", [{
    torch.nn.functional.max_pool2d (ceil_mode false, dilation 1): for
    `input` [N, C, H, W], the maximum of each `kernel` [KH, KW] window
    placed every `stride` (default: the kernel) on the input padded by
    `padding` with −∞ (at most half the kernel, as torch); OH = (H + 2·ph −
    KH) / sh + 1, rounded down.

    Decomposition: the KH·KW strided taps (`tensor.extract_slice`) folded
    left to right, in the window's row-major order, with `arith.maxnumf`.
    gacc-autodiff differentiates it: the rule of maxnumf gives a tie to its
    left operand, so the gradient goes to the first maximal element of the
    window, as torch's argmax does (NaNs are skipped, where torch would
    propagate them).

    ```mlir
    %p = gacc.max_pool2d %y {kernel = array<i64: 2, 2>} : tensor<32x32x28x28xf32> -> tensor<32x32x14x14xf32>
    ```

    Errors: an input that is not rank 4 or has an empty dimension, a
    kernel or stride < 1, a padding
    < 0 or above half the kernel, a kernel of more than 1024 taps (each
    unrolled as one slice), an empty output, a result that is not the
    inferred shape.
  }]>;

def GAcc_AvgPool2DOp : GAcc_Pool2DOp<"avg_pool2d",
    "2-D average pooling, NCHW", [{
    torch.nn.functional.avg_pool2d (ceil_mode false, count_include_pad
    true): the sum of each `kernel` window of the zero-padded input divided
    by KH·KW; windows and output size as `gacc.max_pool2d`.

    Decomposition: the strided taps added left to right, times 1/(KH·KW).

    ```mlir
    %p = gacc.avg_pool2d %y {kernel = array<i64: 2, 2>} : tensor<32x32x28x28xf32> -> tensor<32x32x14x14xf32>
    ```

    Errors: as `gacc.max_pool2d`.
  }]>;

def GAcc_GlobalAvgPool2DOp : GAcc_LayerOp<"global_avg_pool2d", [
    GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "global average pooling [N, C, H, W] -> [N, C]";
  let description = [{
    The mean over the spatial dimensions, torch.mean(x, dim=(2, 3)) (what
    torch.nn.AdaptiveAvgPool2d(1) computes, flattened): y[n, c] =
    Σ_{i, j} x[n, c, i, j] / (H·W), summed in f64.

    Decomposition: one `linalg.generic` reducing H and W into f64, scaled
    and rounded to f32.

    ```mlir
    %g = gacc.global_avg_pool2d %y : tensor<32x64x7x7xf32> -> tensor<32x64xf32>
    ```

    Errors: an input that is not rank 4 or has an empty dimension, a result
    that is not [N, C].
  }];
  let arguments = (ins GAcc_F32Tensor:$input);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def GAcc_GroupNormOp : GAcc_LayerOp<"group_norm", [
    SameOperandsAndResultElementType, GAcc_RecomputableOpInterface,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "group normalization over channel groups, NC*";
  let description = [{
    torch.nn.functional.group_norm (Wu and He 2018, "Group
    Normalization"): for `input` [N, C, ...] (rank ≥ 2) split into
    `num_groups` G groups of C/G consecutive channels, each (sample, group)
    is normalized by its own mean and biased variance over its channels and
    spatial positions, then scaled and shifted per channel:
    y = (x − μ_ng) / sqrt(σ²_ng + eps) · weight[c] + bias[c], weight and
    bias [C]. Its statistics are per sample, so unlike batch normalization
    it accumulates exactly: N × m equals 1 × (N·m).

    Decomposition: the input viewed as [N·G, C/G·spatial] rows, the row
    statistics of `gacc.layer_norm` (mean and 1/sqrt(biased variance + eps)),
    the normalized rows viewed back, then the per-channel affine map. No
    hand-written adjoint: gacc-autodiff differentiates the decomposition.

    ```mlir
    %n = gacc.group_norm %y, %g, %b {num_groups = 8 : i64} : tensor<32x32x14x14xf32>, tensor<32xf32>, tensor<32xf32>
    ```

    Errors: an input of rank < 2 or with an empty dimension, num_groups < 1
    or not dividing C, a
    weight or bias that is not [C], eps not positive, finite and normal in f32.
  }];
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_F32Tensor:$weight,
                       GAcc_F32Tensor:$bias, I64Attr:$num_groups,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,`
    type($weight) `,` type($bias)
  }];
  let hasVerifier = 1;
}

def GAcc_BatchNormOp : GAcc_LayerOp<"batch_norm", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<GAcc_DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<GAcc_BatchStatisticsOpInterface,
        ["getRunningStatistics", "setSampleMask", "buildInference"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "batch normalization with declared accumulation semantics";
  let description = [{
    `torch.nn.functional.batch_norm` (Ioffe & Szegedy, 2015) on `input`
    [m, C] or [m, C, H, W] (any rank ≥ 2: channels are dimension 1),
    `weight` and `bias` [C], f32. In training each channel is normalized by
    the mean and biased variance of the micro-batch over every dimension
    but the channels: y = (x − mean) / sqrt(var + eps) · weight + bias.
    `running_mean` and `running_var` name the `gacc.statistic` tensors [C]
    that keep torch's running statistics (persistent, neither trained nor
    accumulated); the predict function (evaluation) normalizes with them
    instead. `momentum` (torch's default 0.1) and `eps` (1e-5) are torch's.
    `sample_mask` [m] (1 counts, 0 does not) restricts the statistics to
    the samples of a ragged micro-batch; gacc-mask-batch-statistics sets
    it from the loss's padding targets (multiplied into a mask the model
    gives), so padding rows never count. A
    real sample whose targets are all the padding value (ignore_index) is
    told from padding by nothing in the step, so it does not count either
    (torch counts it); over [m, C] a micro-batch left with one counted
    sample is normalized with variance 0, which gacc-run's refusal of
    one-sample micro-batches (padding only) does not catch.

    The running statistics are updated by gacc-expand-accumulation, as
    `batch_statistics` declares (the verifier of `gacc.train_step` rejects
    an op that declares nothing):
    - `per_micro_batch`: PyTorch's behaviour. Once per micro-batch,
      running = (1 − momentum) · running + momentum · stat, with the
      micro-batch's mean and unbiased variance (n / (n − 1) · var, n the
      values per channel). Running mean 0, momentum 0.1 and 4 micro-batches
      with channel means 1, 2, 3, 4 end at 0.9049.
    - `per_window`: once per optimizer step, from the window's pooled mean
      and unbiased variance, combined exactly over the micro-batches with
      Chan, Golub and LeVeque's parallel formula (mean_ab = mean_a + δ·n_b/n,
      M2_ab = M2_a + M2_b + δ²·n_a·n_b/n, δ = mean_b − mean_a). The example
      above ends at 0.25 (0.1 × the window's mean 2.5): the running
      statistics are those of one batch of N·m, what evaluation sees after
      training with the large batch.
    In both modes the forward normalizes each micro-batch by its own
    statistics: normalizing by the window's would need every sample of
    the window before the first micro-batch's forward (its output, and
    so its gradient, depends on samples not yet seen), which is the large
    batch's memory that accumulation exists to avoid. So neither mode makes
    N × m equal 1 × (N·m) in the gradients; `per_window` makes the running
    statistics (and so evaluation) those of the large batch.

    Adjoint (hand-written, torch's batch_norm_backward): dbias = Σ dy,
    dweight = Σ dy·x̂ over every position (one pass, summed in f64) and
    dx = weight · rstd · (dy − k · (Σ dy + x̂ · Σ dy·x̂) / count) with k the
    sample mask (one pass), where differentiating the decomposition would
    take a pass over the activations per term.

    ```mlir
    gacc.statistic @bn_mean : tensor<64xf32> = #gacc.zeros
    gacc.statistic @bn_var : tensor<64xf32> = #gacc.constant<value = 1.0>
    %y = gacc.batch_norm %x, %g, %b running(@bn_mean, @bn_var) {batch_statistics = #gacc.batch_statistics<per_window>} : tensor<32x64x14x14xf32>, tensor<64xf32>, tensor<64xf32>
    ```

    Errors: an input of rank < 2 or with an empty dimension; weight or bias
    that is not [C]; one value per channel (dimension 0 times the spatial
    ones: a [1, C] input; torch: "Expected more than 1 value per channel
    when training"); a sample_mask that is not [m]; eps not positive, finite
    and normal in f32; momentum outside [0, 1]; running statistics that do not
    name a `gacc.statistic` of type [C] f32, or name the same one twice; a
    running_var whose initializer can be negative. gacc-run refuses a
    window with a micro-batch of one real sample for a [m, C] input (no
    variance; torch raises), and a loaded running_var below 0.
  }];
  let arguments = (ins GAcc_F32Tensor:$input, GAcc_F32Tensor:$weight,
                       GAcc_F32Tensor:$bias,
                       Optional<GAcc_F32Tensor>:$sample_mask,
                       FlatSymbolRefAttr:$running_mean,
                       FlatSymbolRefAttr:$running_var,
                       DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       OptionalAttr<GAcc_BatchStatisticsAttr>:$batch_statistics);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias (`mask` $sample_mask^)? `running` `(`
    $running_mean `,` $running_var `)` attr-dict `:` type($input) `,`
    type($weight) `,` type($bias) (`,` type($sample_mask)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The micro-batch's statistics (training mode), over the samples
    /// the mask counts: `count` (tensor<f32>, values per channel), `mean`
    /// and biased `variance` ([C]).
    struct Statistics {
      ::mlir::Value count, mean, variance;
    };
    Statistics buildStatistics(::mlir::OpBuilder &b);
  }];
}

def GAcc_StatisticOp : GAcc_Op<"statistic", [Symbol]> {
  let summary = "persistent running statistics (neither trained nor accumulated)";
  let description = [{
    A persistent f32 tensor that a layer op updates as it trains and reads
    in evaluation (torch's buffers: BatchNorm's `running_mean` and
    `running_var`). It has no gradient, accumulator or optimizer state;
    gacc-run initializes it from `initializer`, saves it with the
    parameters (--save-params, checkpoints) under its name and loads it
    with --load-params.

    ```mlir
    gacc.statistic @bn1_running_var : tensor<32xf32> = #gacc.constant<value = 1.0>
    ```

    Errors: as `gacc.param`'s.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<GAcc_F32Tensor>:$type,
                       AnyAttr:$initializer);
  let assemblyFormat = "$sym_name `:` $type `=` $initializer attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Gradient level
//===----------------------------------------------------------------------===//

// The order of a training step's phases (mlir::gacc::PhaseResource).
def GAcc_PhaseResource : Resource<"::mlir::gacc::PhaseResource">;

def GAcc_PhaseBeginOp : GAcc_Op<"phase_begin", [GAcc_BuiltByAutodiff,
    MemoryEffects<[MemWrite<GAcc_PhaseResource>]>]> {
  let summary = "marks where a phase of the training step begins";
  let description = [{
    Marks the point where a phase of the step begins: `forward` (a
    micro-batch's forward ops), `backward` (its adjoint ops) or `update`
    (the optimizer step after the window's micro-batches: the collective,
    the norm, the update). `gacc-autodiff` places a `backward` one after
    the forward ops of a training step's body and before the first adjoint
    op; `gacc-expand-accumulation` places a `forward` one at the start of
    each micro-batch and an `update` one before the optimizer step. The ops
    before the first marker set the step up. It computes nothing: it tells
    the memory plan (`gacc-plan-memory`) which buffers are activations
    (written in the forward and still live at a `backward` marker, so kept
    across the forward/backward boundary) and which are temporaries, and
    the phase of each op of the plan, also where a single micro-batch's
    loop is folded away. It survives bufferization (an effect on a
    resource of its own keeps canonicalization and CSE from erasing it)
    and `convert-gacc-to-scf` erases it.

    ```mlir
    gacc.phase_begin backward
    ```

    Errors (`gacc.train_step`'s verifier): in a training step's body, a
    phase other than `backward`; in a model's body, any marker; in a
    differentiated body, a second `backward` marker, or one before the op
    that computes the loss.
  }];
  let arguments = (ins GAcc_StepPhase:$phase);
  let assemblyFormat = "$phase attr-dict";
}

def GAcc_RecomputeInputsOp : GAcc_Op<"recompute_inputs", [
    GAcc_BuiltByAutodiff,
    MemoryEffects<[MemWrite<GAcc_PhaseResource>]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the kept inputs of ops recomputed in the backward";
  let description = [{
    `gacc-recompute-activations` clones forward ops marked for
    recomputation into the backward; the values those clones read from the
    forward (the inputs of the recomputed region, which stay live across
    the forward/backward boundary) pass through this op. It returns its
    operands unchanged (results have the operands' types, one for one). Its
    effect on the phase resource (the one `gacc.phase_begin` writes)
    keeps CSE from merging the clones back into the forward ops they copy,
    which would undo the recomputation. Bufferization replaces each result
    by its operand's buffer, without a copy.

    ```mlir
    %x2, %w2 = gacc.recompute_inputs %x, %w : tensor<16x128xf32>, tensor<128xf32>
    %y2 = gacc.gelu %x2 {approximate = "tanh"} : tensor<16x128xf32>
    ```

    Errors: no operand.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Accumulation level
//===----------------------------------------------------------------------===//

def GAcc_AccumulateOp : GAcc_Op<"accumulate", [Pure,
    AllTypesMatch<["gradient", "accumulator", "result"]>]> {
  let summary = "adds one micro-batch's gradient into its accumulator";
  let description = [{
    result = first ? gradient : accumulator + gradient, elementwise, fp32.
    The first micro-batch of a window writes the accumulator (the old
    contents are never read, so no zero-fill exists) and later ones add.
    `gacc-fuse-accumulation` turns a matmul-produced gradient into a
    `gacc.matmul_accumulate` and every other accumulate into one elementwise
    kernel.

    ```mlir
    %acc1 = gacc.accumulate %g into %acc0 first %is_first : tensor<256xf32>
    ```
  }];
  let arguments = (ins GAcc_F32Tensor:$gradient, GAcc_F32Tensor:$accumulator,
                       I1:$first);
  let results = (outs GAcc_F32Tensor:$result);
  let assemblyFormat = [{
    $gradient `into` $accumulator `first` $first attr-dict `:` type($result)
  }];
}

def GAcc_ApplyOptimizerOp : GAcc_Op<"apply_optimizer", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "the deferred optimizer update of one parameter";
  let description = [{
    Applies `optimizer` once per optimizer step to one parameter. The
    gradient is `accumulator / count`: the accumulator holds the sum of the
    window's per-sample gradients and `count` (f32, run time) is the
    window's normalization count (its real number of samples for `mean`, 1
    for `sum`), so a short window is normalized by what it holds. `lr` (f32)
    is this step's learning rate and `step` (i64) the number of optimizer
    steps already taken (0 on the first, where SGD's momentum buffer is set
    to the gradient). `state` holds the optimizer's per-parameter state
    (SGD: the momentum buffer when momentum ≠ 0; Adam: two moments). The
    optional `clip` (f32) multiplies the normalized gradient (the global
    norm clipping coefficient); `no_weight_decay` turns weight decay off for
    this parameter. Results: the updated parameter, then the updated state,
    with the operands' types.

    ```mlir
    %p1, %m1 = gacc.apply_optimizer #gacc.sgd<lr = 0.05, momentum = 0.9> param(%p) accumulator(%acc) state(%m) count(%n) lr(%lr) step(%k) : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, f32, f32, i64) -> (tensor<10xf32>, tensor<10xf32>)
    ```

    Errors: an unknown optimizer, a state count other than the optimizer's,
    or types that differ from the parameter's.
  }];
  let arguments = (ins AnyAttr:$optimizer, GAcc_F32Tensor:$param,
                       GAcc_F32Tensor:$accumulator,
                       Variadic<GAcc_F32Tensor>:$state, F32:$count,
                       Optional<F32>:$clip, F32:$lr, I64:$step,
                       UnitAttr:$no_weight_decay);
  let results = (outs GAcc_F32Tensor:$new_param,
                      Variadic<GAcc_F32Tensor>:$new_state);
  let assemblyFormat = [{
    $optimizer `param` `(` $param `)` `accumulator` `(` $accumulator `)`
    (`state` `(` $state^ `)`)? `count` `(` $count `)`
    (`clip` `(` $clip^ `)`)? `lr` `(` $lr `)` `step` `(` $step `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion level
//===----------------------------------------------------------------------===//

def GAcc_MatmulAccumulateOp : GAcc_Op<"matmul_accumulate", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "a matrix product written straight into an accumulator";
  let description = [{
    C = β·C + op(A)·op(B) with β = 0 when `first` is true and β = 1
    otherwise, where op(X) = Xᵀ when `transpose_a`/`transpose_b` is set.
    Rank 2: op(A) is [M, K], op(B) [K, N], C [M, N]. C is fp32; A and B are
    fp32, or both bf16 or both fp16 (a low-precision step's stored values,
    gacc-narrow-stored-values): each product is then of the operands
    extended to fp32, which is exact, and sums in fp32. With β = 0 the
    old contents of C are never read (BLAS semantics), so the first
    micro-batch of a window writes its accumulator without a zero-fill.
    It is the weight gradient of a linear layer fused with its accumulate:
    there is no temporary gradient tensor.

    The op is in destination style and works on tensors (C is the init and
    the result) or on memrefs after bufferization (no result). On the CPU it
    becomes `cblas_sgemm` with beta = 0 or 1 (`convert-gacc-to-blas`);
    elsewhere a loop nest (`convert-gacc-to-scf`).

    ```mlir
    %acc1 = gacc.matmul_accumulate %dy, %x into %acc0 first %f {transpose_a} : tensor<32x256xf32>, tensor<32x784xf32> into tensor<256x784xf32> -> tensor<256x784xf32>
    ```

    Errors: operands that are not rank 2, an accumulator that is not f32
    or operands of other element types, A and B of different element types, shapes that do not agree, tensors
    mixed with memrefs, a result on the memref form.
  }];
  let arguments = (ins AnyTypeOf<[GAcc_GemmOperandTensor, GAcc_GemmOperandMemRef]>:$a,
                       AnyTypeOf<[GAcc_GemmOperandTensor, GAcc_GemmOperandMemRef]>:$b,
                       AnyTypeOf<[GAcc_F32Tensor, MemRefRankOf<[F32], [2]>]>:$accumulator,
                       I1:$first, UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Optional<GAcc_F32Tensor>:$result);
  let assemblyFormat = [{
    $a `,` $b `into` $accumulator `first` $first attr-dict `:` type($a) `,`
    type($b) `into` type($accumulator) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getAccumulatorMutable();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Fused kernels (FusedAttention.cpp)
//===----------------------------------------------------------------------===//

// A fused attention kernel's [m, H, T, d] operands: a low-precision step's
// bf16 or fp16 values, as tensors or, bufferized, as memrefs; and its
// softmax statistics [m, H, T, 1], fp32.
def GAcc_AttentionIO : AnyTypeOf<[StaticShapeTensorOf<[BF16, F16]>,
                                  MemRefRankOf<[BF16, F16], [4]>]>;
def GAcc_AttentionStats : AnyTypeOf<[StaticShapeTensorOf<[F32]>,
                                     MemRefRankOf<[F32], [4]>]>;

def GAcc_FusedAttentionOp : GAcc_Op<"fused_attention", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "scaled dot-product attention as one fused kernel, with its "
                "softmax statistics";
  let description = [{
    gacc.attention of bf16 or fp16 `query`, `key` and `value` [m, H, T, d]
    as one kernel that never stores the T × T scores (Dao 2023,
    "FlashAttention-2"): `output` = softmax(q·kᵀ·scale + mask)·v with the
    mask −∞ above the diagonal when `causal`, in the operands' type with
    fp32 sums, and `stats` [m, H, T, 1] fp32 = the log-sum-exp of each
    row's scaled, masked scores (FlashAttention-2's L, cuDNN's softmax
    statistics), which the backward reads instead of recomputing the
    softmax's normalizer. `scale` is the resolved scale (1/sqrt(d) when the
    forward had none).

    gacc-fuse-attention builds it on the cuda target; convert-gacc-to-cudnn
    lowers its memref form to the runtime's cuDNN scaled-dot-product
    attention (runtime/CudnnAttention.h). It is in destination style:
    `output` and `stats` are the inits (written, never read), the tensor
    form returns them, the memref form (after bufferization) has no
    results.

    ```mlir
    %o, %l = gacc.fused_attention %q, %k, %v into %o0, %l0 {causal, scale = 0.125 : f64} : tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16> into tensor<2x4x128x32xbf16>, tensor<2x4x128x1xf32> -> tensor<2x4x128x32xbf16>, tensor<2x4x128x1xf32>
    ```

    Errors: operands that are not rank 4 or have an empty dimension,
    bf16/fp16 operands of different shapes or element types (memrefs may
    differ in layout: q, k and v are often strided views), statistics that
    are not [m, H, T, 1], tensors mixed with memrefs,
    results other than the inits' types on tensors or any on memrefs, a
    scale that is not positive, finite and normal in f32.
  }];
  let arguments = (ins GAcc_AttentionIO:$query, GAcc_AttentionIO:$key,
                       GAcc_AttentionIO:$value, GAcc_AttentionIO:$output,
                       GAcc_AttentionStats:$stats, F64Attr:$scale,
                       UnitAttr:$causal);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $output `,` $stats attr-dict `:`
    type($query) `,` type($key) `,` type($value) `into` type($output) `,`
    type($stats) (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(getOperation(), 3, 2);
    }
  }];
}

def GAcc_FusedAttentionBackwardOp : GAcc_Op<"fused_attention_backward", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "the adjoint of gacc.fused_attention as one fused kernel";
  let description = [{
    dq, dk and dv [m, H, T, d] of a `gacc.fused_attention` from its
    operands `query`, `key` and `value`, its `output`, the output's adjoint
    `output_grad` and its `stats` (FlashAttention-2's backward pass, Dao
    2023, Algorithm 2): per row P = exp(q·kᵀ·scale + mask − stats),
    D = rowsum(dO ⊙ o), dv = Pᵀ·dO, dS = P ⊙ (dO·vᵀ − D), dq = dS·k·scale,
    dk = dSᵀ·q·scale, in the operands' type with fp32 sums. `scale` and
    `causal` are the forward's.

    Destination style like gacc.fused_attention: `query_grad`, `key_grad`
    and `value_grad` are the inits (written, never read).
    convert-gacc-to-cudnn lowers the memref form to the runtime's cuDNN
    backward.

    ```mlir
    %dq, %dk, %dv = gacc.fused_attention_backward %q, %k, %v, %o, %do, %l into %dq0, %dk0, %dv0 {causal, scale = 0.125 : f64} : tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x1xf32> into tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16> -> tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>
    ```

    Errors: those of gacc.fused_attention.
  }];
  let arguments = (ins GAcc_AttentionIO:$query, GAcc_AttentionIO:$key,
                       GAcc_AttentionIO:$value, GAcc_AttentionIO:$output,
                       GAcc_AttentionIO:$output_grad,
                       GAcc_AttentionStats:$stats,
                       GAcc_AttentionIO:$query_grad,
                       GAcc_AttentionIO:$key_grad,
                       GAcc_AttentionIO:$value_grad, F64Attr:$scale,
                       UnitAttr:$causal);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $output_grad `,` $stats
    `into` $query_grad `,` $key_grad `,` $value_grad attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($output) `,`
    type($output_grad) `,` type($stats) `into` type($query_grad) `,`
    type($key_grad) `,` type($value_grad) (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(getOperation(), 6, 3);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

def GAcc_AllReduceOp : GAcc_Op<"all_reduce", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DestinationStyleOpInterface]> {
  let summary = "sum a flat fp32 buffer over the ranks of a data-parallel job";
  let description = [{
    Every rank of the data-parallel group passes a 1-D fp32 buffer of the
    same size; afterwards each holds the elementwise sum over all ranks
    (MPI_Allreduce with MPI_SUM, in place). On a single process it is the
    identity. gacc-expand-accumulation emits exactly one per optimizer step
    for a `data_parallel` step, over a buffer that packs every accumulator
    followed by the window's loss sum and normalization count, so the count
    of a token mean is the token count of the global effective batch.

    The op is in destination style: on tensors the buffer is the init and
    the result; on memrefs (after bufferization) it has no result and
    reduces the buffer in place. Both forms communicate, so neither is ever
    folded, merged (CSE) or erased. `convert-gacc-to-runtime` lowers the
    memref form to the runtime's `gacc_all_reduce_sum_f32` (runtime/
    Collectives.cpp), which counts the collectives it performs.

    ```mlir
    %sum = gacc.all_reduce %packed : tensor<203532xf32> -> tensor<203532xf32>
    gacc.all_reduce %buffer : memref<203532xf32>
    ```

    Errors: a buffer that is not a 1-D f32 tensor or memref; a tensor form
    without a result of the buffer's type; a memref form with a result; a
    memref outside the default memory space.
  }];
  let arguments = (ins AnyTypeOf<[1DTensorOf<[F32]>, MemRefRankOf<[F32], [1]>]>:$buffer);
  let results = (outs Optional<1DTensorOf<[F32]>>:$result);
  let assemblyFormat = [{
    $buffer attr-dict `:` type($buffer) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getBufferMutable();
    }
  }];
}

#endif // GACC_OPS_TD
