//===- CudnnAttention.cpp - cuDNN's fused attention -----------------------===//
//
// The graphs (cudnn-frontend's sdpa and sdpa_backward nodes), the plans
// kept per call shape, and the entry points of CudnnAttention.h.
//
//===----------------------------------------------------------------------===//

#define NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING
#define CUDNN_FRONTEND_SKIP_JSON_LIB

#include "runtime/CudnnAttention.h"
#include "runtime/CudaDriver.h"
#include "runtime/CudaRuntime.h"

#include <cudnn_frontend.h>

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

// cudnn-frontend's dynamic loading reads the library through this handle.
namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend

namespace fe = cudnn_frontend;
using namespace gaccrt::cudnn;

std::string gaccrt::cudnn::openLibrary() {
  static std::once_flag once;
  static std::string problem;
  std::call_once(once, [] {
    for (const char *name : {"libcudnn.so.9", "libcudnn.so"})
      if ((fe::cudnn_dlhandle = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        return;
    const char *e = dlerror();
    problem = std::string("no cuDNN (") + (e ? e : "libcudnn.so.9") + ")";
  });
  return problem;
}

int64_t gaccrt::cudnn::libraryVersion() {
  if (!fe::cudnn_dlhandle)
    return 0;
  try {
    return int64_t(fe::detail::get_backend_version());
  } catch (const std::exception &) {
    return 0;
  }
}

namespace {

/// Uids of the graph's tensors: the operand's position in the call, plus 1;
/// after the operands, the sequence lengths of queries and of keys.
int64_t uidOf(size_t operand) { return int64_t(operand) + 1; }
int64_t queryLengthsUid(const AttentionCall &call) {
  return uidOf(call.numOperands());
}
int64_t keyLengthsUid(const AttentionCall &call) {
  return uidOf(call.numOperands() + 1);
}

/// The graph of `call` for compute capability `smVersion` (set before the
/// nodes, which copy it, so that the support checks need not ask the CUDA
/// runtime library for the device's): bf16 (fp16) input and output, fp32
/// intermediates and compute, every tensor with the call's strides; with
/// `sequenceLengths`, a padding mask whose int32 [m, 1, 1, 1] lengths are
/// given (needsSequenceLengths).
std::shared_ptr<fe::graph::Graph> buildGraph(const AttentionCall &call,
                                             int smVersion,
                                             bool sequenceLengths) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_sm_version(smVersion);
  graph
      ->set_io_data_type(call.bf16 ? fe::DataType_t::BFLOAT16
                                   : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  std::vector<int64_t> dims(call.dims.begin(), call.dims.end());
  std::vector<int64_t> rowDims = {dims[0], dims[1], dims[2], 1};
  auto attributes = [&](size_t i, const char *name) {
    bool stats = i == call.statsOperand();
    auto t = fe::graph::Tensor_attributes()
                 .set_name(name)
                 .set_uid(uidOf(i))
                 .set_dim(stats ? rowDims : dims)
                 .set_stride(std::vector<int64_t>(call.strides[i].begin(),
                                                  call.strides[i].end()));
    if (stats)
      t.set_data_type(fe::DataType_t::FLOAT);
    return t;
  };
  auto input = [&](size_t i, const char *name) {
    return graph->tensor(attributes(i, name));
  };
  auto output = [&](const std::shared_ptr<fe::graph::Tensor_attributes> &t,
                    size_t i, const char *name) {
    auto a = attributes(i, name);
    t->set_output(true)
        .set_name(a.get_name())
        .set_uid(uidOf(i))
        .set_dim(a.get_dim())
        .set_stride(a.get_stride());
    if (i == call.statsOperand())
      t->set_data_type(fe::DataType_t::FLOAT);
  };
  auto q = input(0, "q"), k = input(1, "k"), v = input(2, "v");
  if (!call.backward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("attention")
                       .set_generate_stats(true)
                       .set_attn_scale(call.scale);
    if (call.causal)
      options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
          .set_diagonal_band_right_bound(0);
    auto [o, stats] = graph->sdpa(q, k, v, options);
    output(o, 3, "o");
    output(stats, 4, "stats");
    return graph;
  }
  auto o = input(3, "o"), dO = input(4, "dO"), stats = input(5, "stats");
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("attention_backward")
                     .set_attn_scale(call.scale);
  if (call.causal)
    options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
        .set_diagonal_band_right_bound(0);
  if (sequenceLengths) {
    auto lengths = [&](int64_t uid, const char *name) {
      return graph->tensor(fe::graph::Tensor_attributes()
                               .set_name(name)
                               .set_uid(uid)
                               .set_dim({dims[0], 1, 1, 1})
                               .set_stride({1, 1, 1, 1})
                               .set_data_type(fe::DataType_t::INT32));
    };
    options.set_padding_mask(true)
        .set_seq_len_q(lengths(queryLengthsUid(call), "seq_len_q"))
        .set_seq_len_kv(lengths(keyLengthsUid(call), "seq_len_kv"));
  }
  auto [dq, dk, dv] = graph->sdpa_backward(q, k, v, o, dO, stats, options);
  output(dq, 6, "dq");
  output(dk, 7, "dk");
  output(dv, 8, "dv");
  return graph;
}

/// The reason of a failed cudnn-frontend step, "" when it succeeded.
std::string describe(const char *step, fe::error_t status) {
  if (status.is_good())
    return "";
  return std::string(step) + ": " + status.get_message();
}

/// What a call shape keeps: its graph with the plan built, and its
/// workspace (device memory kept for the run), whose end holds the
/// sequence lengths when the graph takes them (null otherwise).
struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  void *workspace = nullptr;
  int64_t workspaceBytes = 0;
  void *sequenceLengths = nullptr;
};

/// The handle and the plans, created on first use; every entry point
/// goes through one lock (the step's host code is single-threaded).
struct State {
  std::mutex mutex;
  cudnnHandle_t handle = nullptr;
  std::map<std::string, Plan> plans;
  int forwardPlans = 0, backwardPlans = 0;
  int64_t workspaceBytes = 0;
};
State &state() {
  // Never destroyed: the handle and the plans live until the process ends
  // (the driver may be gone by the time static destructors run).
  static State *s = new State;
  return *s;
}

/// Sets the m int32 sequence lengths at `lengths` to T, queued on the
/// process's stream before the call that reads them. Returns "" or the
/// reason.
std::string setSequenceLengths(const AttentionCall &call, void *lengths) {
  std::string reason;
  const gaccrt::cuda::Driver *d = gaccrt::cuda::load(reason);
  if (!d)
    return reason;
  if (gaccrt::cuda::CUresult r = d->cuMemsetD32Async(
          reinterpret_cast<gaccrt::cuda::CUdeviceptr>(lengths),
          unsigned(call.dims[2]), size_t(call.dims[0]),
          static_cast<gaccrt::cuda::CUstream>(
              gaccrt::cuda::processStream())))
    return gaccrt::cuda::describe(*d, "cuMemsetD32Async", r);
  return "";
}

/// The plan of `call`, built on its first use. Returns "" or the reason.
std::string getPlan(State &s, const AttentionCall &call, Plan *&plan) {
  auto [it, inserted] = s.plans.try_emplace(call.key());
  plan = &it->second;
  if (!inserted && plan->graph)
    return "";
  bool lengths = needsSequenceLengths(call, libraryVersion());
  auto graph = buildGraph(call, gaccrt::cuda::deviceInfo().computeCapability,
                          lengths);
  if (std::string problem =
          describe("build", graph->build(s.handle, {fe::HeurMode_t::A}));
      !problem.empty()) {
    s.plans.erase(it);
    return problem;
  }
  int64_t bytes = 0;
  if (std::string problem =
          describe("get_workspace_size", graph->get_workspace_size(bytes));
      !problem.empty()) {
    s.plans.erase(it);
    return problem;
  }
  // The lengths after cuDNN's workspace, 16-byte aligned.
  int64_t lengthsOffset = (bytes + 15) / 16 * 16;
  if (lengths)
    bytes = lengthsOffset + call.dims[0] * int64_t(sizeof(int32_t));
  void *workspace = nullptr;
  if (bytes > 0 && !(workspace = gacc_cuda_malloc(uint64_t(bytes)))) {
    s.plans.erase(it);
    return "no device memory for the workspace (" + std::to_string(bytes) +
           " bytes)";
  }
  if (lengths) {
    plan->sequenceLengths = static_cast<char *>(workspace) + lengthsOffset;
    if (std::string problem = setSequenceLengths(call, plan->sequenceLengths);
        !problem.empty()) {
      gacc_cuda_free(workspace);
      s.plans.erase(it);
      return problem;
    }
  }
  plan->graph = std::move(graph);
  plan->workspace = workspace;
  plan->workspaceBytes = bytes;
  s.workspaceBytes += bytes;
  ++(call.backward ? s.backwardPlans : s.forwardPlans);
  return "";
}

/// Runs `call` on `pointers` (device addresses in the call's operand
/// order). Returns "" or the reason nothing was queued.
std::string run(const AttentionCall &call,
                const std::vector<void *> &pointers) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.handle)
    return "cuDNN is not loaded";
  Plan *plan = nullptr;
  if (std::string problem = getPlan(s, call, plan); !problem.empty())
    return "cuDNN " + problem;
  std::unordered_map<int64_t, void *> pack;
  for (size_t i = 0; i < pointers.size(); ++i)
    pack[uidOf(i)] = pointers[i];
  if (plan->sequenceLengths) {
    pack[queryLengthsUid(call)] = plan->sequenceLengths;
    pack[keyLengthsUid(call)] = plan->sequenceLengths;
  }
  if (std::string problem = describe(
          "execute", plan->graph->execute(s.handle, pack, plan->workspace));
      !problem.empty())
    return "cuDNN " + problem;
  return "";
}

