//===- MemoryBudget.h - sizes, budgets and measured memory ------*- C++ -*-===//
//
// gacc-run's side of the memory plan: byte sizes on the command line
// ("512MiB"), the fewest micro-batches whose planned peak fits a budget,
// and the resident memory the process really grew by, to set beside the
// plan.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_GACCRUN_MEMORYBUDGET_H
#define GACC_TOOLS_GACCRUN_MEMORYBUDGET_H

#include "dialect/GAccDialect.h"
#include "passes/StepSignature.h"
#include "passes/analysis/MemoryPlan.h"

#include "llvm/Support/Error.h"

namespace gaccrt {

/// Bytes of "4096", "512KiB", "512MiB", "2GiB", "1TiB" (powers of 1024),
/// "500KB" or "500kB", "1.5GB", "2TB" (powers of 1000) or with a plain
/// "B"; a fraction is allowed with a unit. Error: anything else (a bare
/// "M", which could be either, says so), zero, or more than 2^60 bytes.
llvm::Expected<uint64_t> parseByteSize(llvm::StringRef text);

/// "3.22 MiB" ("512 bytes", "12.50 KiB" below a MiB, "1.50 GiB" from a GiB).
std::string formatBytes(uint64_t bytes);

/// The fewest accumulation steps N whose micro-batch m = ceil(E / N) (E the
/// effective batch; no larger m for the same N, which would only pad the
/// last micro-batch) has a planned peak within `budget` bytes, with its plan
/// (compiled with `options`, as the step that runs): the largest
/// micro-batch of the fewest micro-batches. Bisection over N assumes the
/// plan shrinks as N grows: m falls, and the window's N · m samples stay
/// within N - 1 of E (they may grow by a few samples from one N to the
/// next, which a model of heavy inputs and light activations could feel).
/// Over m the plan does not shrink: 64 × 4 = 256 samples can fit where
/// 40 × 7 = 280 just does.
/// Where an op's statistics take one value per sample (a batch norm over
/// [m, C]: BatchStatisticsOpInterface::getStatisticValuesPerSample), no
/// micro-batch may hold one sample: the search skips m = 1 and every m
/// that leaves a last micro-batch of one.
/// Where even the smallest micro-batch does not fit, returns its plan (its
/// heldPeakBytes above `budget`: budgetTooSmall says so). Error (the
/// message to print): a plan failed.
llvm::Expected<mlir::gacc::MemoryPlan>
chooseMicroBatch(mlir::ModuleOp model, llvm::StringRef step,
                 int64_t effectiveBatch, uint64_t budget,
                 llvm::StringRef target,
                 const mlir::gacc::GAccExpandAccumulationPassOptions &expand,
                 const mlir::gacc::StepToBuffersOptions &options);

/// The error of a budget that even the smallest micro-batch's plan
/// `smallest` exceeds: it names the budget, the minimum and its largest
/// parts.
/// `recomputed`: that plan recomputes the cheap ops (--recompute cheap),
/// which the message says.
llvm::Error budgetTooSmall(uint64_t budget,
                           const mlir::gacc::MemoryPlan &smallest,
                           bool recomputed = false);

/// Checks that no tensor the layer ops of `step`'s body compute (each is
/// held whole at some point of a micro-batch, so the largest is a lower
/// bound of any plan's peak) exceeds `memoryBytes`, the memory this process
/// may use (hostMemoryBytes, the machine's or its container's):
/// a step that cannot fit fails here, with the op and its location, and
/// not later through the system's out-of-memory killer. Error: the op,
/// its result's shape and bytes, and the memory.
llvm::Error checkLargestTensor(mlir::gacc::TrainStepOp step,
                               uint64_t memoryBytes);

/// The memory the step holds before any activation, in bytes: its
/// parameters, gradient accumulators and optimizer state (fp32, of the
/// trainable parameters' shapes), running statistics and one window of
/// inputs (the layout of `sig`).
struct PersistentState {
  uint64_t params = 0, accumulators = 0, state = 0, statistics = 0, inputs = 0;
  uint64_t total() const {
    return params + accumulators + state + statistics + inputs;
  }
};
PersistentState persistentState(const mlir::gacc::StepSignature &sig);

/// Checks that the persistent state of `sig` fits `memoryBytes`, as
/// checkLargestTensor does for one tensor: many tensors that each fit can
/// still exceed the machine together. Error: the parts and their sum, and
/// the memory.
llvm::Error checkPersistentState(const mlir::gacc::StepSignature &sig,
                                 uint64_t memoryBytes);

/// Resident memory of this process (Linux: /proc/self/status).
namespace rss {
/// Returns the allocator's free memory to the system (malloc_trim), so
/// that what is allocated next shows as growth.
void trim();
/// VmRSS after trim().
uint64_t trimmedCurrentBytes();
/// VmHWM, the peak since the last resetPeak().
uint64_t peakBytes();
/// Resets VmHWM to the current RSS (/proc/self/clear_refs); false where
/// the kernel does not allow it.
bool resetPeak();
} // namespace rss

} // namespace gaccrt

#endif // GACC_TOOLS_GACCRUN_MEMORYBUDGET_H
