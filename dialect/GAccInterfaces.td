//===- GAccInterfaces.td - gacc op interfaces ---------------*- tablegen -*-===//
//
// DifferentiableOpInterface: how an op builds the adjoints of its tensor
// operands (gacc-autodiff); ScalarAdjointOpInterface: the derivative of a
// scalar arith/math op, written once and used by every elementwise op and
// every linalg body. LossOpInterface: ops that reduce a model output to a
// loss. TableLookupOpInterface: ops that index a table with an input.
// RecomputableOpInterface: ops cheap to recompute in the backward.
// BatchStatisticsOpInterface, RandomOpInterface, OptimizerAttrInterface:
// see below.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_INTERFACES_TD
#define GACC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def GAcc_DifferentiableOpInterface
    : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An op that knows its reverse-mode derivative. Given the adjoints of its
    results (∂L/∂result, same types as the results; a null value stands for
    a zero adjoint), `buildAdjoint` emits upstream tensor/linalg/arith ops
    at the builder's insertion point that compute the adjoint of every
    operand for which `needed[i]` is true, and stores them in
    `operandAdjoints` (one entry per operand; null where not needed, where
    the adjoint is zero, or where the operand is not differentiable, e.g.
    integer labels). It fails, with a diagnostic on the op, when the op
    cannot be differentiated.

    gacc's layer ops implement it where a hand-written rule pays (losses,
    normalizations, attention, whose rule also emits `gacc.recompute_inputs`
    to recompute its blocks); upstream ops get it as external models
    (dialect/ArithMathAdjoints.cpp, LinalgAdjoints.cpp, TensorAdjoints.cpp).
    An op without it that implements linalg's AggregatedOpInterface is
    differentiated through its decomposition.
  }];
  let methods = [
    InterfaceMethod<
      "Emit the adjoints of the operands from the adjoints of the results.",
      "::llvm::LogicalResult", "buildAdjoint",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultAdjoints,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandAdjoints)>
  ];
}

def GAcc_ScalarAdjointOpInterface
    : OpInterface<"ScalarAdjointOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    The reverse-mode rule of a scalar floating-point op (upstream `arith`
    and `math`, attached as external models in
    dialect/ArithMathAdjoints.cpp). `buildScalarAdjoints` is called with the
    builder inside a scalar context (a linalg body) where the op's operands
    and result are available; from the result's adjoint `resultAdjoint` it
    emits the adjoint of each operand into `operandAdjoints` (one entry per
    operand, null for operands that are not differentiable, such as the
    condition of `arith.select`). The formulas follow PyTorch's
    tools/autograd/derivatives.yaml, ties included (`maximumf` splits the
    adjoint evenly between equal operands, as torch.maximum does).

    This is the one definition of each derivative: gacc-autodiff uses it
    for the op on tensors (an elementwise `linalg.generic`) and inside the
    body of every `linalg.generic` and named linalg op.
  }];
  let methods = [
    InterfaceMethod<
      "Emit the adjoints of the operands from the adjoint of the result.",
      "void", "buildScalarAdjoints",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::Value":$resultAdjoint,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandAdjoints)>
  ];
}

def GAcc_LossOpInterface : OpInterface<"LossOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An op that reduces a model output (the prediction, e.g. logits) and
    targets to a scalar loss summed over the micro-batch. The prediction is
    what inference functions return (read by the op, or computed inside it
    from its other operands); the tools find the loss, its targets,
    the value that pads a short window and the evaluation that applies
    through this interface, never by the op's name.
  }];
  let methods = [
    InterfaceMethod<[{
      The type of the model output this loss scores (its prediction), e.g.
      the logits [m, C] or [m, S, C] of a cross-entropy.
    }], "::mlir::RankedTensorType", "getPredictionType">,
    InterfaceMethod<[{
      Emits, at the builder's insertion point, the prediction computed from
      `operands`, which stand for this op's operands (the same count and
      types; e.g. their clones in an inference function, where the targets
      are an uninitialized stand-in), and returns it: a
      loss that reads the prediction returns that operand, one that computes
      it internally (a fused classifier head) builds it.
    }], "::mlir::Value", "buildPrediction",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$operands)>,
    InterfaceMethod<"The targets (labels) this loss reads.",
      "::mlir::Value", "getTargets">,
    InterfaceMethod<[{
      Emits, at the builder's insertion point, the f32 count by which this
      micro-batch's summed loss is normalized: with `perToken` the number of
      targets that are not ignored (token_mean), otherwise the number of
      samples (leading-dimension rows) with at least one target that is not
      ignored (mean). Padding samples therefore count for nothing.
    }], "::mlir::Value", "buildNormalizationCount",
      (ins "::mlir::OpBuilder &":$builder, "bool":$perToken)>,
    InterfaceMethod<[{
      The target value that adds nothing to the loss and is not counted
      (cross-entropy's `ignore_index`): gacc-run fills the padding rows of a
      short window with it.
    }], "int64_t", "getPaddingTarget">,
    InterfaceMethod<[{
      True when the prediction holds unnormalized class scores over its
      last dimension (softmax cross-entropy), so that accuracy (argmax) and
      bits per character (log-softmax) evaluate it.
    }], "bool", "predictsClassLogits">
  ];
}

