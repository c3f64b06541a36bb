//===- Tensor.h - host tensors owned by the runtime -------------*- C++ -*-===//
//
// A dense row-major host buffer (fp32, i32 or i64) with its shape: the
// storage behind every memref argument of a compiled step.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_TENSOR_H
#define GACC_RUNTIME_TENSOR_H

#include "abi/MemoryABI.h"
#include "runtime/HostMemory.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace gaccrt {

enum class DType { F32, I32, I64 };

inline size_t dtypeSize(DType t) { return t == DType::I64 ? 8 : 4; }

/// Bytes of a dense tensor of `t` elements and `shape`.
inline size_t tensorBytes(DType t, const std::vector<int64_t> &shape) {
  size_t n = dtypeSize(t);
  for (int64_t d : shape)
    n *= size_t(d);
  return n;
}
inline const char *dtypeName(DType t) {
  return t == DType::F32 ? "F32" : t == DType::I32 ? "I32" : "I64";
}

/// A shape as messages write it: "[2, 3]".
inline std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// An allocator of 64-byte-aligned storage (a cache line; what the
/// compiled code's own buffers get from bufferization), so that a host
/// tensor passed to a step is aligned like the step's temporaries. Storage
/// that cannot be allocated goes to reportAllocationFailure (one line, exit
/// status 2): it comes from aligned_alloc, not operator new, whose failure
/// LLVM's new-handler would turn into a crash report.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{::gacc::abi::kHostAlignment};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) {
    size_t align = size_t(kAlignment);
    size_t bytes = (n * sizeof(T) + align - 1) / align * align;
    void *p = std::aligned_alloc(align, bytes);
    if (!p && bytes)
      reportAllocationFailure(bytes, AllocationSite::HostTensor);
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U> &) const {
    return false;
  }
};

/// Row-major host tensor; storage is 64-byte aligned.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// 8-byte words, 64-byte aligned.
  std::vector<int64_t, CacheLineAllocator<int64_t>> storage;

  HostTensor() = default;
  HostTensor(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    storage.assign((numBytes() + 7) / 8, 0);
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t numBytes() const { return tensorBytes(dtype, shape); }
  void *data() { return storage.data(); }
  const void *data() const { return storage.data(); }
  float *f32() { return reinterpret_cast<float *>(storage.data()); }
  const float *f32() const {
    return reinterpret_cast<const float *>(storage.data());
  }
  /// The flat index of the first NaN or infinity of an f32 tensor (-1 when
  /// every element is finite, or for an integer tensor).
  int64_t firstNonFinite() const {
    if (dtype != DType::F32)
      return -1;
    const float *p = f32();
    for (int64_t i = 0, n = numElements(); i < n; ++i)
      if (!std::isfinite(p[i]))
        return i;
    return -1;
  }
  /// The multi-index "[i, j, …]" of flat (row-major) index `flat`.
  std::string indexString(int64_t flat) const {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = shape[d] ? flat % shape[d] : 0;
      flat = shape[d] ? flat / shape[d] : 0;
    }
    std::string s = "[";
    for (size_t d = 0; d < idx.size(); ++d)
      s += (d ? ", " : "") + std::to_string(idx[d]);
    return s + "]";
  }
  /// Stores an integer label at flat index i (i32 or i64 tensors).
  void setInt(int64_t i, int64_t v) {
    if (dtype == DType::I64)
      reinterpret_cast<int64_t *>(storage.data())[i] = v;
    else
      reinterpret_cast<int32_t *>(storage.data())[i] = (int32_t)v;
  }
};

} // namespace gaccrt

#endif // GACC_RUNTIME_TENSOR_H
