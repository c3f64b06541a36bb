//===- JsonDocumentTest.cpp - JSON bounded in depth
//------------------------===//
//
// gaccrt::parseJsonDocument: documents up to kMaxJsonDepth levels parse as
// llvm::json does; a deeper one is refused before parsing; brackets inside
// strings (escaped quotes included) do not count; llvm::json's own errors
// come through.
//
//===----------------------------------------------------------------------===//

#include "runtime/JsonDocument.h"

#include <gtest/gtest.h>

#include <string>

using gaccrt::kMaxJsonDepth;
using gaccrt::parseJsonDocument;

namespace {

std::string nested(unsigned depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string errorOf(llvm::Expected<llvm::json::Value> parsed) {
  return parsed ? std::string() : llvm::toString(parsed.takeError());
}

TEST(JsonDocument, ParsesUpToTheLimit) {
  auto parsed = parseJsonDocument(nested(kMaxJsonDepth));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_NE(parsed->getAsArray(), nullptr);
}

TEST(JsonDocument, RefusesDeeperNesting) {
  EXPECT_EQ(errorOf(parseJsonDocument(nested(kMaxJsonDepth + 1))),
            "nested deeper than 64 levels");
  // Objects count as arrays do; far past the limit is refused at once.
  std::string objects;
  for (unsigned i = 0; i <= kMaxJsonDepth; ++i)
    objects += "{\"a\":";
  EXPECT_EQ(errorOf(parseJsonDocument(objects + "1" +
                                      std::string(kMaxJsonDepth + 1, '}'))),
            "nested deeper than 64 levels");
  EXPECT_EQ(errorOf(parseJsonDocument(nested(100000))),
            "nested deeper than 64 levels");
}

TEST(JsonDocument, BracketsInStringsDoNotNest) {
  std::string key(200, '[');
  auto parsed = parseJsonDocument("{\"" + key + "\\\"{{\": [1]}");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_NE(parsed->getAsObject()->getArray(key + "\"{{"), nullptr);
}

TEST(JsonDocument, ParserErrorsComeThrough) {
  EXPECT_NE(errorOf(parseJsonDocument("[1, 2")), "");
  EXPECT_NE(errorOf(parseJsonDocument("]]]")), "");
}

} // namespace
