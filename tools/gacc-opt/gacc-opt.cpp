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

/// argv with --mlir-print-op-on-diagnostic=false first unless the command
/// line sets it: an error names its op's location in one line instead of
/// printing the op after it (a train_step or a whole module is hundreds to
/// thousands of lines).
static std::vector<char *> withQuietDiagnostics(int argc, char **argv) {
  std::vector<char *> args(argv, argv + argc);
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  bool given = llvm::any_of(args, [](const char *a) {
    return llvm::StringRef(a).ltrim('-').starts_with(
        "mlir-print-op-on-diagnostic");
  });
  if (!given)
    args.insert(args.begin() + 1, quiet);
  return args;
}

int main(int argc, char **argv) {
  std::vector<char *> args = withQuietDiagnostics(argc, argv);
  argc = int(args.size());
  argv = args.data();
  llvm::cl::AddExtraVersionPrinter(gacc::printVersion);
  mlir::gacc::configureCUDAToolkit();
  mlir::registerAllPasses();
  mlir::gacc::registerGAccPasses();
  mlir::gacc::registerGAccPipelines();
  mlir::DialectRegistry registry;
  mlir::gacc::registerGAccDialectsAndInterfaces(registry);
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "gacc optimizer driver: the gacc dialect, passes and pipelines\n\n"
      "gacc's own passes are the -gacc-* and -convert-gacc-to-* ones, its\n"
      "pipelines -gacc-lower-to-cpu-pipeline and "
      "-gacc-lower-to-nvvm-pipeline\n"
      "(docs/GAccPasses.md; `gacc-opt --help | grep -A1 -e '-gacc-'`); "
      "every upstream\n"
      "pass is here too. An error names its op's location without printing "
      "the op\n"
      "(--mlir-print-op-on-diagnostic prints it).\n",
      registry);
  // The input read as gacc-run reads a model (a device or directory
  // refused, a read error reported), and a file nested past what the
  // parser's stack survives or holding a NUL byte: one error, not a crash
  // (standard input, which MlirOptMain reads itself, is not scanned).
  if (input != "-") {
    auto buffer = gaccrt::readInputFile(input);
    if (!buffer) {
      llvm::errs() << "gacc-opt: error: " << input << ": "
                   << llvm::toString(buffer.takeError()) << "\n";
      return 1;
    }
    // MlirOptMain opens the file again, and reads a file that reports size
    // 0 (a /proc file) as empty: refused rather than an empty module.
    uint64_t size = 0;
    if (!llvm::sys::fs::file_size(input, size) && size == 0 &&
        (*buffer)->getBufferSize() > 0) {
      llvm::errs() << "gacc-opt: error: " << input
                   << ": reports size 0 but holds "
                   << (*buffer)->getBufferSize()
                   << " bytes (a /proc file); give it on standard input\n";
      return 1;
    }
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    if (!gacc::checkInputText(sourceMgr))
      return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
