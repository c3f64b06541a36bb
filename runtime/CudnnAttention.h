//===- CudnnAttention.h - cuDNN's fused attention -------------*- C++ -*-===//
//
// The cuda target's fused attention (gacc.fused_attention and its backward,
// lowered by convert-gacc-to-cudnn) through cuDNN's scaled-dot-product
// attention: cudnn-frontend (third_party/cudnn-frontend) builds the
// operation graph of each call's shape, layout, scale and mask once, with
// its execution plan (heuristics mode A) and workspace, and replays it on
// every later call of that shape. libcudnn.so.9 is opened at run time, so
// every binary still starts without cuDNN or a GPU. The forward also writes
// the softmax statistics (each row's log-sum-exp, fp32) that the backward
// reads; the operands are bf16 or fp16 [m, H, T, d] with any strides
// (q, k and v are often views of one fused projection).
//
// Compiled with exceptions (cudnn-frontend throws where a library symbol is
// missing): nothing thrown leaves this file.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CUDNNATTENTION_H
#define GACC_RUNTIME_CUDNNATTENTION_H

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace gaccrt::cudnn {

/// One fused attention call: direction, element type, mask and scale, the
/// dimensions [m, H, T, d] and each operand's strides (elements) in the
/// call's order: forward q, k, v, o, stats; backward q, k, v, o, dO, stats,
/// dq, dk, dv. stats is [m, H, T, 1].
struct AttentionCall {
  bool backward = false;
  bool bf16 = true;
  bool causal = false;
  float scale = 1.0f;
  std::array<int64_t, 4> dims{};
  std::vector<std::array<int64_t, 4>> strides;

  /// The operands of the direction: 5 forward, 9 backward.
  size_t numOperands() const { return backward ? 9 : 5; }
  /// The operand that holds the statistics: 4 forward, 5 backward.
  size_t statsOperand() const { return backward ? 5 : 4; }
  /// A key naming every field, the scale bit for bit (the plan cache's).
  std::string key() const {
    std::ostringstream out;
    out << (backward ? 'b' : 'f') << (bf16 ? "bf16" : "f16") << causal << ':'
        << std::hexfloat << scale;
    for (int64_t d : dims)
      out << ',' << d;
    for (const auto &s : strides)
      for (int64_t x : s)
        out << ',' << x;
    return out.str();
  }
};

/// One memref operand of an entry point: its first element, sizes and
/// strides (elements).
struct Operand4 {
  void *data;
  std::array<int64_t, 4> sizes, strides;
};

/// The call of the entry point's `operands` (AttentionCall's order) and
/// their addresses in `pointers`. Returns "" or why cuDNN cannot take
/// them: a count other than the direction's, sizes other than the first
/// operand's [m, H, T, d] (the statistics: [m, H, T, 1]), an innermost
/// stride other than 1, an address not 16-byte aligned.
std::string makeCall(bool backward, bool bf16, float scale, bool causal,
                     const std::vector<Operand4> &operands, AttentionCall &call,
                     std::vector<void *> &pointers);

/// Opens libcudnn.so.9 (or libcudnn.so) for cudnn-frontend, once. Returns
/// "" or the reason (dlerror's text).
std::string openLibrary();
/// The loaded library's version (cudnnGetVersion, e.g. 91900), 0 when not
/// loaded.
int64_t libraryVersion();

/// The oldest cuDNN the runtime takes: 9.6, from which cuDNN zeroes the
/// backward's dQ accumulator itself (before, cudnn-frontend queues that
/// memset through the CUDA runtime library at every call).
constexpr int64_t kMinimumVersion = 90600;
/// "" when cuDNN `version` (cudnnGetVersion's, e.g. 91400) is one the
/// runtime takes, otherwise why not.
inline std::string versionProblem(int64_t version) {
  if (version >= kMinimumVersion)
    return "";
  return "cuDNN " + std::to_string(version / 10000) + "." +
         std::to_string(version / 100 % 100) +
         " is older than 9.6, the oldest whose fused attention gacc runs";
}

/// Whether the graph of `call` gives cuDNN `version` (e.g. 91400) the
/// sequence lengths itself: the backward of a T that is not a multiple of
/// 128 before cuDNN 9.16, which needs a padding mask to be exact
/// (cudnn-frontend's own condition, sdpa_backward's pre_validate_node).
/// The lengths are all T (the full mask) and live at the end of the plan's
/// workspace, set when the plan is built (the first call). Without them
/// cudnn-frontend would copy them from the host through the CUDA runtime
/// library at every call: libcudart would have to be found, and a CUDA
/// graph cannot capture a copy from pageable host memory.
inline bool needsSequenceLengths(const AttentionCall &call, int64_t version) {
  return call.backward && call.dims[2] % 128 != 0 && version <= 91500;
}

/// Builds the cudnn-frontend graph of `call` as the runtime would with
/// cuDNN `version` (0: the loaded library's; with none loaded, as for one
/// before 9.16) and validates it for compute
/// capability `smVersion` (e.g. 90): what cuDNN's support surface says of
/// the shape, strides, types and mask, without a handle or a GPU (the
/// unit tests' check). Returns "" or cuDNN's reason. Needs openLibrary().
std::string validateGraph(const AttentionCall &call, int smVersion,
                          int64_t version = 0);

/// Opens the library, checks its version (versionProblem) and creates the
/// handle on the process's stream (cuda::processStream). Returns "" or the
/// reason.
std::string load();
/// After the calls: the plans built by direction and their workspace
/// ("2 forward and 2 backward plans, 12.5 MiB of workspace"), or "" when
/// cuDNN was not loaded.
std::string summary();

} // namespace gaccrt::cudnn

