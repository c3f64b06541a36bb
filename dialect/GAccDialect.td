//===- GAccDialect.td - the gacc dialect definition ---------*- tablegen -*-===//
//
// The `gacc` dialect expresses one neural-network training step with
// gradient accumulation: persistent parameters, a training-step op carrying
// the accumulation schedule and optimizer, and the layer ops of its
// micro-batch body.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_DIALECT_TD
#define GACC_DIALECT_TD

include "mlir/IR/OpBase.td"

def GAcc_Dialect : Dialect {
  let name = "gacc";
  let cppNamespace = "::mlir::gacc";
  let summary = "Training steps with gradient accumulation";
  let description = [{
    The `gacc` dialect describes a training step whose effective batch of
    `accum_steps × micro_batch` samples is processed as `accum_steps`
    micro-batches. Gradients of the micro-batches are summed into persistent
    fp32 accumulators and one deferred optimizer update is applied per
    optimizer step, so that one accumulated step equals the step on one large
    batch of the same samples.

    Levels: model (`gacc.param`, `gacc.train_step`, layer ops), gradient
    (after `gacc-autodiff` the body also yields the parameter gradients),
    accumulation (`gacc.accumulate`, `gacc.apply_optimizer` inside the
    function built by `gacc-expand-accumulation`) and fusion
    (`gacc.matmul_accumulate`).

    Every gacc op refuses an attribute it does not define unless a dialect
    prefix names its owner (`gacc.recompute`): a misspelt one (`{casual}`
    for `causal`) is an error naming the op's own attributes, not a no-op.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

// Every gacc op refuses a discardable attribute without a dialect prefix:
// a misspelt one (`{casual}` for `causal`, `max_grad_nrom`) must not
// silently mean nothing (GAccDialect.h).
def GAcc_NoUnknownAttributes : NativeOpTrait<"NoUnknownAttributes"> {
  let cppNamespace = "::mlir::gacc";
}

// The ops gacc-autodiff builds into a step's body (its backward): a model
// does not write them (TrainStepOp::verifyRegions).
def GAcc_BuiltByAutodiff : NativeOpTrait<"BuiltByAutodiff"> {
  let cppNamespace = "::mlir::gacc";
}

class GAcc_Op<string mnemonic, list<Trait> traits = []>
    : Op<GAcc_Dialect, mnemonic, !listconcat(traits, [GAcc_NoUnknownAttributes])>;

#endif // GACC_DIALECT_TD
