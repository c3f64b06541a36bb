//===- ChecksumTest.cpp - checksums of files written in pieces ------------===//
//
// blockChecksum (runtime/Checksum.h) gives one result for a byte sequence
// however it is cut into pieces (the writer's header and tensors against
// the reader's one buffer), and changes when any byte changes.
//
//===----------------------------------------------------------------------===//

#include "runtime/Checksum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <random>

using namespace gaccrt;

namespace {

/// 2.5 blocks of pseudo-random bytes: a full block, a block and a tail.
std::string sampleBytes() {
  std::mt19937 gen(7);
  std::string s(kChecksumBlockBytes * 5 / 2, '\0');
  for (char &c : s)
    c = char(gen() & 0xff);
  return s;
}

/// `bytes` cut at `cuts` (ascending offsets).
std::vector<llvm::StringRef> cut(llvm::StringRef bytes,
                                 std::vector<size_t> cuts) {
  std::vector<llvm::StringRef> pieces;
  size_t start = 0;
  cuts.push_back(bytes.size());
  for (size_t c : cuts) {
    pieces.push_back(bytes.slice(start, c));
    start = c;
  }
  return pieces;
}

TEST(Checksum, SameForEveryCut) {
  std::string bytes = sampleBytes();
  uint64_t whole = blockChecksum(llvm::StringRef(bytes));
  size_t b = kChecksumBlockBytes;
  std::vector<std::vector<size_t>> cutsList = {
      {8},                       // a header, then one large tensor
      {0, 0, 8, 8},              // empty pieces
      {b},                       // a cut on a block boundary
      {b - 1, b + 1},            // a block gathered from three pieces
      {100, 200, 300, b + 5},    // small pieces then a large one
      {b / 2, b + b / 2, 2 * b}, // every block spans two pieces
  };
  for (auto [i, cuts] : llvm::enumerate(cutsList)) {
    auto pieces = cut(bytes, cuts);
    EXPECT_EQ(blockChecksum(pieces), whole) << "cut list " << i;
  }
}

TEST(Checksum, OneByteChanges) {
  std::string bytes = sampleBytes();
  uint64_t whole = blockChecksum(llvm::StringRef(bytes));
  for (size_t at : {size_t(0), kChecksumBlockBytes, bytes.size() - 1}) {
    std::string changed = bytes;
    changed[at] ^= 1;
    EXPECT_NE(blockChecksum(llvm::StringRef(changed)), whole) << at;
  }
  // Two bytes swapped across a block boundary (each block's bytes change
  // while the multiset of all bytes does not) change it too.
  std::string swapped = bytes;
  std::swap(swapped[kChecksumBlockBytes - 1], swapped[kChecksumBlockBytes]);
  ASSERT_NE(swapped, bytes);
  EXPECT_NE(blockChecksum(llvm::StringRef(swapped)), whole);
}

TEST(Checksum, BlocksOfXxh3) {
  // Below one block: xxh3 of the one block's xxh3 (little-endian).
  std::string small = "gacc";
  uint64_t h = llvm::xxh3_64bits(small);
  uint8_t le[8];
  for (int i = 0; i < 8; ++i)
    le[i] = uint8_t(h >> (8 * i));
  EXPECT_EQ(blockChecksum(llvm::StringRef(small)),
            llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(le, 8)));
  // The empty sequence has no blocks.
  EXPECT_EQ(blockChecksum(llvm::StringRef()),
            llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>()));
}

} // namespace
