//===- Ptxas.h - the ptxas the NVVM serializer runs -------------*- C++ -*-===//
//
// Which ptxas MLIR's NVVM target serializer will run for a cubin, and the
// chips it assembles: gacc-lower-to-nvvm-pipeline's option check refuses a
// chip that ptxas lacks before compiling, instead of ptxas failing at the
// end of the pipeline with an error pinned to a line of the model.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_PTXAS_H
#define GACC_PASSES_PTXAS_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::gacc {

/// The ptxas the NVVM target's serializer runs (NVPTXSerializer::findTool,
/// given no toolkit path by the pipeline): the one on PATH, else the CUDA
/// toolkit's (NVVM::getCUDAToolkitPath); empty when there is none.
std::string findPtxas();

/// The real GPUs `ptxas` assembles ("sm_75", "sm_90a", ...) in the order of
/// their numbers, as its `--help` lists the values of `--gpu-name`; empty
/// when it cannot tell (it fails, or lists none). Read once per ptxas path
/// and process.
std::vector<std::string> ptxasChips(llvm::StringRef ptxas);

/// Empty when a cubin for `chip` can be attempted; otherwise a clause
/// naming the ptxas found and the chips it takes (`chip` not among the
/// chips it lists), to which each tool adds the flag that changes it. No ptxas,
/// or one that lists nothing, is left to the serializer, which says so.
std::string checkPtxasChip(llvm::StringRef chip);

} // namespace mlir::gacc

#endif // GACC_PASSES_PTXAS_H
