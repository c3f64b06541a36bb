//===- GAccAttrs.td - gacc attributes -----------------------*- tablegen -*-===//
//
// Initializers of parameters, the optimizer attribute and the loss
// normalization enum of the training step.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ATTRS_TD
#define GACC_ATTRS_TD

include "dialect/GAccDialect.td"
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
    number of non-ignored targets (tokens) of the window; reserved for token
    level losses (rejected by `gacc-expand-accumulation` for now).
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Batch statistics
//===----------------------------------------------------------------------===//

def GAcc_BatchStatisticsPerMicroBatch : I32EnumAttrCase<"per_micro_batch", 0>;
def GAcc_BatchStatistics : I32EnumAttr<"BatchStatistics",
    "how an op's batch statistics behave under gradient accumulation",
    [GAcc_BatchStatisticsPerMicroBatch]> {
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
    not the large-batch step for this op. More modes come with BatchNorm.
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Parameter initializers
//===----------------------------------------------------------------------===//

def GAcc_ZerosInitAttr : GAcc_Attr<"ZerosInit", "zeros"> {
  let summary = "initializes every element to 0";
  let description = [{
    Example: `gacc.param @bias : tensor<10xf32> = #gacc.zeros`
  }];
}

def GAcc_ConstantInitAttr : GAcc_Attr<"ConstantInit", "constant"> {
  let summary = "initializes every element to one value";
  let description = [{
    `torch.nn.init.constant_`; e.g. a layer norm's weight starts at 1.

    Example: `#gacc.constant<value = 1.0>`
  }];
  let parameters = (ins "::llvm::APFloat":$value);
  let assemblyFormat = "`<` struct(params) `>`";
}

def GAcc_UniformInitAttr : GAcc_Attr<"UniformInit", "uniform"> {
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

def GAcc_NormalInitAttr : GAcc_Attr<"NormalInit", "normal"> {
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
    : GAcc_Attr<"KaimingUniformInit", "kaiming_uniform"> {
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
// Optimizers
//===----------------------------------------------------------------------===//

def GAcc_SGDAttr : GAcc_Attr<"SGD", "sgd"> {
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
  let extraClassDeclaration = [{
    /// Number of optimizer-state tensors per parameter (the momentum buffer).
    unsigned getNumStateTensors() const {
      return getMomentum().isZero() ? 0 : 1;
    }
  }];
}

#endif // GACC_ATTRS_TD
