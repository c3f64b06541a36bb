//===- Safetensors.h - parameters in the safetensors format -----*- C++ -*-===//
//
// Saves and loads named fp32 tensors in the safetensors format
// (https://github.com/huggingface/safetensors: an 8-byte little-endian
// header length, a JSON header of name → {dtype, shape, data_offsets},
// then the raw little-endian data). Files are written with writeOutputFile
// (runtime/OutputFile.h): atomically, through links, streams in place.
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

/// Writes `tensors` to `path` (writeOutputFile). Errors name the file.
llvm::Error saveSafetensors(const std::string &path,
                            const NamedTensors &tensors);

/// Reads every tensor of `path`. Errors name the file and the problem.
llvm::Expected<std::map<std::string, HostTensor>>
loadSafetensors(const std::string &path);

/// The bytes of a safetensors file holding `tensors`, in order.
std::string serializeSafetensors(const NamedTensors &tensors);

/// Every tensor of a safetensors file's `bytes` (read from `path`, which
/// errors name).
llvm::Expected<std::map<std::string, HostTensor>>
parseSafetensors(const std::string &path, llvm::StringRef bytes);

/// An error naming `path`, the tensor and the first index when `t` (read
/// from that file) holds a NaN or an infinity, or, when `nonNegative` (a
/// variance), a value below 0; success otherwise.
llvm::Error checkFinite(const std::string &path, const std::string &name,
                        const HostTensor &t, bool nonNegative = false);

} // namespace gaccrt

#endif // GACC_RUNTIME_SAFETENSORS_H