/// The arguments of one rank-4 memref (MLIR's expanded descriptor):
/// allocated and aligned pointers, offset, four sizes, four strides.
#define GACC_MEMREF4(T, n)                                                     \
  T *n##Alloc, T *n##Aligned, int64_t n##Off, int64_t n##S0, int64_t n##S1,    \
      int64_t n##S2, int64_t n##S3, int64_t n##St0, int64_t n##St1,            \
      int64_t n##St2, int64_t n##St3

/// The parameters of the forward and backward entry points: each operand's
/// descriptor in the call's order, then the scale and the causal flag.
#define GACC_CUDNN_FORWARD_PARAMS                                              \
  GACC_MEMREF4(uint16_t, q), GACC_MEMREF4(uint16_t, k),                        \
      GACC_MEMREF4(uint16_t, v), GACC_MEMREF4(uint16_t, o),                    \
      GACC_MEMREF4(float, stats), float scale, int32_t causal
#define GACC_CUDNN_BACKWARD_PARAMS                                             \
  GACC_MEMREF4(uint16_t, q), GACC_MEMREF4(uint16_t, k),                        \
      GACC_MEMREF4(uint16_t, v), GACC_MEMREF4(uint16_t, o),                    \
      GACC_MEMREF4(uint16_t, dO), GACC_MEMREF4(float, stats),                  \
      GACC_MEMREF4(uint16_t, dq), GACC_MEMREF4(uint16_t, dk),                  \
      GACC_MEMREF4(uint16_t, dv), float scale, int32_t causal

extern "C" {
/// cuDNN's fused attention forward (abi::cudnnAttention(false, "bf16" or
/// "f16")): o = softmax(q·kᵀ·scale + mask)·v and stats = each row's
/// log-sum-exp, on bf16 (fp16) q, k, v, o [m, H, T, d] and fp32 stats
/// [m, H, T, 1] in device memory, queued on the process's stream. A
/// failure (no cuDNN, operands makeCall refuses, a shape cuDNN refuses) is
/// recorded (cuda::recordFailure) and nothing is queued.
void gacc_cudnn_attention_forward_bf16(GACC_CUDNN_FORWARD_PARAMS);
void gacc_cudnn_attention_forward_f16(GACC_CUDNN_FORWARD_PARAMS);
/// Its backward: dq, dk, dv from q, k, v, o, dO and the forward's stats
/// (every operand bf16 or fp16 but stats), written, not accumulated.
void gacc_cudnn_attention_backward_bf16(GACC_CUDNN_BACKWARD_PARAMS);
void gacc_cudnn_attention_backward_f16(GACC_CUDNN_BACKWARD_PARAMS);
}

#endif // GACC_RUNTIME_CUDNNATTENTION_H
