//===- StepRuntime.h - running a compiled step ------------------*- C++ -*-===//
//
// What the training driver (Training.cpp) and --check-equivalence
// (CheckEquivalence.cpp) share: the sample order, the step's persistent
// state bound to its arguments, window filling, compilation for the CPU or
// the cuda target, and the device mirror of the step's arguments.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_STEPRUNTIME_H
#define GACC_TOOLS_GACCRUN_STEPRUNTIME_H

#include "tools/gacc-run/DataSources.h"
#include "tools/gacc-run/Options.h"

#include "runtime/ArenaKernels.h"
#include "runtime/CpuJit.h"
#include "runtime/CudaRuntime.h"

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

namespace gaccrt {

/// Parameters and running statistics (initialized from the step's
/// initializers with the seed, or loaded), and zeroed accumulators and
/// optimizer state: the persistent state of a compiled step, allocated
/// once.
struct StepState {
  std::vector<HostTensor> params, accs, states, statistics, windows;
  std::vector<JitArg> args;
};

/// The step's memref arguments in device-visible (managed) memory: each
/// tensor argument mirrored into a block of the managed arena, so the
/// kernels, cuBLAS and the host code all reach it. The arguments the host
/// fills before every step (`hostWritten`: the window's inputs) get
/// managed ranges of their own instead (cuda::mallocHostWritten), filled
/// by the copy engine (cuda::copyToDevice).
struct DeviceMirror {
  std::vector<void *> blocks; // per argument, null for scalars
  std::vector<HostTensor *> tensors;
  std::vector<JitArg> args;

  llvm::Error bind(const std::vector<JitArg> &hostArgs,
                   const std::function<bool(size_t)> &hostWritten) {
    for (const JitArg &a : hostArgs) {
      if (a.kind != JitArg::Tensor) {
        blocks.push_back(nullptr);
        tensors.push_back(nullptr);
        args.push_back(a);
        continue;
      }
      size_t bytes = std::max<size_t>(a.tensor->numBytes(), 4);
      bool ownRange = hostWritten(args.size());
      void *p = ownRange ? gaccrt::cuda::mallocHostWritten(bytes)
                         : gacc_cuda_malloc(bytes);
      if (!p)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "cuda: " + (ownRange ? gaccrt::cuda::lastError()
                                 : std::string("device memory exhausted")));
      std::memcpy(p, a.tensor->data(), a.tensor->numBytes());
      blocks.push_back(p);
      tensors.push_back(a.tensor);
      args.push_back(JitArg::buffer(p, a.tensor->shape));
    }
    return llvm::Error::success();
  }
  /// Copies argument k between its host tensor and the device (to the
  /// device: queued on the process's stream, ahead of the step's kernels).
  void toDevice(size_t k) {
    gaccrt::cuda::copyToDevice(blocks[k], tensors[k]->data(),
                               tensors[k]->numBytes());
  }
  void toHost(size_t k) {
    std::memcpy(tensors[k]->data(), blocks[k], tensors[k]->numBytes());
  }
};

/// The runtime's element type and shape of a step argument type.
DType dtypeOf(mlir::Type t);
std::vector<int64_t> shapeOf(mlir::ShapedType t);

/// The parameters and running statistics from the step's initializers
/// (drawn with the seed, the statistics after the parameters), or from
/// --load-params (names and shapes must match). Every parameter and
/// statistic must be in the file, except that in a step with frozen
/// parameters the trainable ones the file lacks keep their initial values
/// and are listed in `initialized`.
llvm::Error initialParameters(const mlir::gacc::StepSignature &sig,
                              const RunSettings &settings,
                              std::vector<HostTensor> &params,
                              std::vector<HostTensor> &statistics,
                              std::vector<std::string> *initialized = nullptr);

