//===- GAccAttrs.td - gacc attributes -----------------------*- tablegen -*-===//
//
// The attributes of the training step: loss normalization, precision, loss
// scaling, batch statistics, parameter initializers (with the
// distribution each stands for), learning-rate schedules and optimizers.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ATTRS_TD
#define GACC_ATTRS_TD

include "dialect/GAccDialect.td"
include "dialect/GAccInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class GAcc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GAcc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Loss normalization
//===----------------------------------------------------------------------===//

def GAcc_NormalizationMean : I32EnumAttrCase<"mean", 0>;
def GAcc_NormalizationSum : I32EnumAttrCase<"sum", 1>;
def GAcc_NormalizationTokenMean : I32EnumAttrCase<"token_mean", 2>;
def GAcc_Normalization : I32EnumAttr<"Normalization",
    "how the summed loss of an effective batch is normalized",
    [GAcc_NormalizationMean, GAcc_NormalizationSum,
     GAcc_NormalizationTokenMean]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gacc";
}
def GAcc_NormalizationAttr : EnumAttr<GAcc_Dialect, GAcc_Normalization,
                                      "normalization"> {
  let summary = "loss normalization of the effective batch";
  let description = [{
    `mean`: the objective is the summed loss divided by the number of
    samples the optimizer step's window really holds (its run-time sample
    count; samples whose label is the loss's `ignore_index` are not counted),
    as `torch.nn.CrossEntropyLoss(reduction='mean')` over the whole effective
    batch. `sum`: the summed loss, not divided. `token_mean`: divided by the
    number of non-ignored targets (tokens) of the whole window, across its
    micro-batches (and ranks), for sequence losses such as a language
    model's next-token cross-entropy.
  }];
  let assemblyFormat = "`<` custom<EnumKeyword>($value) `>`";
}

//===----------------------------------------------------------------------===//
// Phases of a training step
//===----------------------------------------------------------------------===//

def GAcc_StepPhaseForward : I32EnumAttrCase<"forward", 0>;
def GAcc_StepPhaseBackward : I32EnumAttrCase<"backward", 1>;
def GAcc_StepPhaseUpdate : I32EnumAttrCase<"update", 2>;
def GAcc_StepPhase : I32EnumAttr<"StepPhase",
    "a phase of a training step: a micro-batch's forward or backward, or "
    "the optimizer step's update",
    [GAcc_StepPhaseForward, GAcc_StepPhaseBackward, GAcc_StepPhaseUpdate]> {
  let cppNamespace = "::mlir::gacc";
}

//===----------------------------------------------------------------------===//
// Mixed precision
//===----------------------------------------------------------------------===//

def GAcc_PrecisionFP32 : I32EnumAttrCase<"fp32", 0>;
def GAcc_PrecisionBF16 : I32EnumAttrCase<"bf16", 1>;
def GAcc_PrecisionFP16 : I32EnumAttrCase<"fp16", 2>;
def GAcc_Precision : I32EnumAttr<"Precision",
    "the compute precision of a training step's body",
    [GAcc_PrecisionFP32, GAcc_PrecisionBF16, GAcc_PrecisionFP16]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gacc";
}
def GAcc_PrecisionAttr : EnumAttr<GAcc_Dialect, GAcc_Precision, "precision"> {
  let summary = "compute precision of the micro-batch body";
  let description = [{
    `fp32` (default), `bf16` or `fp16`. Parameters, accumulators and
    optimizer state stay fp32. With bf16/fp16 the body reads a low-precision
    copy of the parameters made once per optimizer step (before the
    micro-batch loop), its inputs and every intermediate value (activations,
    adjoints) are rounded to the compute precision where they are produced,
    and products accumulate in fp32 (as tensor cores do). The gradients that
    enter the accumulators are fp32 results and are never rounded to the low
    precision, nor are the products they are reshaped, transposed, sliced
    or summed from (a convolution's weight gradient, a tied weight's two
    contributions). The rounding is expressed as `arith.truncf` then
    `arith.extf` where each value is produced, so every pass before
    bufferization sees fp32 values; gacc-narrow-stored-values then stores
    the rounded values in tensors of the compute type (half the bytes: the
    activations kept for the backward above all), which changes no value.
  }];
  let assemblyFormat = "`<` custom<EnumKeyword>($value) `>`";
}

