//===- Text.cpp - the King James Bible as a character corpus --------------===//
//
// Runs Debian's `bible` program through LLVM's process support and splits
// its output into verses.
//
//===----------------------------------------------------------------------===//

#include "runtime/Text.h"
#include "runtime/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Program.h"

using namespace gaccrt;

static llvm::Error textError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// "Ge1:1 In the beginning" -> "In the beginning".
static llvm::StringRef dropReference(llvm::StringRef line) {
  size_t space = line.find(' ');
  if (space != llvm::StringRef::npos && space > 0 &&
      line.take_front(space).contains(':') &&
      llvm::isDigit(line[space - 1]))
    return line.drop_front(space + 1);
  return line;
}

static TextCorpus splitLines(llvm::StringRef text) {
  TextCorpus corpus;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef l : lines) {
    l = dropReference(l.rtrim("\r")).trim();
    if (!l.empty())
      corpus.lines.push_back(l.str());
  }
  return corpus;
}

llvm::Expected<TextCorpus> gaccrt::loadKJV() {
  auto bible = llvm::sys::findProgramByName("bible");
  if (!bible)
    return textError("the `bible` program is missing: install Debian's "
                     "bible-kjv (make setup does), or pass --data FILE with "
                     "one verse per line");
  llvm::SmallString<128> out;
  if (auto ec = llvm::sys::fs::createTemporaryFile("gacc-kjv", "txt", out))
    return textError("cannot create a temporary file: " + ec.message());
  llvm::StringRef args[] = {*bible, "-f", "Gen1:1-Rev22:21"};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""),
                                                llvm::StringRef(out),
                                                llvm::StringRef("")};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(*bible, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/120, 0, &err);
  auto buf = llvm::MemoryBuffer::getFile(out);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !buf)
    return textError("`bible -f Gen1:1-Rev22:21` failed" +
                     (err.empty() ? llvm::Twine("") : ": " + err));
  TextCorpus corpus = splitLines((*buf)->getBuffer());
  if (corpus.lines.empty())
    return textError("`bible -f Gen1:1-Rev22:21` printed no verses");
  return corpus;
}

llvm::Expected<TextCorpus> gaccrt::loadTextLines(const std::string &path) {
  auto buf = readInputFile(path);
  if (!buf)
    return textError(path + ": " + llvm::toString(buf.takeError()));
  TextCorpus corpus = splitLines((*buf)->getBuffer());
  if (corpus.lines.empty())
    return textError(path + ": no text lines");
  return corpus;
}
