//===- GAccDialect.cpp - gacc dialect registration and attributes ---------===//
//
// Registers the dialect's ops and attributes and verifies the attributes
// (initializers and optimizers).
//
//===----------------------------------------------------------------------===//

#include "dialect/GAccDialect.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gacc;

#include "dialect/GAccDialect.cpp.inc"
#include "dialect/GAccEnums.cpp.inc"
#include "dialect/GAccInterfaces.cpp.inc"
#include "dialect/GAccAttrInterfaces.cpp.inc"

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

LogicalResult
UniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        APFloat lowF, APFloat highF) {
  double low = lowF.convertToDouble(), high = highF.convertToDouble();
  if (!(low < high))
    return emitError() << "#gacc.uniform needs low < high, got low = " << low
                       << " and high = " << high;
  return success();
}

LogicalResult
NormalInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       APFloat meanF, APFloat stdF) {
  double std = stdF.convertToDouble();
  if (!(std > 0.0))
    return emitError() << "#gacc.normal needs std > 0, got " << std;
  return success();
}

LogicalResult
KaimingUniformInitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t fanIn) {
  if (fanIn <= 0)
    return emitError() << "#gacc.kaiming_uniform needs fan_in > 0, got "
                       << fanIn;
  return success();
}
