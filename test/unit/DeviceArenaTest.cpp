//===- DeviceArenaTest.cpp - unit tests of the device arena allocator -----===//
//
// Alignment, first-fit reuse, coalescing, exhaustion and peak accounting of
// gaccrt::DeviceArena (address arithmetic only: no device needed).
//
//===----------------------------------------------------------------------===//

#include "runtime/DeviceArena.h"

#include <gtest/gtest.h>

using gaccrt::DeviceArena;

TEST(DeviceArena, BlocksAreAlignedAndDisjoint) {
  DeviceArena arena(/*base=*/0x1000 + 3, /*capacity=*/1 << 20);
  auto a = arena.allocate(10), b = arena.allocate(300), c = arena.allocate(0);
  ASSERT_TRUE(a && b && c);
  for (uint64_t p : {*a, *b, *c})
    EXPECT_EQ(p % DeviceArena::kAlignment, 0u);
  EXPECT_GE(*b, *a + 256);
  EXPECT_GE(*c, *b + 512);
  EXPECT_EQ(arena.inUse(), 256u + 512u + 256u);
  EXPECT_EQ(arena.blocks(), 3u);
}

TEST(DeviceArena, PeakCountsTheMostInUse) {
  DeviceArena arena(0, 1 << 20);
  auto a = arena.allocate(4096), b = arena.allocate(8192);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(arena.free(*a));
  auto c = arena.allocate(1024);
  ASSERT_TRUE(c);
  EXPECT_EQ(arena.peak(), 4096u + 8192u);
  EXPECT_EQ(arena.inUse(), 8192u + 1024u);
  // First fit: the freed range at the start is reused.
  EXPECT_EQ(*c, *a);
}

TEST(DeviceArena, FreesCoalesceIntoOneRange) {
  DeviceArena arena(0, 4096);
  auto a = arena.allocate(1024), b = arena.allocate(1024),
       c = arena.allocate(2048);
  ASSERT_TRUE(a && b && c);
  EXPECT_FALSE(arena.allocate(1)); // full
  EXPECT_TRUE(arena.free(*a));
  EXPECT_TRUE(arena.free(*c));
  EXPECT_TRUE(arena.free(*b)); // joins both neighbours
  auto whole = arena.allocate(4096);
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, 0u);
  EXPECT_EQ(arena.inUse(), 4096u);
}

TEST(DeviceArena, RejectsWhatItCannotServe) {
  DeviceArena arena(0, 4096);
  EXPECT_FALSE(arena.allocate(4097));
  EXPECT_FALSE(arena.free(128)); // not a block
  auto a = arena.allocate(100);
  ASSERT_TRUE(a);
  EXPECT_TRUE(arena.free(*a));
  EXPECT_FALSE(arena.free(*a)); // double free
  EXPECT_EQ(arena.inUse(), 0u);
}

TEST(DeviceArena, ReserveHoldsAGivenRange) {
  DeviceArena arena(0, 4096);
  // The middle of the free range: the parts before and after stay free.
  EXPECT_TRUE(arena.reserve(1024, 1000));
  EXPECT_EQ(arena.inUse(), 1024u);
  auto a = arena.allocate(1024), b = arena.allocate(2048);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, 0u);
  EXPECT_EQ(*b, 2048u);
  EXPECT_FALSE(arena.allocate(1)); // full
  // A reserved range is a block like the others.
  EXPECT_TRUE(arena.free(1024));
  auto c = arena.allocate(1024);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 1024u);
}

TEST(DeviceArena, ReserveRefusesWhatIsNotFree) {
  DeviceArena arena(0, 4096);
  auto a = arena.allocate(1024);
  ASSERT_TRUE(a);
  EXPECT_FALSE(arena.reserve(0, 256));     // live
  EXPECT_FALSE(arena.reserve(768, 512));   // overlaps the live block
  EXPECT_FALSE(arena.reserve(1100, 256));  // not aligned
  EXPECT_FALSE(arena.reserve(3840, 512));  // past the end
  EXPECT_EQ(arena.inUse(), 1024u);
  EXPECT_EQ(arena.blocks(), 1u);
  EXPECT_TRUE(arena.reserve(1024, 3072)); // exactly the rest
  EXPECT_FALSE(arena.allocate(1));
}

TEST(DeviceArena, UnionOfRangesJoinsOverlapsAndNeighbours) {
  using R = std::vector<std::pair<uint64_t, uint64_t>>;
  // A block reused (the same range twice), an overlap, a neighbour, a gap.
  R merged = gaccrt::unionOfRanges(
      {{512, 256}, {0, 256}, {512, 256}, {600, 400}, {1000, 24}, {2048, 256},
       {4096, 0}});
  EXPECT_EQ(merged, (R{{0, 256}, {512, 512}, {2048, 256}}));
  EXPECT_TRUE(gaccrt::unionOfRanges({}).empty());
}
