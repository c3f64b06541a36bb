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
#include "runtime/OutputFile.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::gacc;
using namespace gaccrt;

/// The ptxas the NVVM target's serializer runs (NVPTXSerializer::findTool,
/// given no toolkit path by the pipeline): the one on PATH, else the CUDA
/// toolkit's (getCUDAToolkitPath); empty when there is none.
static std::string findPtxas() {
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  llvm::SmallString<256> path(NVVM::getCUDAToolkitPath());
  if (path.empty())
    return "";
  llvm::sys::path::append(path, "bin", "ptxas");
  return llvm::sys::fs::can_execute(path) ? path.str().str() : "";
}

/// The real GPUs `ptxas` assembles for ('sm_75', 'sm_90a', ...), as its
/// --help lists the values of --gpu-name; none when it cannot tell.
static std::vector<std::string> ptxasChips(llvm::StringRef ptxas) {
  llvm::SmallString<128> help;
  if (llvm::sys::fs::createTemporaryFile("gacc-ptxas-help", "txt", help))
    return {};
  llvm::FileRemover remove(help);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, help.str(),
                                                llvm::StringRef("")};
  if (llvm::sys::ExecuteAndWait(ptxas, {ptxas, "--help"}, std::nullopt,
                                redirects, /*SecondsToWait=*/30) != 0)
    return {};
  auto text = llvm::MemoryBuffer::getFile(help);
  if (!text)
    return {};
  // "--gpu-name ... Allowed values for this option: 'compute_100',...,
  // 'sm_75',..." up to the next option.
  llvm::StringRef rest = (*text)->getBuffer();
  size_t at = rest.find("--gpu-name");
  if (at == llvm::StringRef::npos)
    return {};
  rest = rest.drop_front(at);
  rest = rest.substr(0, rest.find("\n--", 1));
  rest = rest.substr(0, rest.find("Default value"));
  std::vector<std::string> chips;
  while (!rest.empty()) {
    auto [quoted, after] = rest.split('\'');
    auto [value, tail] = after.split('\'');
    if (after.empty())
      break;
    if (value.starts_with("sm_"))
      chips.push_back(value.str());
    rest = tail;
  }
  // In the order of their numbers: sm_75, ..., sm_90a, sm_100, ...
  auto number = [](llvm::StringRef chip) {
    unsigned n = 0;
    (void)chip.drop_front(3).consumeInteger(10, n);
    return n;
  };
  llvm::sort(chips, [&](const std::string &a, const std::string &b) {
    return std::make_pair(number(a), a) < std::make_pair(number(b), b);
  });
  return chips;
}

/// An error naming --chip where ptxas lists the chips it assembles and
/// `chip` is not among them (before compiling: ptxas's own failure comes
/// at the end, pinned to a line of the model).
static bool checkPtxasChip(llvm::StringRef chip) {
  std::string ptxas = findPtxas();
  if (ptxas.empty())
    return true; // said after the pipeline fails
  std::vector<std::string> chips = ptxasChips(ptxas);
  if (chips.empty() || llvm::is_contained(chips, chip))
    return true;
  reportError("--emit cubin: " + ptxas + " does not assemble --chip " + chip +
              " (it takes " + llvm::join(chips, ", ") +
              "); give one of those, or --emit ptx");
  return false;
}

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
    std::string problem = mlir::gacc::validateNVVMPipelineOptions(options);
    if (!problem.empty()) {
      reportError(problem);
      return kExitBadInput;
    }
    if (kind == "cubin" && !checkPtxasChip(options.chip))
      return kExitBadInput;
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