def GAcc_LossScalingAttr : GAcc_Attr<"LossScaling", "loss_scaling"> {
  let summary = "dynamic loss scaling (torch.cuda.amp.GradScaler)";
  let description = [{
    The loss is multiplied by the scale before differentiation; the
    accumulators, which hold the scaled sums, are checked for non-finite
    values once per window at its boundary. A window with any non-finite
    value skips the update, its accumulators are set to zero, the scale is
    multiplied by `backoff_factor` and the skip counted; after
    `growth_interval` clean steps the scale is multiplied by
    `growth_factor`. Defaults are GradScaler's. Active for fp16 bodies (with
    these defaults unless given) or whenever present.

    The update divides the accumulators by the window's count times the
    scale, in f32: a window where that product is infinite (a scale grown
    past 3.4e38 / count, where the gradients are small enough never to
    overflow, as in a bf16 or fp32 body) is skipped and backs off like an
    overflow, instead of applying a gradient of 0.

    Errors: `init_scale` must be positive, `growth_factor` above 1,
    `backoff_factor` in (0, 1), each as the f32 the step computes with
    (1e-50 is 0 in f32), and `growth_interval` positive.

    The scale multiplies the micro-batch's summed loss (its samples' or
    tokens' sum: the step divides by the window's count once, at the
    update), where GradScaler's usually multiplies a mean: a micro-batch of
    k targets overflows as torch would at a scale k times larger, so the
    first windows of a step with large micro-batches may be skipped while
    the scale backs off (each halving one skipped optimizer step). An
    `init_scale` of 65536 / k starts where torch's would be.

    Example: `#gacc.loss_scaling<init_scale = 4096.0>`
  }];
  let parameters = (ins
    DefaultValuedParameter<"::llvm::APFloat",
        "::llvm::APFloat(::gacc::abi::kLossScaleInit)">:$init_scale,
    DefaultValuedParameter<"::llvm::APFloat",
        "::llvm::APFloat(::gacc::abi::kLossScaleGrowthFactor)">:$growth_factor,
    DefaultValuedParameter<"::llvm::APFloat",
        "::llvm::APFloat(::gacc::abi::kLossScaleBackoffFactor)">:$backoff_factor,
    DefaultValuedParameter<"int64_t",
        "::gacc::abi::kLossScaleGrowthInterval">:$growth_interval
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Batch statistics
//===----------------------------------------------------------------------===//

def GAcc_BatchStatisticsPerMicroBatch : I32EnumAttrCase<"per_micro_batch", 0>;
def GAcc_BatchStatisticsPerWindow : I32EnumAttrCase<"per_window", 1>;
def GAcc_BatchStatistics : I32EnumAttr<"BatchStatistics",
    "how an op's batch statistics behave under gradient accumulation",
    [GAcc_BatchStatisticsPerMicroBatch, GAcc_BatchStatisticsPerWindow]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::gacc";
}
def GAcc_BatchStatisticsAttr : EnumAttr<GAcc_Dialect, GAcc_BatchStatistics,
                                        "batch_statistics"> {
  let summary = "declared accumulation of an op's batch statistics";
  let description = [{
    An op whose result depends on statistics of the whole batch (BatchNorm's
    mean and variance) cannot be exact under gradient accumulation by
    accident: each micro-batch sees only its own samples. The op must say
    what it does. `per_micro_batch`: statistics of each micro-batch alone
    (what frameworks do), accepted knowingly, so the accumulated step is
    not the large-batch step for this op; running statistics move once per
    micro-batch. `per_window`: each micro-batch is still normalized with
    its own statistics, but the running statistics move once per optimizer
    step, from the pooled statistics of the whole window (see
    `gacc.batch_norm`).
  }];
  let assemblyFormat = "`<` custom<EnumKeyword>($value) `>`";
}

//===----------------------------------------------------------------------===//
// Parameter initializers
//===----------------------------------------------------------------------===//

