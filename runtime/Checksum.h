//===- Checksum.h - checksums of files written in pieces --------*- C++ -*-===//
//
// A checksum of a byte sequence that can be computed over the pieces a
// file is written from (a header, then each tensor where it lies) and over
// the file read back in one buffer, with the same result, without joining
// the pieces into one copy: LLVM's xxh3 has no streaming form, so the
// sequence is cut into blocks of kChecksumBlockBytes, each block hashed
// with xxh3, and the checksum is xxh3 of the blocks' hashes (little-endian
// u64s) in order.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_CHECKSUM_H
#define GACC_RUNTIME_CHECKSUM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gaccrt {

/// The block size of blockChecksum: 64 KiB.
constexpr size_t kChecksumBlockBytes = size_t(64) << 10;

/// The checksum of the concatenation of `pieces` (see the file comment).
/// A block that spans pieces is gathered into one staging buffer of at
/// most kChecksumBlockBytes; every other block is hashed where it lies.
inline uint64_t blockChecksum(llvm::ArrayRef<llvm::StringRef> pieces) {
  llvm::SmallVector<uint8_t, 0> blockHashes;
  std::string staging; // the block being gathered across pieces
  auto addHash = [&](llvm::StringRef block) {
    uint8_t le[8];
    llvm::support::endian::write64le(le, llvm::xxh3_64bits(block));
    blockHashes.append(le, le + 8);
  };
  for (llvm::StringRef piece : pieces) {
    while (!piece.empty()) {
      if (staging.empty() && piece.size() >= kChecksumBlockBytes) {
        addHash(piece.take_front(kChecksumBlockBytes));
        piece = piece.drop_front(kChecksumBlockBytes);
        continue;
      }
      size_t take =
          std::min(piece.size(), kChecksumBlockBytes - staging.size());
      staging.append(piece.data(), take);
      piece = piece.drop_front(take);
      if (staging.size() == kChecksumBlockBytes) {
        addHash(staging);
        staging.clear();
      }
    }
  }
  if (!staging.empty())
    addHash(staging);
  return llvm::xxh3_64bits(blockHashes);
}

/// The checksum of one buffer: blockChecksum of a single piece.
inline uint64_t blockChecksum(llvm::StringRef bytes) {
  return blockChecksum(llvm::ArrayRef<llvm::StringRef>(bytes));
}

} // namespace gaccrt

#endif // GACC_RUNTIME_CHECKSUM_H
