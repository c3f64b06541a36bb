//===- ArenaLayout.cpp - the arena layout ---------------------------------===//
//
// layoutArena (ArenaABI.h): the one computation of where each tensor of a
// step lives in the flat arenas.
//
//===----------------------------------------------------------------------===//

#include "abi/ArenaABI.h"

#include <algorithm>

using namespace gacc::abi;

ArenaLayout gacc::abi::layoutArena(const std::vector<int64_t> &numElements,
                                   const std::vector<bool> &noWeightDecay) {
  ArenaLayout layout;
  layout.offsets.assign(numElements.size(), 0);
  int64_t at = 0;
  for (bool decayed : {true, false}) {
    if (!decayed)
      layout.decayEnd = at;
    for (size_t i = 0; i < numElements.size(); ++i)
      if (!noWeightDecay[i] == decayed) {
        layout.offsets[i] = at;
        at += (numElements[i] + kArenaVector - 1) / kArenaVector *
              kArenaVector;
      }
  }
  layout.length = std::max(at, kArenaVector);
  return layout;
}
