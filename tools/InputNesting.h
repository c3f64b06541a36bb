//===- InputNesting.h - refuse input nested past the parser -----*- C++ -*-===//
//
// MLIR's parser descends once per nested bracket, region or type, so an
// input nested thousands of levels deep overflows the stack (a crash, not
// an error). gacc-opt and gacc-run scan their input first and refuse one
// nested deeper than kMaxInputNesting with one error at the place, and a
// file that is neither MLIR text nor bytecode with one error.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TOOLS_INPUTNESTING_H
#define GACC_TOOLS_INPUTNESTING_H

#include "mlir/Bytecode/BytecodeReader.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace gacc {

/// The deepest nesting gacc reads: far beyond any model (examples nest
/// below 20), far below what the parser's stack survives (about 5000).
constexpr unsigned kMaxInputNesting = 1000;

/// The offset in `text` where its brackets ((, [, { and <) first nest
/// deeper than `maxDepth`, or std::nullopt. String literals and // comments
/// are skipped; the arrows -> and the comparisons >= and <= (affine sets)
/// are not brackets.
inline std::optional<size_t> findDeepNesting(llvm::StringRef text,
                                             unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    char next = i + 1 < n ? text[i + 1] : '\0';
    if (c == '"') { // a string literal, with its escapes
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && next == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        return std::nullopt;
      continue;
    }
    bool opens = c == '(' || c == '[' || c == '{' || (c == '<' && next != '=');
    bool closes = c == ')' || c == ']' || c == '}' ||
                  (c == '>' && next != '=' && (i == 0 || text[i - 1] != '-'));
    if (opens && ++depth > maxDepth)
      return i;
    if (closes && depth > 0)
      --depth;
  }
  return std::nullopt;
}

/// Whether the main buffer of `sourceMgr` nests within kMaxInputNesting;
/// otherwise prints one error at the place (file:line:col) and returns
/// false.
inline bool checkInputNesting(llvm::SourceMgr &sourceMgr) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef text = buffer->getBuffer();
  std::optional<size_t> at = findDeepNesting(text, kMaxInputNesting);
  if (!at)
    return true;
  sourceMgr.PrintMessage(
      llvm::SMLoc::getFromPointer(text.data() + *at), llvm::SourceMgr::DK_Error,
      "brackets, regions or types nest deeper than " +
          llvm::Twine(kMaxInputNesting) +
          " levels here: more than gacc reads (its parser would run out "
          "of stack)",
      {}, {}, /*ShowColors=*/false);
  return false;
}

/// Whether the main buffer of `sourceMgr` is input gacc can parse: MLIR
/// bytecode (mlir::isBytecode), or text without a NUL byte that nests
/// within kMaxInputNesting (checkInputNesting). A binary file is one error
/// naming the file and the offset, not a parse error that echoes its bytes
/// to the terminal.
inline bool checkInputText(llvm::SourceMgr &sourceMgr) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  if (mlir::isBytecode(buffer->getMemBufferRef()))
    return true;
  size_t nul = buffer->getBuffer().find('\0');
  if (nul != llvm::StringRef::npos) {
    llvm::errs() << buffer->getBufferIdentifier()
                 << ": error: not MLIR text or bytecode (a NUL byte at offset "
                 << nul << ")\n";
    return false;
  }
  return checkInputNesting(sourceMgr);
}

} // namespace gacc

#endif // GACC_TOOLS_INPUTNESTING_H
