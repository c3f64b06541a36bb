//===- gacc-opt.cpp - mlir-opt with the gacc dialect and passes -----------===//
//
// The gacc driver for IR-to-IR work: every upstream pass plus the gacc
// dialect, passes and pipelines (gacc-lower-to-cpu-pipeline,
// gacc-lower-to-nvvm-pipeline).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "runtime/InputFile.h"
#include "tools/InputNesting.h"
#include "tools/Version.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  llvm::cl::AddExtraVersionPrinter(gacc::printVersion);
  mlir::gacc::configureCUDAToolkit();
  mlir::registerAllPasses();
  mlir::gacc::registerGAccPasses();
  mlir::gacc::registerGAccPipelines();
  mlir::DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "gacc optimizer driver: the gacc dialect, passes and pipelines\n",
      registry);
  // A file nested past what the parser's stack survives: one error, not a
  // crash (a file that cannot be read is MlirOptMain's to report; standard
  // input, which MlirOptMain reads itself, is not scanned).
  if (std::string problem = gaccrt::inputFileProblem(input);
      input != "-" && !problem.empty()) {
    llvm::errs() << "gacc-opt: error: " << input << ": " << problem << "\n";
    return 1;
  }
  if (auto buffer = input == "-" ? nullptr : mlir::openInputFile(input)) {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (!gacc::checkInputNesting(sourceMgr))
      return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
