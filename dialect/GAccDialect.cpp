//===- GAccDialect.cpp - gacc dialect registration and attributes ---------===//
//
// Registers the dialect's ops and attributes and the external models gacc
// attaches to its own and upstream ops, and verifies the attributes
// (initializers and optimizers).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"
#include "dialect/StructuredAdjoints.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gacc;

#include "dialect/GAccDialect.cpp.inc"
#include "dialect/GAccEnums.cpp.inc"
#include "dialect/GAccInterfaces.cpp.inc"
#include "dialect/GAccAttrInterfaces.cpp.inc"

/// The keyword of an enum attribute's value (`#gacc.normalization<mean>`).
/// An unknown keyword is one error that lists the valid ones; the parser
/// ODS generates for `$value` adds a second, about the C++ enum type.
template <typename EnumT>
static ParseResult parseEnumKeyword(AsmParser &parser, EnumT &value) {
  SMLoc loc = parser.getCurrentLocation();
  std::string keyword;
  if (parser.parseKeywordOrString(&keyword))
    return failure();
  if (std::optional<EnumT> parsed = symbolizeEnum<EnumT>(keyword)) {
    value = *parsed;
    return success();
  }
  InFlightDiagnostic diag = parser.emitError(loc)
                            << "unknown value '" << keyword
                            << "', expected one of: ";
  // The cases are 0, 1, ... (I32EnumAttr without explicit values);
  // stringifyEnum of a value past the last is "".
  for (uint32_t i = 0;; ++i) {
    StringRef name = stringifyEnum(static_cast<EnumT>(i));
    if (name.empty())
      break;
    diag << (i ? ", " : "") << name;
  }
  return diag;
}

template <typename EnumT>
static void printEnumKeyword(AsmPrinter &printer, EnumT value) {
  printer << stringifyEnum(value);
}

#define GET_ATTRDEF_CLASSES
#include "dialect/GAccAttrs.cpp.inc"

void GAccDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/GAccAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/GAccOps.cpp.inc"
      >();
}

FloatType mlir::gacc::getLowPrecisionType(MLIRContext *ctx,
                                          Precision precision) {
  switch (precision) {
  case Precision::bf16:
    return BFloat16Type::get(ctx);
  case Precision::fp16:
    return Float16Type::get(ctx);
  case Precision::fp32:
    break;
  }
  return nullptr;
}

FloatType mlir::gacc::getEnclosingComputeType(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (auto precision =
            p->getAttrOfType<PrecisionAttr>(kComputePrecisionAttrName))
      return getLowPrecisionType(op->getContext(), precision.getValue());
  return nullptr;
}

void mlir::gacc::registerGAccExternalModels(DialectRegistry &registry) {
  registerGAccBufferizationModels(registry);
  registerArithMathAdjointModels(registry);
  registerLinalgAdjointModels(registry);
  registerTensorAdjointModels(registry);
  registerSoftmaxShardingModel(registry);
  registerLinalgIndexRangeModel(registry);
}

//===----------------------------------------------------------------------===//
// Initializers: their distributions
//===----------------------------------------------------------------------===//

using ::gacc::abi::InitDistribution;

InitDistribution ZerosInitAttr::getDistribution() const {
  return {InitDistribution::Constant, 0.0, 0.0};
}

InitDistribution ConstantInitAttr::getDistribution() const {
  return {InitDistribution::Constant, getValue().convertToDouble(), 0.0};
}

InitDistribution UniformInitAttr::getDistribution() const {
  return {InitDistribution::Uniform, getLow().convertToDouble(),
          getHigh().convertToDouble()};
}

InitDistribution NormalInitAttr::getDistribution() const {
  return {InitDistribution::Normal, getMean().convertToDouble(),
          getStd().convertToDouble()};
}

/// torch.nn.init.kaiming_uniform_(a = sqrt(5)): gain = sqrt(2/(1+a²)),
/// bound = gain·sqrt(3/fan_in) = 1/sqrt(fan_in).
InitDistribution KaimingUniformInitAttr::getDistribution() const {
  double a = std::sqrt(5.0);
  double gain = std::sqrt(2.0 / (1.0 + a * a));
  double bound = gain * std::sqrt(3.0 / double(getFanIn()));
  return {InitDistribution::Uniform, -bound, bound};
}

LogicalResult
UniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        APFloat lowF, APFloat highF) {
  if (failed(verifyFiniteF32(emitError, "#gacc.uniform",
                             {{"low", lowF}, {"high", highF}})))
    return failure();
  double low = lowF.convertToDouble(), high = highF.convertToDouble();
  if (!(low < high))
    return emitError() << "#gacc.uniform needs low < high, got low = " << low
                       << " and high = " << high;
  return success();
}

LogicalResult
NormalInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       APFloat meanF, APFloat stdF) {
  if (failed(verifyFiniteF32(emitError, "#gacc.normal",
                             {{"mean", meanF}, {"std", stdF}})))
    return failure();
  double std = stdF.convertToDouble();
  if (!(std > 0.0))
    return emitError() << "#gacc.normal needs std > 0, got " << std;
  return success();
}

LogicalResult
ConstantInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         APFloat value) {
  return verifyFiniteF32(emitError, "#gacc.constant", {{"value", value}});
}

LogicalResult
KaimingUniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t fanIn) {
  if (fanIn <= 0)
    return emitError() << "#gacc.kaiming_uniform needs fan_in > 0, got "
                       << fanIn;
  return success();
}
