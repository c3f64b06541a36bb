//===- CudnnAttentionUnavailable.cpp - CudnnAttention.h without cuDNN -----===//
//
// What CudnnAttention.h declares, for a build without the CUDA toolkit's
// cuDNN headers (runtime/CMakeLists.txt picks this file then): every
// function reports that cuDNN is not built in, and the entry points record
// that as a failure. The compiler still emits their calls; gacc-run says
// why it cannot run them.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaRuntime.h"
#include "runtime/CudnnAttention.h"

using namespace gaccrt::cudnn;

static const char *kUnavailable =
    "gacc was built without cuDNN's headers (cudnn.h not found in "
    "GACC_CUDA_INCLUDE_DIR), so it cannot run cuDNN's attention";

std::string gaccrt::cudnn::makeCall(bool, bool, float, bool,
                                    const std::vector<Operand4> &,
                                    AttentionCall &, std::vector<void *> &) {
  return kUnavailable;
}
std::string gaccrt::cudnn::openLibrary() { return kUnavailable; }
int64_t gaccrt::cudnn::libraryVersion() { return 0; }
std::string gaccrt::cudnn::validateGraph(const AttentionCall &, int,
                                         int64_t) {
  return kUnavailable;
}
std::string gaccrt::cudnn::load() { return kUnavailable; }
std::string gaccrt::cudnn::summary() { return ""; }

#define GACC_CUDNN_UNAVAILABLE(name, params)                                   \
  extern "C" void name(params) {                                               \
    gaccrt::cuda::recordFailure(std::string(#name) + ": " + kUnavailable);     \
  }
GACC_CUDNN_UNAVAILABLE(gacc_cudnn_attention_forward_bf16,
                       GACC_CUDNN_FORWARD_PARAMS)
GACC_CUDNN_UNAVAILABLE(gacc_cudnn_attention_forward_f16,
                       GACC_CUDNN_FORWARD_PARAMS)
GACC_CUDNN_UNAVAILABLE(gacc_cudnn_attention_backward_bf16,
                       GACC_CUDNN_BACKWARD_PARAMS)
GACC_CUDNN_UNAVAILABLE(gacc_cudnn_attention_backward_f16,
                       GACC_CUDNN_BACKWARD_PARAMS)