/// The flat arenas of --arena-update: every trainable parameter,
/// accumulator and optimizer-state slot of the step in one buffer each, in the layout of
/// abi/ArenaABI.h (the parameters with weight decay first, each tensor
/// padded to 16 bytes),
/// plus the small buffers the arena kernels read. The step's arguments for
/// parameters, accumulators and state become views into them; after each
/// step the runtime calls @S_sum_squares_arena (when clipping) and
/// @S_update_arena over the whole arenas.
struct StepArenas {
  ArenaBuffers buffers;
  int64_t decayEnd = 0;  // [0, decayEnd) gets weight decay
  std::vector<unsigned> members; // the parameter of each slot (trainable)
  std::vector<int64_t> offsets; // per slot, in elements

  /// Lays out and allocates the arenas (`alloc(bytes, hostTouched)`
  /// returns 64-byte-aligned, zeroed memory: host or managed; `hostTouched`
  /// marks the small buffers the host writes before every update, the count
  /// and the non-finite flag), copies the parameters, accumulators and
  /// state in and points the step's arguments for them at the arenas.
  llvm::Error bind(const mlir::gacc::StepSignature &sig, StepState &st,
                   const std::function<void *(size_t, bool)> &alloc);
  /// Copies the parameters back into the host tensors.
  void paramsToHost(std::vector<HostTensor> &params) const;
  /// Copies parameters, accumulators and optimizer state back into `st`'s
  /// host tensors (for a checkpoint).
  void stateToHost(StepState &st) const;
  /// The deferred update of one optimizer step over the arenas.
  llvm::Error update(CpuJit &jit, const mlir::gacc::StepSignature &sig,
                     bool clips, float count, bool skipped, float baseLr,
                     int64_t step, float lossScale);
};

/// Reads --order-file: one index in [0, n) per line.
llvm::Expected<std::vector<int64_t>> readOrderFile(const std::string &path,
                                                   int64_t n);

/// The documented default order: Fisher–Yates with std::mt19937_64 seeded
/// by seed·1000003 + epoch + 1; j = rng() mod (i + 1) for i = n−1 … 1.
std::vector<int64_t> shuffledOrder(int64_t n, uint64_t seed, int64_t epoch);

/// Allocates accumulators, state and windows and binds the step's arguments
/// (the order of StepSignature). Errors: an allocation that cannot succeed,
/// named with its size.
llvm::Error bindStepState(const mlir::gacc::StepSignature &sig, const RunSettings &settings,
                   StepState &st);

/// Fills the window with samples order[begin, end); the remaining rows are
/// padding whose targets are the loss's padding target (ignore_index), so
/// they add nothing and are not counted by the step.
void fillWindow(const DataSource &data, const mlir::gacc::StepSignature &sig,
                const std::vector<int64_t> &order, int64_t begin, int64_t end,
                std::vector<HostTensor> &windows);

/// The library pipeline rejected the model (its diagnostics are printed):
/// bad input, unlike a failure of the JIT.
class CompileError : public llvm::ErrorInfo<CompileError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override {
    os << "compilation failed (see the diagnostics printed before)";
  }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
};

/// Reports `e` and returns `status`, the exit status it leads to.
int reportFailure(llvm::Error e, int status = 1);

/// Reports an error of compileStep and returns the exit status it leads to:
/// a CompileError (whose diagnostics are already printed, one line each) is
/// bad input and adds no line; any other error is printed and gives 1.
int reportCompileFailure(llvm::Error e);

/// Lowers with the library pipeline (the one gacc-opt registers) and JIT
/// compiles the step and predict functions now. With `onDevice`, the NVVM
/// pipeline for the device (cubin for its compute capability, cuBLAS GEMMs)
/// and host code whose memory is the managed-memory arena.
llvm::Expected<std::unique_ptr<CpuJit>>
compileStep(mlir::ModuleOp model, const mlir::gacc::StepSignature &sig,
            const RunSettings &settings, bool onDevice = false);

/// The step's data source; reports the error and returns null when it
/// cannot be opened or does not fit the step.
std::unique_ptr<DataSource> sourceForStep(const mlir::gacc::StepSignature &sig,
                                          const RunSettings &settings);

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_STEPRUNTIME_H
