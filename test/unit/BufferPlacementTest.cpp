//===- BufferPlacementTest.cpp - the step arena's offsets -----------------===//
//
// packIntervals (passes/analysis/BufferPlacement.h): buffers live at the
// same time never share bytes, dead buffers' bytes are reused, offsets are
// aligned, and the greedy-by-size layout of a small case worked out by
// hand. A brute-force check over random live ranges.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/BufferPlacement.h"

#include <gtest/gtest.h>

#include <random>

using mlir::gacc::ArenaLayout;
using mlir::gacc::LiveInterval;
using mlir::gacc::packIntervals;

namespace {

/// No two intervals that overlap in time share a byte; every offset is
/// aligned; the arena covers every buffer.
void expectValid(llvm::ArrayRef<LiveInterval> in, const ArenaLayout &layout,
                 uint64_t alignment) {
  ASSERT_EQ(layout.offsets.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(layout.offsets[i] % alignment, 0u);
    EXPECT_LE(layout.offsets[i] + in[i].bytes, layout.bytes);
    for (size_t j = i + 1; j < in.size(); ++j) {
      bool live = in[i].begin < in[j].end && in[j].begin < in[i].end;
      bool share = layout.offsets[i] < layout.offsets[j] + in[j].bytes &&
                   layout.offsets[j] < layout.offsets[i] + in[i].bytes;
      EXPECT_FALSE(live && share && in[i].bytes && in[j].bytes)
          << "buffers " << i << " and " << j << " overlap";
    }
  }
}

TEST(BufferPlacement, ChainReusesDeadBuffers) {
  // a -> b -> c -> d, each dead once the next is computed: two slots.
  std::vector<LiveInterval> in = {
      {0, 2, 1024}, {1, 3, 1024}, {2, 4, 1024}, {3, 5, 1024}};
  ArenaLayout layout = packIntervals(in, 64);
  expectValid(in, layout, 64);
  EXPECT_EQ(layout.bytes, 2048u);
}

TEST(BufferPlacement, LargestFirstBestFit) {
  // By hand: x (4096, live 0..10) goes to 0; y (2048, 1..3) and z (2048,
  // 4..6) both overlap x only, so both go above it at 4096; w (1000 -> 1024
  // with alignment 64, 2..5) overlaps x, y and z: above them at 6144.
  std::vector<LiveInterval> in = {
      {0, 10, 4096}, {1, 3, 2048}, {4, 6, 2048}, {2, 5, 1000}};
  ArenaLayout layout = packIntervals(in, 64);
  expectValid(in, layout, 64);
  EXPECT_EQ(layout.offsets[0], 0u);
  EXPECT_EQ(layout.offsets[1], 4096u);
  EXPECT_EQ(layout.offsets[2], 4096u);
  EXPECT_EQ(layout.offsets[3], 6144u);
  EXPECT_EQ(layout.bytes, 7168u);
}

TEST(BufferPlacement, GapBetweenNeighbours) {
  // By hand: a (0..9) at 0, b (1..2) above it at 3072, c (0..9) above
  // both at 6144. b is dead when e (3..5, 2048 bytes) and d (3..5, 1024)
  // are born: e takes the gap b leaves at 3072 and d the rest of it.
  std::vector<LiveInterval> in = {
      {0, 9, 3072}, {1, 2, 3072}, {0, 9, 3072}, {3, 5, 1024}, {3, 5, 2048}};
  ArenaLayout layout = packIntervals(in, 64);
  expectValid(in, layout, 64);
  EXPECT_EQ(layout.offsets[4], 3072u);
  EXPECT_EQ(layout.offsets[3], 5120u);
  EXPECT_EQ(layout.bytes, 9216u); // three 3072-byte slots
}

TEST(BufferPlacement, RandomRangesNeverOverlap) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<LiveInterval> in;
    uint64_t live = 0;
    int n = 1 + int(rng() % 60);
    for (int i = 0; i < n; ++i) {
      unsigned begin = rng() % 100;
      unsigned end = begin + 1 + rng() % 30;
      in.push_back({begin, end, uint64_t(rng() % 5000)});
    }
    ArenaLayout layout = packIntervals(in, 64);
    expectValid(in, layout, 64);
    // At least the largest total live at one time.
    for (unsigned t = 0; t < 140; ++t) {
      uint64_t at = 0;
      for (const LiveInterval &r : in)
        if (r.begin <= t && t < r.end)
          at += r.bytes;
      live = std::max(live, at);
    }
    EXPECT_GE(layout.bytes, live);
  }
}

} // namespace
