//===- gacc-opt.cpp - mlir-opt with the gacc dialect and passes -----------===//
//
// The gacc driver for IR-to-IR work: every upstream pass plus the gacc
// dialect, passes and pipelines (gacc-lower-to-cpu-pipeline,
// gacc-lower-to-nvvm-pipeline).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::gacc::configureCUDAToolkit();
  mlir::registerAllPasses();
  mlir::gacc::registerGAccPasses();
  mlir::gacc::registerGAccPipelines();
  mlir::DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "gacc optimizer driver: the gacc dialect, passes and "
                  "pipelines\n",
      registry));
}
