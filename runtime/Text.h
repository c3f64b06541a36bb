//===- Text.h - the King James Bible as a character corpus ------*- C++ -*-===//
//
// Reads the verses of the King James Bible (Debian's bible-kjv: `bible -f
// Gen1:1-Rev22:21` prints one verse per line, "Ge1:1 In the beginning…"),
// or any text file of one sample per line, as a character-level corpus.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_TEXT_H
#define GACC_RUNTIME_TEXT_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace gaccrt {

struct TextCorpus {
  std::vector<std::string> lines;
};

/// Runs `bible -f Gen1:1-Rev22:21` and keeps each verse's text (the
/// reference before the first space is dropped). Errors when the program is
/// missing (install Debian's bible-kjv) or prints nothing.
llvm::Expected<TextCorpus> loadKJV();

/// Reads a text file, one sample per line (empty lines skipped); a line
/// that starts with a verse reference like "Ge1:1 " has it dropped too.
llvm::Expected<TextCorpus> loadTextLines(const std::string &path);

} // namespace gaccrt

#endif // GACC_RUNTIME_TEXT_H
