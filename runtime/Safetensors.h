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

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace gaccrt {

/// A tensor to write: its element type, shape and bytes where they lie (a
/// host tensor's, or a plain array's, such as an epoch's sample order).
struct TensorBytes {
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
  explicit TensorBytes(const HostTensor &t)
      : dtype(t.dtype), shape(t.shape), data(t.data()) {}
  TensorBytes(DType dtype, std::vector<int64_t> shape, const void *data)
      : dtype(dtype), shape(std::move(shape)), data(data) {}
  size_t numBytes() const { return tensorBytes(dtype, shape); }
};

using NamedTensors = std::vector<std::pair<std::string, TensorBytes>>;

/// Writes `tensors` to `path` (writeOutputFile). Errors name the file.
llvm::Error saveSafetensors(const std::string &path,
                            const NamedTensors &tensors);

/// Reads every tensor of `path`. Errors name the file and the problem.
llvm::Expected<std::map<std::string, HostTensor>>
loadSafetensors(const std::string &path);

/// A safetensors file holding `tensors`, in order, as the pieces to write:
/// its header, then each tensor's data where it lies (no copy is made, so
/// the tensors must outlive the image).
class SafetensorsImage {
public:
  explicit SafetensorsImage(const NamedTensors &tensors);
  // The first piece points into `header`: the image stays where it is.
  SafetensorsImage(const SafetensorsImage &) = delete;
  SafetensorsImage &operator=(const SafetensorsImage &) = delete;
  /// The header (length and JSON) followed by each tensor's bytes.
  llvm::ArrayRef<llvm::StringRef> pieces() const { return parts; }
  /// The file's size in bytes.
  uint64_t size() const { return bytes; }

private:
  std::string header;
  std::vector<llvm::StringRef> parts;
  uint64_t bytes = 0;
};

/// Every tensor of a safetensors file's `bytes` (read from `path`, which
/// errors name): F32, I32 and I64 as they are, F16 and BF16 widened to F32
/// (exactly: a half-precision checkpoint loads into the fp32 parameters);
/// any other dtype is an error.
llvm::Expected<std::map<std::string, HostTensor>>
parseSafetensors(const std::string &path, llvm::StringRef bytes);

/// An error naming `path`, the tensor and the first index when `t` (read
/// from that file) holds a NaN or an infinity, or, when `nonNegative` (a
/// variance), a value below 0; success otherwise.
llvm::Error checkFinite(const std::string &path, const std::string &name,
                        const HostTensor &t, bool nonNegative = false);

} // namespace gaccrt

#endif // GACC_RUNTIME_SAFETENSORS_H
