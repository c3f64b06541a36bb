//===- CheckKernelParameters.cpp - gacc-check-kernel-parameters ----------===//
//
// Refuses, with one error at the kernel, a gpu.func kernel whose parameters
// exceed the bytes PTX allows a kernel, before ptxas would.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/analysis/KernelParameters.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_GACCCHECKKERNELPARAMETERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {

struct CheckKernelParametersPass
    : public mlir::gacc::impl::GAccCheckKernelParametersPassBase<
          CheckKernelParametersPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    return checkOptionAtLeast(ctx, getArgument(), "max-parameter-bytes",
                              maxParameterBytes, 1);
  }
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      TypeRange arguments = func.getArgumentTypes();
      uint64_t bytes =
          kernelArgumentBytes(arguments, DataLayout::closest(func));
      if (int64_t(bytes) <= maxParameterBytes)
        return;
      InFlightDiagnostic error = func.emitError("kernel @");
      error << func.getName() << " takes " << bytes << " bytes of parameters ("
            << arguments.size() << " arguments), more than the "
            << int64_t(maxParameterBytes);
      if (maxParameterBytes < kPtxIsa81KernelParameterBytes)
        error << " that PTX allows before ISA 8.1 (ISA 8.1 or later allows "
              << kPtxIsa81KernelParameterBytes
              << ": features=+ptx81, or a chip from sm_100 on, whose "
                 "default PTX is newer)";
      else
        error << " allowed";
      signalPassFailure();
    });
  }
};

} // namespace
