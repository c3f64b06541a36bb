//===- ArenaSignature.h - the ABI of the arena kernels ----------*- C++ -*-===//
//
// Names and sizes of the functions gacc-build-arena-kernels builds, shared
// by the pass and by the runtime that calls them (runtime/ArenaKernels.h),
// so the two cannot drift apart. Argument orders: see the pass's
// description in Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_PASSES_ARENASIGNATURE_H
#define GACC_PASSES_ARENASIGNATURE_H

#include <cstdint>
#include <string>

namespace mlir::gacc::arena {

/// Threads of the sum of squares' first stage and partial sums each thread
/// of its second stage adds (65536 = 256 × 256); the partials buffer holds
/// both stages' sums.
constexpr int64_t kSumThreads = 65536, kSumFanIn = 256;
constexpr int64_t kPartials = kSumThreads + kSumThreads / kSumFanIn;

/// @<step>_accumulate_arena_<gradType> with gradType f32, bf16 or f16.
inline std::string accumulateName(const std::string &step,
                                  const std::string &gradType) {
  return step + "_accumulate_arena_" + gradType;
}
inline std::string sumSquaresName(const std::string &step) {
  return step + "_sum_squares_arena";
}
inline std::string updateName(const std::string &step) {
  return step + "_update_arena";
}

} // namespace mlir::gacc::arena

#endif // GACC_PASSES_ARENASIGNATURE_H
