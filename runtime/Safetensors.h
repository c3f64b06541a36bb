//===- Safetensors.h - parameters in the safetensors format -----*- C++ -*-===//
//
// Saves and loads named fp32 tensors in the safetensors format
// (https://github.com/huggingface/safetensors: an 8-byte little-endian
// header length, a JSON header of name → {dtype, shape, data_offsets},
// then the raw little-endian data). Writes are atomic (temporary file, then
// rename).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_SAFETENSORS_H
#define GACC_RUNTIME_SAFETENSORS_H

#include "runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace gaccrt {

using NamedTensors = std::vector<std::pair<std::string, const HostTensor *>>;

/// Writes `tensors` to `path` atomically. Errors name the file.
llvm::Error saveSafetensors(const std::string &path,
                            const NamedTensors &tensors);

/// Reads every tensor of `path`. Errors name the file and the problem.
llvm::Expected<std::map<std::string, HostTensor>>
loadSafetensors(const std::string &path);

/// Writes `contents` to `path` through a temporary file in the same
/// directory and a rename, so a reader never sees half a file.
llvm::Error writeFileAtomically(const std::string &path,
                                llvm::StringRef contents);

} // namespace gaccrt

#endif // GACC_RUNTIME_SAFETENSORS_H