def GAcc_ZerosInitAttr : GAcc_Attr<"ZerosInit", "zeros",
    [DeclareAttrInterfaceMethods<GAcc_InitializerAttrInterface>]> {
  let summary = "initializes every element to 0";
  let description = [{
    Example: `gacc.param @bias : tensor<10xf32> = #gacc.zeros`
  }];
}

def GAcc_ConstantInitAttr : GAcc_Attr<"ConstantInit", "constant",
    [DeclareAttrInterfaceMethods<GAcc_InitializerAttrInterface>]> {
  let summary = "initializes every element to one value";
  let description = [{
    `torch.nn.init.constant_`; e.g. a layer norm's weight starts at 1.

    Example: `#gacc.constant<value = 1.0>`
  }];
  let parameters = (ins "::llvm::APFloat":$value);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GAcc_UniformInitAttr : GAcc_Attr<"UniformInit", "uniform",
    [DeclareAttrInterfaceMethods<GAcc_InitializerAttrInterface>]> {
  let summary = "initializes from U(low, high)";
  let description = [{
    Each element is drawn independently from the uniform distribution on
    [low, high), as `torch.nn.init.uniform_`.

    Example: `#gacc.uniform<low = -0.1, high = 0.1>`
  }];
  let parameters = (ins "::llvm::APFloat":$low, "::llvm::APFloat":$high);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GAcc_NormalInitAttr : GAcc_Attr<"NormalInit", "normal",
    [DeclareAttrInterfaceMethods<GAcc_InitializerAttrInterface>]> {
  let summary = "initializes from N(mean, std²)";
  let description = [{
    Each element is drawn independently from the normal distribution with
    the given mean and standard deviation, as `torch.nn.init.normal_`.

    Example: `#gacc.normal<mean = 0.0, std = 0.02>`
  }];
  let parameters = (ins "::llvm::APFloat":$mean, "::llvm::APFloat":$std);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GAcc_KaimingUniformInitAttr
    : GAcc_Attr<"KaimingUniformInit", "kaiming_uniform",
        [DeclareAttrInterfaceMethods<GAcc_InitializerAttrInterface>]> {
  let summary = "the Kaiming-uniform initializer of torch.nn.Linear";
  let description = [{
    Elements are drawn from U(-bound, bound) with
    bound = gain · sqrt(3 / fan_in), gain = sqrt(2 / (1 + a²)), a = sqrt(5):
    `torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5))` as used by
    `torch.nn.Linear.reset_parameters` (He et al., 2015, "Delving Deep into
    Rectifiers"). With a = sqrt(5) the bound is 1/sqrt(fan_in), which is also
    the bound torch uses for a Linear layer's bias. `fan_in` is the number of
    input features of the layer (dimension 1 of a `[out, in]` weight); it
    must be given for a bias.

    Example: `#gacc.kaiming_uniform<fan_in = 784>`
  }];
  let parameters = (ins "int64_t":$fan_in);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

def GAcc_LRScheduleAttr : GAcc_Attr<"LRSchedule", "lr_schedule"> {
  let summary = "a learning-rate schedule stepped by optimizer steps";
  let description = [{
    Evaluated inside the compiled step from t, the number of optimizer steps
    already taken (0 on the first), and the base learning rate lr — never
    per micro-batch:

    ```
    t < warmup_steps:  lr · (t + 1) / warmup_steps           (linear warmup)
    otherwise, p = min(1, (t − warmup_steps) / decay_steps):
      decay = "constant": lr
      decay = "cosine":   min_lr + (lr − min_lr) · (1 + cos(π · p)) / 2
      decay = "linear":   min_lr + (lr − min_lr) · (1 − p)
    ```

    The cosine form is SGDR's (Loshchilov & Hutter, 2017) without restarts,
    as `torch.optim.lr_scheduler.CosineAnnealingLR` with eta_min = min_lr.
    Example: `#gacc.lr_schedule<warmup_steps = 100, decay = "cosine",
    decay_steps = 900, min_lr = 1.0e-5>`
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "0">:$warmup_steps,
    StringRefParameter<"constant, cosine or linear", "\"constant\"">:$decay,
    DefaultValuedParameter<"int64_t", "0">:$decay_steps,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.0)">:$min_lr
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

class GAcc_OptimizerAttr<string name, string mnemonic>
    : GAcc_Attr<name, mnemonic,
                [DeclareAttrInterfaceMethods<GAcc_OptimizerAttrInterface>]>;

def GAcc_SGDAttr : GAcc_OptimizerAttr<"SGD", "sgd"> {
  let summary = "stochastic gradient descent with momentum (torch.optim.SGD)";
  let description = [{
    The update of torch.optim.SGD (PyTorch documentation, "SGD"), applied once
    per optimizer step to the normalized accumulated gradient g:

    ```
    g  = g + weight_decay · p                      if weight_decay ≠ 0
    b  = g                                         on the first step
    b  = momentum · b + (1 − dampening) · g        afterwards
    g  = g + momentum · b  if nesterov, else g = b  (if momentum ≠ 0)
    p  = p − lr · g
    ```

    The momentum buffer b is optimizer state: one fp32 tensor per parameter,
    present only when momentum ≠ 0. `lr` is the default learning rate
    (gacc-run's `--lr` overrides it at run time).

    Example: `#gacc.sgd<lr = 0.05, momentum = 0.9, nesterov = true>`
  }];
  let parameters = (ins
    "::llvm::APFloat":$lr,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.0)">:$momentum,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.0)">:$dampening,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.0)">:$weight_decay,
    DefaultValuedParameter<"bool", "false">:$nesterov
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GAcc_AdamAttr : GAcc_OptimizerAttr<"Adam", "adam"> {
  let summary = "Adam (torch.optim.Adam)";
  let description = [{
    Kingma & Ba, 2015, "Adam: A Method for Stochastic Optimization", as
    torch.optim.Adam computes it (weight decay as an L2 term added to the
    gradient), at step t = 1, 2, …:

    ```
    g  = g + weight_decay · p                      if weight_decay ≠ 0
    m  = β1 · m + (1 − β1) · g
    v  = β2 · v + (1 − β2) · g²
    p  = p − lr / (1 − β1ᵗ) · m / (sqrt(v) / sqrt(1 − β2ᵗ) + eps)
    ```

    State: m and v (zero before the first step). Example:
    `#gacc.adam<lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8>`
  }];
  let parameters = (ins
    "::llvm::APFloat":$lr,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.9)">:$beta1,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.999)">:$beta2,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(1.0e-8)">:$eps,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.0)">:$weight_decay
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GAcc_AdamWAttr : GAcc_OptimizerAttr<"AdamW", "adamw"> {
  let summary = "AdamW with decoupled weight decay (torch.optim.AdamW)";
  let description = [{
    Loshchilov & Hutter, 2019, "Decoupled Weight Decay Regularization", as
    torch.optim.AdamW computes it: first p = p · (1 − lr · weight_decay)
    (for parameters with weight decay), then Adam's update without the L2
    term. Defaults as torch (weight_decay = 0.01). Example:
    `#gacc.adamw<lr = 1.0e-3, weight_decay = 0.05>`
  }];
  let parameters = (ins
    "::llvm::APFloat":$lr,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.9)">:$beta1,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.999)">:$beta2,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(1.0e-8)">:$eps,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.01)">:$weight_decay
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GAcc_LionAttr : GAcc_OptimizerAttr<"Lion", "lion"> {
  let summary = "Lion (evolved sign momentum)";
  let description = [{
    Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms"
    (Algorithm 2, with decoupled weight decay):

    ```
    c  = β1 · m + (1 − β1) · g
    p  = p · (1 − lr · weight_decay) − lr · sign(c)
    m  = β2 · m + (1 − β2) · g
    ```

    State: m (zero before the first step). Example:
    `#gacc.lion<lr = 1.0e-4, beta1 = 0.9, beta2 = 0.99>`
  }];
  let parameters = (ins
    "::llvm::APFloat":$lr,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.9)">:$beta1,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.99)">:$beta2,
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(0.0)">:$weight_decay
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // GACC_ATTRS_TD
