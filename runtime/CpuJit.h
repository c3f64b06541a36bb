//===- CpuJit.h - running compiled training steps on the CPU ----*- C++ -*-===//
//
// JIT-compiles a module lowered by gacc-lower-to-cpu-pipeline with MLIR's
// ExecutionEngine, binds the runtime's symbols (gacc_sgemm) and calls the
// step and predict functions with host tensors as memref arguments.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CPUJIT_H
#define GACC_RUNTIME_CPUJIT_H

#include "runtime/Tensor.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace gaccrt {

/// One argument of a compiled function: a host tensor (passed as a memref
/// descriptor), a buffer at any address with a shape (a row-major memref;
/// managed or device memory for NVVM-pipeline host code) or a scalar (i32
/// arguments are passed as I64: the callee reads the low 4 bytes).
struct JitArg {
  HostTensor *tensor = nullptr;
  enum Kind { Tensor, Buffer, F32, I64 } kind = Tensor;
  float f = 0;
  int64_t i = 0;
  void *pointer = nullptr;
  std::vector<int64_t> shape;
  static JitArg of(HostTensor &t) { return {&t, Tensor, 0, 0, nullptr, {}}; }
  static JitArg buffer(void *p, std::vector<int64_t> shape) {
    return {nullptr, Buffer, 0, 0, p, std::move(shape)};
  }
  static JitArg buffer(void *p, int64_t elements) {
    return buffer(p, std::vector<int64_t>{elements});
  }
  static JitArg f32(float v) { return {nullptr, F32, v, 0, nullptr, {}}; }
  static JitArg i64(int64_t v) { return {nullptr, I64, 0, v, nullptr, {}}; }
};

class CpuJit {
public:
  /// JIT-compiles `module` (LLVM dialect). Its malloc is checked (a failed
  /// allocation goes to reportAllocationFailure, runtime/HostMemory.h); with
  /// `deviceMemory` (host code of the cuda target) its malloc and free are the
  /// managed-memory arena's (gacc_cuda_malloc/free). Errors carry the
  /// reason.
  static llvm::Expected<std::unique_ptr<CpuJit>>
  create(mlir::ModuleOp module, unsigned optLevel = 3,
         bool deviceMemory = false);
  /// Compiles `name` now (the engine compiles lazily on first lookup).
  llvm::Error materialize(llvm::StringRef name);
  /// Calls `name` with `args`; its f32 results (none, or a struct of f32
  /// values) are stored in `results`.
  llvm::Error call(llvm::StringRef name, llvm::ArrayRef<JitArg> args,
                   llvm::MutableArrayRef<float> results = {});

private:
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace gaccrt

#endif // GACC_RUNTIME_CPUJIT_H