/// The entry points' common body: the call of `operands`, checked and run,
/// or the failure recorded (nothing thrown leaves it).
void runOperands(bool backward, bool bf16, float scale, int32_t causal,
                 const std::vector<Operand4> &operands) {
  const char *name = backward ? "gacc_cudnn_attention_backward"
                              : "gacc_cudnn_attention_forward";
  std::string problem;
  try {
    AttentionCall call;
    std::vector<void *> pointers;
    problem =
        makeCall(backward, bf16, scale, causal != 0, operands, call, pointers);
    if (problem.empty())
      problem = run(call, pointers);
  } catch (const std::exception &e) {
    problem = e.what();
  } catch (...) {
    problem = "an unknown exception";
  }
  if (!problem.empty())
    gaccrt::cuda::recordFailure(std::string(name) + ": " + problem);
}

} // namespace

std::string gaccrt::cudnn::validateGraph(const AttentionCall &call,
                                         int smVersion, int64_t version) {
  if (call.strides.size() != call.numOperands())
    return "expected " + std::to_string(call.numOperands()) +
           " operands' strides, got " + std::to_string(call.strides.size());
  try {
    bool lengths =
        needsSequenceLengths(call, version ? version : libraryVersion());
    return describe("validate",
                    buildGraph(call, smVersion, lengths)->validate());
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

std::string gaccrt::cudnn::makeCall(bool backward, bool bf16, float scale,
                                    bool causal,
                                    const std::vector<Operand4> &operands,
                                    AttentionCall &call,
                                    std::vector<void *> &pointers) {
  call = AttentionCall();
  call.backward = backward;
  call.bf16 = bf16;
  call.causal = causal;
  call.scale = scale;
  pointers.clear();
  if (operands.size() != call.numOperands())
    return "expected " + std::to_string(call.numOperands()) +
           " operands, got " + std::to_string(operands.size());
  call.dims = operands.front().sizes;
  std::array<int64_t, 4> rows = {call.dims[0], call.dims[1], call.dims[2], 1};
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand4 &o = operands[i];
    auto expected = i == call.statsOperand() ? rows : call.dims;
    std::string which = "operand " + std::to_string(i);
    if (o.sizes != expected)
      return which + " has sizes other than the query's [m, H, T, d] (or "
                     "[m, H, T, 1] for the statistics)";
    if (o.strides[3] != 1)
      return which + "'s innermost stride is " + std::to_string(o.strides[3]) +
             ", cuDNN needs 1";
    if (reinterpret_cast<uintptr_t>(o.data) % 16 != 0)
      return which + " is not 16-byte aligned";
    call.strides.push_back(o.strides);
    pointers.push_back(o.data);
  }
  return "";
}

std::string gaccrt::cudnn::load() {
  try {
    if (std::string problem = openLibrary(); !problem.empty())
      return problem;
    if (std::string problem = versionProblem(libraryVersion());
        !problem.empty())
      return problem;
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.handle)
      return "";
    cudnnHandle_t handle = nullptr;
    if (cudnnStatus_t status = fe::detail::create_handle(&handle))
      return "cudnnCreate failed with status " + std::to_string(status);
    auto stream = static_cast<cudaStream_t>(gaccrt::cuda::processStream());
    if (cudnnStatus_t status = fe::detail::set_stream(handle, stream)) {
      fe::detail::destroy_handle(handle);
      return "cudnnSetStream failed with status " + std::to_string(status);
    }
    s.handle = handle;
    return "";
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

std::string gaccrt::cudnn::summary() {
  try {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.handle)
      return "";
    std::ostringstream out;
    out << "cuDNN " << libraryVersion() << ", " << s.forwardPlans
        << " forward and " << s.backwardPlans << " backward attention plans, "
        << s.workspaceBytes / double(1 << 20) << " MiB of workspace";
    return out.str();
  } catch (...) {
    return "";
  }
}

// The entry points: each memref's first element, sizes and strides.
// clang-format off
#define GACC_OPERAND(n)                                                        \
  Operand4{n##Aligned + n##Off, {n##S0, n##S1, n##S2, n##S3},                  \
           {n##St0, n##St1, n##St2, n##St3}}
// clang-format on

#define GACC_CUDNN_FORWARD(name, isBF16)                                       \
  extern "C" void name(GACC_CUDNN_FORWARD_PARAMS) {                            \
    runOperands(false, isBF16, scale, causal,                                  \
                {GACC_OPERAND(q), GACC_OPERAND(k), GACC_OPERAND(v),            \
                 GACC_OPERAND(o), GACC_OPERAND(stats)});                       \
  }
GACC_CUDNN_FORWARD(gacc_cudnn_attention_forward_bf16, true)
GACC_CUDNN_FORWARD(gacc_cudnn_attention_forward_f16, false)

#define GACC_CUDNN_BACKWARD(name, isBF16)                                      \
  extern "C" void name(GACC_CUDNN_BACKWARD_PARAMS) {                           \
    runOperands(true, isBF16, scale, causal,                                   \
                {GACC_OPERAND(q), GACC_OPERAND(k), GACC_OPERAND(v),            \
                 GACC_OPERAND(o), GACC_OPERAND(dO), GACC_OPERAND(stats),       \
                 GACC_OPERAND(dq), GACC_OPERAND(dk), GACC_OPERAND(dv)});       \
  }
GACC_CUDNN_BACKWARD(gacc_cudnn_attention_backward_bf16, true)
GACC_CUDNN_BACKWARD(gacc_cudnn_attention_backward_f16, false)
