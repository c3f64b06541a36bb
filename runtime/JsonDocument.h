//===- JsonDocument.h - JSON read from files, bounded in depth --*- C++ -*-===//
//
// The one JSON parser for files gacc-run reads (safetensors headers,
// checkpoint manifests): llvm::json::parse behind a nesting-depth check,
// since llvm::json's recursive descent overflows the stack on a few tens
// of thousands of nested brackets.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_RUNTIME_JSONDOCUMENT_H
#define GACC_RUNTIME_JSONDOCUMENT_H

#include "llvm/Support/JSON.h"

namespace gaccrt {

/// The deepest nesting of arrays and objects parseJsonDocument accepts;
/// the documents gacc-run reads nest three or four levels.
constexpr unsigned kMaxJsonDepth = 64;

/// Parses `text` as one JSON value (llvm::json::parse). Errors as that
/// does, and with "nested deeper than 64 levels" before parsing a text
/// whose arrays and objects (outside strings) nest deeper than
/// kMaxJsonDepth.
llvm::Expected<llvm::json::Value> parseJsonDocument(llvm::StringRef text);

} // namespace gaccrt

#endif // GACC_RUNTIME_JSONDOCUMENT_H
