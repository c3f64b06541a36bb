//===- GAccInterfaces.td - gacc op interfaces ---------------*- tablegen -*-===//
//
// DifferentiableOpInterface: how an op builds its own adjoint (used by
// gacc-autodiff). LossOpInterface: ops that reduce a model output to a loss.
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
    results (∂L/∂result, same types as the results), `buildAdjoint` emits
    upstream tensor/linalg/arith ops at the builder's insertion point that
    compute the adjoint of every operand for which `needed[i]` is true, and
    stores them in `operandAdjoints` (one entry per operand, null where not
    needed or not differentiable, e.g. integer labels). It fails, with a
    diagnostic, when the op cannot be differentiated.
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

def GAcc_LossOpInterface : OpInterface<"LossOpInterface"> {
  let cppNamespace = "::mlir::gacc";
  let description = [{
    An op that reduces a model output (the prediction, e.g. logits) and
    targets to a scalar loss summed over the micro-batch. The prediction is
    what inference functions return.
  }];
  let methods = [
    InterfaceMethod<"The model output this loss reads.",
      "::mlir::Value", "getPrediction">,
    InterfaceMethod<"The targets (labels) this loss reads.",
      "::mlir::Value", "getTargets">,
    InterfaceMethod<[{
      Emits, at the builder's insertion point, the f32 count by which this
      micro-batch's summed loss is normalized: with `perToken` the number of
      targets that are not ignored (token_mean), otherwise the number of
      samples (leading-dimension rows) with at least one target that is not
      ignored (mean). Padding samples therefore count for nothing.
    }], "::mlir::Value", "buildNormalizationCount",
      (ins "::mlir::OpBuilder &":$builder, "bool":$perToken)>
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
      "getDeclaredBatchStatistics">
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
