#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace sinter {
namespace {

using Json = nlohmann::ordered_json;

std::string nested_arrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonParse, NestingIsBoundedInsideTheParser) {
  EXPECT_TRUE(parse_json<Json>(nested_arrays(kMaxJsonDepth)));
  const auto too_deep = parse_json<Json>(nested_arrays(kMaxJsonDepth + 1), "the body");
  ASSERT_FALSE(too_deep);
  EXPECT_EQ(too_deep.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(too_deep.error().message(), "the body nests deeper than 128 levels");
  // Objects count too, and a depth that would overflow any recursive walk is refused before a
  // tree exists (the parse of a million levels returns, rather than crashing later).
  EXPECT_FALSE(parse_json<Json>(std::string(1'000'000, '[') + std::string(1'000'000, ']')));
  std::string objects;
  for (int i = 0; i < 200; ++i) objects += "{\"a\":";
  objects += "1" + std::string(200, '}');
  EXPECT_FALSE(parse_json<Json>(objects));
  EXPECT_FALSE(parse_json<nlohmann::json>(nested_arrays(300)));
}

TEST(JsonParse, MalformedJsonNamesWhatWasParsed) {
  const auto broken = parse_json<Json>("{\"a\": ", "the request body");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().message().rfind("the request body is not valid JSON: ", 0), 0u)
      << broken.error().message();
  EXPECT_FALSE(parse_json<Json>("1e99999"));  // out of range, not an exception
  EXPECT_FALSE(parse_json<Json>(""));
  const auto value = parse_json<Json>(R"({"b": [1, "x", null], "a": {"c": true}})");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->dump(), R"({"b":[1,"x",null],"a":{"c":true}})");
}

// A body of empty arrays takes some 80 bytes of tree per 3 bytes of text: the account stops it
// while it is parsed, instead of a 400 MB tree being built first.
TEST(JsonParse, TheTreeIsChargedToTheAccountAsItGrows) {
  std::string body = "[";
  for (int i = 0; i < 1'000'000; ++i) body += "[],";
  body += "[]]";
  MemoryAccount small(nullptr, size_t{16} << 20);
  const auto refused = parse_json<Json>(body, "the body", {.account = &small});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kTooLarge);
  EXPECT_LE(small.charged(), size_t{16} << 20);

  MemoryAccount large(nullptr, size_t{256} << 20);
  const auto parsed = parse_json<Json>(body, "the body", {.account = &large});
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->size(), 1'000'001u);
  EXPECT_GE(large.charged(), size_t{60} << 20);  // the estimate covers the tree's allocations
  // Strings are charged by their length; the current account is used when none is given.
  MemoryAccount current(nullptr, size_t{1} << 20);
  const MemoryAccount::Scope scope(&current);
  EXPECT_FALSE(parse_json<Json>("\"" + std::string(2 << 20, 'x') + "\""));
  EXPECT_TRUE(parse_json<Json>("\"" + std::string(1000, 'x') + "\""));
}

}  // namespace
}  // namespace sinter
