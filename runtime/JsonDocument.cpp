//===- JsonDocument.cpp - JSON read from files, bounded in depth ----------===//
//
// parseJsonDocument: a scan of the brackets outside strings, then
// llvm::json::parse.
//
//===----------------------------------------------------------------------===//

#include "runtime/JsonDocument.h"

#include "llvm/ADT/Twine.h"

using namespace gaccrt;

/// Whether the arrays and objects of `text` (outside strings) nest deeper
/// than `limit`.
static bool nestsDeeperThan(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit)
        return true;
    } else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return false;
}

llvm::Expected<llvm::json::Value>
gaccrt::parseJsonDocument(llvm::StringRef text) {
  if (nestsDeeperThan(text, kMaxJsonDepth))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "nested deeper than " +
                                       llvm::Twine(kMaxJsonDepth) + " levels");
  return llvm::json::parse(text);
}
