//===- Ptxas.cpp - the ptxas the NVVM serializer runs ---------------------===//
//
// findPtxas, ptxasChips and checkPtxasChip: which ptxas a cubin will be
// assembled by, and whether it knows the chip asked for.
//
//===----------------------------------------------------------------------===//

#include "passes/Ptxas.h"

#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <mutex>

std::string mlir::gacc::findPtxas() {
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  llvm::SmallString<256> path(NVVM::getCUDAToolkitPath());
  if (path.empty())
    return "";
  llvm::sys::path::append(path, "bin", "ptxas");
  return llvm::sys::fs::can_execute(path) ? path.str().str() : "";
}

/// ptxas --help's chips, uncached.
static std::vector<std::string> readPtxasChips(llvm::StringRef ptxas) {
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

std::vector<std::string> mlir::gacc::ptxasChips(llvm::StringRef ptxas) {
  // Once per ptxas and process: every NVVM pipeline's option check asks.
  static std::mutex mutex;
  static llvm::StringMap<std::vector<std::string>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace(ptxas);
  if (inserted)
    it->second = readPtxasChips(ptxas);
  return it->second;
}

std::string mlir::gacc::checkPtxasChip(llvm::StringRef chip) {
  std::string ptxas = findPtxas();
  if (ptxas.empty())
    return "";
  std::vector<std::string> chips = ptxasChips(ptxas);
  if (chips.empty() || llvm::is_contained(chips, chip))
    return "";
  return ptxas + " does not assemble chip " + chip.str() + " (it takes " +
         llvm::join(chips, ", ") + ")";
}
