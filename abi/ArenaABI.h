//===- ArenaABI.h - the arenas and the arena kernels ------------*- C++ -*-===//
//
// The flat arenas of --arena-update (every parameter, accumulator and
// optimizer-state slot of a step in one buffer each) and the kernels
// gacc-build-arena-kernels builds over them: their layout, names and
// buffer sizes, defined once for the pass, the runtime (gacc-run) and the
// benchmark (gacc-bench-arena).
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ABI_ARENAABI_H
#define GACC_ABI_ARENAABI_H

#include <cstdint>
#include <string>
#include <vector>

namespace gacc::abi {

/// Elements per vector access of the arena kernels: 4 fp32 = 16 bytes.
/// Every tensor starts at a multiple of it and the length is one.
constexpr int64_t kArenaVector = 4;

/// Threads of the sum of squares' first stage and partial sums each thread
/// of its second stage adds (65536 = 256 × 256); the partials buffer holds
/// both stages' sums.
constexpr int64_t kSumThreads = 65536, kSumFanIn = 256;
constexpr int64_t kPartials = kSumThreads + kSumThreads / kSumFanIn;

/// Where each tensor of a step lives in its arenas: the tensors with weight
/// decay first (so that decay applies to [0, decayEnd)), each padded to a
/// multiple of kArenaVector, in parameter order within each group.
struct ArenaLayout {
  std::vector<int64_t> offsets; // per parameter, in elements
  int64_t decayEnd = 0;
  int64_t length = 0; // a multiple of kArenaVector, at least one vector
};
ArenaLayout layoutArena(const std::vector<int64_t> &numElements,
                        const std::vector<bool> &noWeightDecay);

/// @<step>_accumulate_arena_<gradType> with gradType f32, bf16 or f16.
inline std::string accumulateArenaName(const std::string &step,
                                       const std::string &gradType) {
  return step + "_accumulate_arena_" + gradType;
}
inline std::string sumSquaresArenaName(const std::string &step) {
  return step + "_sum_squares_arena";
}
inline std::string updateArenaName(const std::string &step) {
  return step + "_update_arena";
}

} // namespace gacc::abi

#endif // GACC_ABI_ARENAABI_H