def GAcc_TableLookupOpInterface : OpInterface<"TableLookupOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An op that reads rows of a table at integer indices (an embedding).
    An index outside [0, rows) is undefined behaviour, so gacc-run checks
    the integer inputs that reach it before they are used.
  }];
  let methods = [
    InterfaceMethod<"The integer indices.", "::mlir::Value",
      "getTableIndices">,
    InterfaceMethod<"The number of rows of the table (the index bound).",
      "int64_t", "getNumTableRows">
  ];
}

def GAcc_RecomputableOpInterface : OpInterface<"RecomputableOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    A layer op whose recomputation costs little against the memory its
    results hold from the forward to the backward: O(1) arithmetic per
    element it reads or writes (elementwise activations, normalizations
    over the last dimension, gathers). The `cheap` recomputation policy of
    `gacc-recompute-activations` recomputes these ops in the backward and
    keeps the outputs of the others (contractions such as `gacc.linear`,
    whose outputs are worth their memory). Upstream ops count by their own
    interfaces: elementwise `arith`/`math` ops on tensors, and linalg ops
    without reduction loops.
  }];
  let methods = [
    InterfaceMethod<[{
      True when recomputing this op in the backward is cheap (the default);
      an op may answer by its attributes or shapes.
    }], "bool", "isCheapToRecompute", (ins), [{}], [{ return true; }]>
  ];
}

def GAcc_BatchStatisticsOpInterface
    : OpInterface<"BatchStatisticsOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An op whose result depends on the whole batch, not on each sample alone
    (e.g. batch normalization). Under gradient accumulation it would
    silently compute per-micro-batch statistics, so it must declare how its
    statistics accumulate; `gacc.train_step`'s verifier rejects, naming the
    op, any op in its body that implements this interface and declares
    nothing.
  }];
  let methods = [
    InterfaceMethod<
      "The declared accumulation of the batch statistics, if any.",
      "std::optional<::mlir::gacc::BatchStatistics>",
      "getDeclaredBatchStatistics">,
    InterfaceMethod<
      "The `gacc.statistic` tensors the op keeps (running statistics).",
      "::llvm::SmallVector<::mlir::FlatSymbolRefAttr>",
      "getRunningStatistics">,
    InterfaceMethod<[{
      The running statistics among getRunningStatistics() that are
      variances, never negative: their initializers must not draw a
      negative value, and gacc-run refuses a loaded one that holds one.
    }], "::llvm::SmallVector<::mlir::FlatSymbolRefAttr>",
      "getNonNegativeRunningStatistics">,
    InterfaceMethod<[{
      The values one sample gives each of its statistics (for
      batch_norm, the elements of a sample in one channel: H·W of
      [m, C, H, W], 1 of [m, C]). Where it is 1, a micro-batch of one real
      sample has no variance: gacc-run refuses a window that would hold
      one, as torch.nn.functional.batch_norm raises "Expected more than 1
      value per channel when training".
    }], "int64_t", "getStatisticValuesPerSample">,
    InterfaceMethod<
      "The per-sample mask [m] of the samples that count (null: all).",
      "::mlir::Value", "getSampleMask">,
    InterfaceMethod<
      "Restricts the statistics to the samples `mask` [m] counts.",
      "void", "setSampleMask", (ins "::mlir::Value":$mask)>,
    InterfaceMethod<[{
      Builds, at the builder's insertion point, the op's result in
      evaluation, from `running` (one tensor per getRunningStatistics()
      entry, in order) instead of the batch's statistics.
    }], "::mlir::Value", "buildInference",
      (ins "::mlir::OpBuilder &":$b, "::mlir::ValueRange":$running)>
  ];
}

