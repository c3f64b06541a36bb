//===- Emit.cpp - gacc-run --emit: PTX, cubin or LLVM IR ------------------===//
//
// Runs the library pipelines on the model and writes the artifact: the
// kernels' PTX or cubin from gacc-lower-to-nvvm-pipeline, or the host LLVM
// IR from gacc-lower-to-cpu-pipeline. Files are written atomically.
//
//===----------------------------------------------------------------------===//

#include "tools/gacc-run/Options.h"
#include "tools/gacc-run/OutputPaths.h"

#include "passes/Pipelines.h"
#include "passes/Ptxas.h"
#include "runtime/OutputFile.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

int gaccrt::emit(ModuleOp model, llvm::StringRef kind, llvm::StringRef outPath,
                 llvm::StringRef chip, bool unroll, bool blas,
                 int64_t deferWindowBytes, bool fp32Storage) {
  if (outPath.empty()) {
    reportError("--emit needs -o FILE");
    return kExitBadInput;
  }
  OwningOpRef<ModuleOp> module(model.clone());
  PassManager pm(model.getContext());
  std::string contents;
  if (kind == "llvm") {
    mlir::gacc::CPUPipelineOptions options;
    options.unroll = unroll;
    options.blas = blas;
    options.deferWindowBytes = deferWindowBytes;
    options.fp32Storage = fp32Storage;
    mlir::gacc::buildLowerToCPUPipeline(pm, options);
    // A model the pipeline cannot compile is bad input.
    if (failed(pm.run(*module))) {
      reportError("lowering to the CPU failed");
      return kExitBadInput;
    }
    llvm::LLVMContext llvmContext;
    auto llvmModule = translateModuleToLLVMIR(*module, llvmContext, "gacc");
    if (!llvmModule) {
      reportError("translation to LLVM IR failed");
      return 1;
    }
    llvm::raw_string_ostream os(contents);
    llvmModule->print(os, nullptr);
  } else if (kind == "ptx" || kind == "cubin") {
    mlir::gacc::NVVMPipelineOptions options;
    options.unroll = unroll;
    options.chip = chip.str();
    options.format = kind == "ptx" ? "isa" : "bin";
    options.fp32Storage = fp32Storage;
    options.deferWindowBytes = deferWindowBytes;
    // The pipeline's checks, then a cubin's chip against ptxas's.
    std::string problem = mlir::gacc::validateNVVMPipelineOptions(options);
    if (!problem.empty()) {
      reportError("--emit " + kind + " --chip " + chip + ": " + problem);
      return kExitBadInput;
    }
    if (std::string toolchain = mlir::gacc::checkNVVMToolchain(options);
        !toolchain.empty()) {
      reportError(toolchain +
                  ": give --chip one of those; --emit ptx needs no ptxas");
      return kExitBadInput;
    }
    mlir::gacc::buildLowerToNVVMPipeline(pm, options);
    if (failed(pm.run(*module))) {
      // Without ptxas a cubin cannot be made whatever the model: a missing
      // tool (1); otherwise the model is what failed (bad input, 2).
      bool noPtxas = kind == "cubin" && findPtxas().empty();
      reportError("lowering to NVVM failed" +
                  llvm::Twine(noPtxas ? " (cubin needs ptxas from the CUDA "
                                        "toolkit, found neither on PATH nor "
                                        "in the toolkit)"
                                      : ""));
      return noPtxas ? 1 : kExitBadInput;
    }
    unsigned binaries = 0;
    module->walk([&](gpu::BinaryOp bin) {
      for (Attribute obj : bin.getObjects()) {
        contents += cast<gpu::ObjectAttr>(obj).getObject().getValue();
        ++binaries;
      }
    });
    if (binaries != 1) {
      reportError("expected one kernel module, found " + llvm::Twine(binaries));
      return 1;
    }
  } else {
    reportError("--emit must be ptx, cubin or llvm, got '" + kind + "'");
    return kExitBadInput;
  }
  if (outPath == "-") {
    llvm::outs() << contents;
    return 0;
  }
  if (llvm::Error e = writeOutputFile(outPath, contents)) {
    reportError(llvm::toString(std::move(e)));
    return 1;
  }
  logStream() << "gacc-run: wrote " << kind << " to " << outPath << " ("
              << contents.size() << " bytes)\n";
  return 0;
}