def GAcc_RandomOpInterface : OpInterface<"RandomOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An op whose training result draws random numbers (dropout). Its draws
    are a pure function of the training step's seed, the optimizer step,
    each sample's global index in the epoch order, the element's position
    in its sample and the op's stream, through a counter-based generator
    (Philox 4x32-10, Salmon et al. 2011, "Parallel random numbers: as easy
    as 1, 2, 3"): N micro-batches of m and one batch of N·m draw the same
    numbers, and the backward (or a recomputation) draws them again instead
    of keeping a mask. At the model level the op has no key;
    `gacc-expand-accumulation` binds one in every micro-batch
    (`setRandomKey`) and replaces the op by `buildInference` in the predict
    function.
  }];
  let methods = [
    InterfaceMethod<[{
      The op's stream, a part of the generator's counter: the ops of one
      forward pass draw distinct streams (the training step's verifier
      checks it), an op and its adjoint or recomputed clone the same.
    }], "int64_t", "getRandomStream">,
    InterfaceMethod<"Whether the key is bound.", "bool", "hasRandomKey">,
    InterfaceMethod<[{
      Binds the key, three i64 values: the step's `seed`, `step` (the
      optimizer steps taken before this one) and `firstSample` (the global
      index, in the epoch's order, of the sample in row 0 of the op's
      micro-batch; row r holds sample firstSample + r).
    }], "void", "setRandomKey",
      (ins "::mlir::Value":$seed, "::mlir::Value":$step,
           "::mlir::Value":$firstSample)>,
    InterfaceMethod<[{
      Builds, at the builder's insertion point, the op's result in
      evaluation, where it draws nothing (dropout: its input).
    }], "::mlir::Value", "buildInference", (ins "::mlir::OpBuilder &":$b)>
  ];
}

def GAcc_InitializerAttrInterface : AttrInterface<"InitializerAttrInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    A parameter initializer: the distribution each element is drawn from
    (abi/Initializer.h), which the runtime samples with the training
    step's seed.
  }];
  let methods = [
    InterfaceMethod<"The distribution of each element.",
      "::gacc::abi::InitDistribution", "getDistribution">
  ];
}

def GAcc_OptimizerAttrInterface : AttrInterface<"OptimizerAttrInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An optimizer of the training step: its per-parameter state and its
    elementwise update rule, applied once per optimizer step inside the one
    fused update kernel of each parameter (gacc-fuse-accumulation).
  }];
  let methods = [
    InterfaceMethod<"Optimizer-state tensors per parameter (each with the "
                    "parameter's type).",
      "unsigned", "getNumStateTensors">,
    InterfaceMethod<"The learning rate the attribute declares.",
      "double", "getDefaultLearningRate">,
    InterfaceMethod<[{
      Whether the update applies a nonzero weight decay: the only term that
      moves a parameter whose gradient is 0 at every step from zero state
      (momentum and moments then stay 0).
    }], "bool", "hasWeightDecay", (ins), [{}], [{
      return !$_attr.getWeightDecay().isZero();
    }]>,
    InterfaceMethod<[{
      How much the first optimizer step's update of one element (from zero
      state) can move, in units of the learning rate, when its gradient
      `grad` (normalized and clipped) is known only to within ±`margin`:
      what agreeing gradients leave undetermined (gacc-run
      --check-equivalence). SGD: margin, (1 + momentum)·margin with
      Nesterov; Adam and AdamW, whose first step is lr·g/(|g| + eps):
      eps·margin/((|g| − margin)⁺ + eps)²; Lion, whose step is
      lr·sign(g): 2 where |g| ≤ margin, else 0. Weight decay moves both
      sides alike and is left out (Adam's L2 term would shift g).
    }], "double", "getFirstStepSensitivity",
      (ins "double":$grad, "double":$margin)>,
    InterfaceMethod<[{
      Builds, at the builder's insertion point (inside the update kernel's
      body), the scalar update of one element: `grad` is the normalized
      (and clipped) gradient, `param` the parameter, `state` the state
      values, `lr` this step's learning rate, `firstStep` (i1) true on the
      first optimizer step, `stepNumber` (f32) the 1-based number of this
      step (bias corrections), `decay` whether weight decay applies to this
      parameter. Returns the new parameter followed by the new state.
    }], "::llvm::SmallVector<::mlir::Value>", "buildUpdate",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc,
           "::mlir::Value":$grad, "::mlir::Value":$param,
           "::mlir::ValueRange":$state, "::mlir::Value":$lr,
           "::mlir::Value":$firstStep, "::mlir::Value":$stepNumber,
           "bool":$decay)>
  ];
}

#endif // GACC_INTERFACES_TD
