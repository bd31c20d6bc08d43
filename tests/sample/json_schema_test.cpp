// JSON schema → GBNF: each supported keyword's rules, the property order, the limits, and the
// errors (keyword and JSON pointer) for what is not supported. That the grammars generate valid
// values is checked end to end by tests/sample/schema_conformance.py (slow).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include "sample/json_schema/integer_range.h"
#include "sample/json_schema/pattern.h"
#include "sample/json_schema_grammar.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

std::string convert(const std::string& schema, JsonWhitespace whitespace = JsonWhitespace::kCompact) {
  JsonSchemaOptions options;
  options.whitespace = whitespace;
  auto grammar = json_schema_text_to_grammar(schema, options);
  EXPECT_TRUE(grammar.ok()) << schema << ": " << grammar.error().message();
  return grammar.ok() ? *grammar : std::string();
}

std::string error_of(const std::string& schema, const JsonSchemaOptions& options = {}) {
  auto grammar = json_schema_text_to_grammar(schema, options);
  EXPECT_FALSE(grammar.ok()) << schema << " converted to\n" << grammar.value_or("");
  return grammar.ok() ? std::string() : grammar.error().message();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The digit grammars use only literals of digits and '-', classes, groups, '|' and {n}: the same
// text without quotes and spaces is an ECMAScript regex with the same language.
std::regex regex_of_digits(const std::string& expression) {
  std::string out;
  for (char c : expression) {
    if (c != '"' && c != ' ') out += c;
  }
  return std::regex(out);
}

void expect_exact_range(int64_t low, int64_t high) {
  const std::regex re = regex_of_digits(json_schema::integer_range_expression(low, high));
  auto check = [&](int64_t x) {
    EXPECT_EQ(std::regex_match(std::to_string(x), re), x >= low && x <= high)
        << x << " in [" << low << ", " << high << "]: " << json_schema::integer_range_expression(low, high);
  };
  for (int64_t x = low - 40; x <= high + 40 && x <= low + 3000; ++x) check(x);
  for (int64_t x = std::max(low, high - 3000); x <= high + 40; ++x) check(x);
  // Leading zeros and "-0" are never generated.
  EXPECT_FALSE(std::regex_match("00", re));
  EXPECT_FALSE(std::regex_match("-0", re));
  EXPECT_FALSE(std::regex_match("0" + std::to_string(std::max<int64_t>(high, 1)), re));
}

TEST(JsonSchemaIntegerRange, IsExactOnSmallAndBoundaryRanges) {
  const int64_t ranges[][2] = {{0, 0},   {0, 9},      {0, 10},       {1, 120},    {5, 5},       {7, 13},
                               {-5, 5},  {-120, -3},  {-1, 0},       {99, 101},   {-1000, 999}, {100, 199},
                               {10, 99}, {123, 4567}, {-4567, -123}, {0, 100000}, {19, 2001}};
  for (const auto& r : ranges) expect_exact_range(r[0], r[1]);
}

TEST(JsonSchemaIntegerRange, IsExactOnRandomRanges) {
  std::mt19937_64 rng(27);
  for (int i = 0; i < 40; ++i) {
    const int64_t a = static_cast<int64_t>(rng() % 200000) - 100000;
    const int64_t b = a + static_cast<int64_t>(rng() % 5000);
    expect_exact_range(a, b);
  }
}

TEST(JsonSchemaIntegerRange, HandlesEighteenDigitBounds) {
  const std::regex re = regex_of_digits(
      json_schema::integer_range_expression(-json_schema::kMaxIntegerBound, json_schema::kMaxIntegerBound));
  EXPECT_TRUE(std::regex_match("1000000000000000000", re));
  EXPECT_TRUE(std::regex_match("-999999999999999999", re));
  EXPECT_FALSE(std::regex_match("1000000000000000001", re));
}

TEST(JsonSchemaGrammar, FixedGrammarsForAnyObjectAndValue) {
  const std::string object = json_object_grammar();
  EXPECT_EQ(object.rfind("root ::= object\n", 0), 0u) << object;
  EXPECT_TRUE(contains(object, "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}")) << object;
  EXPECT_EQ(json_value_grammar().rfind("root ::= value\n", 0), 0u);
  EXPECT_EQ(convert("{}"), json_value_grammar(JsonWhitespace::kCompact));
  EXPECT_EQ(convert("true"), json_value_grammar(JsonWhitespace::kCompact));
  EXPECT_TRUE(contains(json_object_grammar(JsonWhitespace::kCompact), "space ::= \" \"?"));
}

TEST(JsonSchemaGrammar, PrimitiveTypes) {
  EXPECT_TRUE(contains(convert(R"({"type": "string"})"), "root ::= string"));
  EXPECT_TRUE(contains(convert(R"({"type": "number"})"), "root ::= number"));
  EXPECT_TRUE(contains(convert(R"({"type": "integer"})"), "root ::= integer"));
  EXPECT_TRUE(contains(convert(R"({"type": "boolean"})"), "root ::= boolean"));
  EXPECT_TRUE(contains(convert(R"({"type": "null"})"), "root ::= null"));
  EXPECT_TRUE(contains(convert(R"({"type": "object"})"), "root ::= object"));
  EXPECT_TRUE(contains(convert(R"({"type": "array"})"), "root ::= array"));
  const std::string both = convert(R"({"type": ["string", "null"]})");
  EXPECT_TRUE(contains(both, "string | null")) << both;
}

TEST(JsonSchemaGrammar, PropertiesRequiredFirstInSchemaOrder) {
  const std::string g = convert(R"({"type": "object", "properties": {"b": {"type": "integer"},
      "a": {"type": "string"}, "c": {"type": "boolean"}}, "required": ["c", "a"]})");
  // Required a, c in the order of `properties`, then optional b; no other properties.
  EXPECT_TRUE(contains(g, "\"{\" space root-a-kv \",\" space root-c-kv (\",\" space root-b-kv)? \"}\" space"))
      << g;
  EXPECT_TRUE(contains(g, "root-a-kv ::= \"\\\"a\\\"\" space \":\" space string")) << g;
}

TEST(JsonSchemaGrammar, OnlyOptionalPropertiesNeedNoLeadingComma) {
  const std::string g = convert(R"({"properties": {"x": {"type": "integer"}, "y": {"type": "integer"},
      "z": {"type": "integer"}}})");
  EXPECT_TRUE(contains(g, "(root-x-kv root-rest-1 | root-y-kv root-rest | root-z-kv )?")) << g;
}

TEST(JsonSchemaGrammar, AdditionalProperties) {
  const std::string schema_valued = convert(R"({"properties": {"id": {"type": "integer"}}, "required": ["id"],
      "additionalProperties": {"type": "number"}})");
  EXPECT_TRUE(contains(schema_valued, "root-additional-kv ::= root-additional-key \":\" space number"))
      << schema_valued;
  EXPECT_TRUE(contains(schema_valued, "(\",\" space root-additional-kv)*")) << schema_valued;
  // The additional keys exclude the named ones: "id" is refused, "i" and "idx" are not.
  EXPECT_TRUE(
      contains(schema_valued, "\"i\" ([^d\"\\\\\\x00-\\x1F] char* | \"d\" ([^\"\\\\\\x00-\\x1F] char*))?"))
      << schema_valued;
  const std::string closed = convert(R"({"properties": {"a": {}}, "additionalProperties": false})");
  EXPECT_FALSE(contains(closed, "additional")) << closed;
  // maxProperties bounds the additional entries to what the named ones leave.
  const std::string bounded = convert(R"({"properties": {"n": {}}, "required": ["n"],
      "additionalProperties": {"type": "null"}, "maxProperties": 3})");
  EXPECT_TRUE(contains(bounded, "(\",\" space root-additional-kv){0,2}")) << bounded;
  const std::string map = convert(R"({"type": "object", "additionalProperties": {"type": "integer"}})");
  EXPECT_TRUE(contains(map, "(root-additional-kv (\",\" space root-additional-kv)*)?")) << map;
}

TEST(JsonSchemaGrammar, ArraysItemsAndBounds) {
  EXPECT_TRUE(contains(convert(R"({"items": {"type": "integer"}, "minItems": 2, "maxItems": 5})"),
                       "\"[\" space integer (\",\" space integer){1,4} \"]\" space"));
  EXPECT_TRUE(contains(convert(R"({"type": "array", "items": {"type": "string"}})"),
                       "\"[\" space (string (\",\" space string)*)? \"]\" space"));
  EXPECT_TRUE(contains(convert(R"({"type": "array", "items": {"type": "string"}, "maxItems": 1})"),
                       "\"[\" space (string )? \"]\" space"));
  const std::string tuple =
      convert(R"({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false})");
  EXPECT_TRUE(contains(tuple, "\"[\" space string \",\" space integer \"]\" space")) << tuple;
  const std::string open_tuple =
      convert(R"({"prefixItems": [{"type": "string"}], "items": {"type": "null"}})");
  EXPECT_TRUE(contains(open_tuple, "\"[\" space string (\",\" space null)* \"]\" space")) << open_tuple;
}

TEST(JsonSchemaGrammar, EnumAndConst) {
  EXPECT_TRUE(contains(convert(R"({"enum": ["red", 1, null, {"a": [true]}]})"),
                       R"(root ::= ("\"red\"" | "1" | "null" | "{\"a\":[true]}") space)"));
  EXPECT_TRUE(contains(convert(R"({"const": "x\ny"})"), R"(root ::= ("\"x\\ny\"") space)"));
  // `type` beside `enum` keeps only the values of that type.
  EXPECT_TRUE(contains(convert(R"({"type": "string", "enum": ["a", 2]})"), R"(root ::= ("\"a\"") space)"));
}

TEST(JsonSchemaGrammar, StringLengthsPatternsAndFormats) {
  EXPECT_TRUE(contains(convert(R"({"type": "string", "minLength": 2, "maxLength": 8})"),
                       R"(root ::= "\"" char{2,8} "\"" space)"));
  EXPECT_TRUE(contains(convert(R"({"type": "string", "pattern": "^[a-z]+-\\d{2,3}$"})"),
                       R"(root ::= "\"" [a-z]+ "-" [0-9]{2,3} "\"" space)"));
  EXPECT_TRUE(contains(convert(R"({"type": "string", "format": "date"})"), "root ::= date-string"));
  EXPECT_TRUE(
      contains(convert(R"({"type": "string", "format": "date-time"})"), "date-time ::= date \"T\" time"));
  EXPECT_TRUE(contains(convert(R"({"type": "string", "format": "uuid"})"), "root ::= uuid"));
  EXPECT_TRUE(contains(convert(R"({"type": "string", "format": "email"})"), "root ::= string"));
}

TEST(JsonSchemaGrammar, IntegerAndNumberBounds) {
  EXPECT_TRUE(contains(convert(R"({"type": "integer", "minimum": 1, "maximum": 12})"),
                       R"(root ::= (([1-9] | "1" [0-2])) space)"));
  EXPECT_TRUE(contains(convert(R"({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10})"),
                       R"(root ::= ([1-9]) space)"));
  EXPECT_TRUE(contains(convert(R"({"type": "number", "minimum": 0, "maximum": 1})"),
                       R"(root ::= (("0") ("." [0-9]{1,16})? | "1" ("." [0]{1,16})?) space)"))
      << convert(R"({"type": "number", "minimum": 0, "maximum": 1})");
}

TEST(JsonSchemaGrammar, RefsDefsAndRecursion) {
  const std::string g = convert(R"({"$defs": {"node": {"type": "object", "properties": {
      "value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
      "required": ["value", "next"]}}, "$ref": "#/$defs/node"})");
  EXPECT_TRUE(contains(g, "root ::= node")) << g;
  EXPECT_TRUE(contains(g, "node-next ::= node | null")) << g;
  const std::string draft7 = convert(R"({"definitions": {"a b": {"type": "boolean"}},
      "properties": {"x": {"$ref": "#/definitions/a b"}}, "required": ["x"]})");
  EXPECT_TRUE(contains(draft7, "a-b ::= boolean")) << draft7;
}

TEST(JsonSchemaGrammar, AnyOfOneOfAndAllOf) {
  EXPECT_TRUE(contains(convert(R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]})"),
                       "root ::= integer | root-1"));
  EXPECT_TRUE(
      contains(convert(R"({"oneOf": [{"type": "boolean"}, {"type": "null"}]})"), "root ::= boolean | null"));
  const std::string merged =
      convert(R"({"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
      {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]})");
  EXPECT_TRUE(contains(merged, "root-a-kv \",\" space root-b-kv")) << merged;
  // Siblings of anyOf apply to every alternative.
  const std::string siblings = convert(R"({"type": "object", "properties": {"k": {"type": "string"}},
      "required": ["k"], "anyOf": [{"properties": {"x": {"type": "integer"}}, "required": ["x"]},
      {"properties": {"y": {"type": "null"}}, "required": ["y"]}]})");
  EXPECT_TRUE(contains(siblings, "root-0-k-kv")) << siblings;
  EXPECT_TRUE(contains(siblings, "root-1-y-kv")) << siblings;
}

TEST(JsonSchemaGrammar, PatternSubset) {
  const JsonSchemaLimits limits;
  auto expression = [&](const std::string& pattern) {
    auto e = json_schema::pattern_expression(pattern, limits);
    return e.ok() ? *e : "error: " + e.error().message();
  };
  EXPECT_EQ(expression("^abc$"), R"("abc")");
  EXPECT_EQ(expression("a|bc"), R"(("a" | "bc"))");
  EXPECT_EQ(expression("(?:ab)*c?"), R"(("ab")* "c"?)");
  EXPECT_EQ(expression("x{2,}y{3}"), R"("x"{2,} "y"{3})");
  EXPECT_EQ(expression("\\."), R"(".")");
  // JSON escapes: a quote in the pattern is \" in the JSON text.
  EXPECT_EQ(expression("\""), R"("\\\"")");
  EXPECT_EQ(expression("[^a]"), R"([^a"\\\x00-\x1F])");
  EXPECT_EQ(expression("."), R"([^"\\\x00-\x1F])");
  EXPECT_EQ(expression("[\\w-]"), R"([\-0-9A-Z_a-z])");
  EXPECT_TRUE(contains(expression("a(?=b)"), "lookaround")) << expression("a(?=b)");
  EXPECT_TRUE(contains(expression("(a)\\1"), "escape '\\1'"));
  EXPECT_TRUE(contains(expression("a^b"), "anchor"));
  // A large upper bound is capped; a large lower bound is refused.
  EXPECT_EQ(expression("a{0,100000}"), "\"a\"{0," + std::to_string(limits.max_repetition) + "}");
  EXPECT_TRUE(contains(expression("a{100000}"), "limit"));
}

TEST(JsonSchemaErrors, UnsupportedKeywordsNameTheirPointer) {
  EXPECT_EQ(error_of(R"({"properties": {"x": {"not": {"type": "string"}}}})"),
            "schema keyword 'not' at /properties/x is not supported");
  EXPECT_EQ(error_of(R"({"if": {}, "then": {}})"), "schema keyword 'if' at / is not supported");
  EXPECT_EQ(error_of(R"({"items": {"properties": {"a~b/c": {"patternProperties": {}}}}})"),
            "schema keyword 'patternProperties' at /items/properties/a~0b~1c is not supported");
  EXPECT_EQ(error_of(R"({"type": "array", "contains": {}})"),
            "schema keyword 'contains' at / is not supported");
  EXPECT_EQ(error_of(R"({"type": "integer", "multipleOf": 3})"),
            "schema keyword 'multipleOf' at / is not supported");
  EXPECT_TRUE(contains(error_of(R"({"type": "array", "uniqueItems": true})"), "uniqueItems"));
  EXPECT_TRUE(
      contains(error_of(R"({"properties": {"a": {}, "b": {}}, "maxProperties": 1})"), "maxProperties"));
  EXPECT_TRUE(contains(error_of(R"({"properties": {"p": {"type": "string", "pattern": "(?<=a)b"}}})"),
                       "schema pattern at /properties/p/pattern is not supported: lookbehind"));
}

TEST(JsonSchemaErrors, PatternEscapesMustBeCharacters) {
  // A lone surrogate escape is no character (no UTF-8 form); the error names its offset.
  EXPECT_EQ(error_of(R"({"type": "string", "pattern": "^ab\\uD800$"})"),
            "schema pattern at /pattern is invalid: the escape '\\uD800' is a lone UTF-16 surrogate, not a "
            "character, at offset 3");
  EXPECT_TRUE(contains(error_of(R"({"properties": {"p": {"type": "string", "pattern": "[a\\uDC00]"}}})"),
                       "schema pattern at /properties/p/pattern is invalid: the escape '\\uDC00' is a lone"));
  EXPECT_TRUE(contains(error_of(R"({"type": "string", "pattern": "\\uD83Dx"})"), "at offset 0"));
  EXPECT_TRUE(contains(error_of(R"({"type": "string", "pattern": "\\uDE00\\uD83D"})"), "'\\uDE00'"));
  // A surrogate pair is the character it encodes (as ECMA-262 reads it), in a literal and in a class.
  EXPECT_TRUE(contains(convert(R"({"type": "string", "pattern": "^\\uD83D\\uDE00+$"})"), "\"😀\"+"));
  EXPECT_TRUE(
      contains(convert(R"({"type": "string", "pattern": "^[\\uD83D\\uDE00-\\uD83D\\uDE4F]$"})"), "[😀-🙏]"));
  // JSON strings cannot carry a lone surrogate at all: const and enum never ask for one.
  EXPECT_TRUE(contains(error_of(R"({"const": "\ud800"})"), "not valid JSON"));
  EXPECT_TRUE(contains(error_of(R"({"enum": ["a", "\udc00"]})"), "not valid JSON"));
}

TEST(JsonSchemaErrors, BadSchemasAndRefs) {
  EXPECT_TRUE(contains(error_of("{\"type\": "), "not valid JSON"));
  EXPECT_TRUE(contains(error_of(R"({"type": "text"})"), "'text' at / is not a JSON Schema type"));
  EXPECT_TRUE(contains(error_of("false"), "admits no value"));
  EXPECT_TRUE(contains(error_of(R"({"$ref": "https://example.com/s.json"})"), "only local references"));
  EXPECT_TRUE(contains(error_of(R"({"$ref": "#/$defs/missing"})"), "points to nothing"));
  EXPECT_TRUE(contains(error_of(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
      "$ref": "#/$defs/a"})"),
                       "circular"));
  EXPECT_TRUE(contains(error_of(R"({"type": "integer", "minimum": 5, "maximum": 4})"), "admit no value"));
  EXPECT_TRUE(
      contains(error_of(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})"), "admits no value"));
  EXPECT_TRUE(
      contains(error_of(R"({"properties": {"a": {}}, "additionalProperties": false, "required": ["b"]})"),
               "required property 'b'"));
}

TEST(JsonSchemaErrors, LimitsBoundHostileSchemas) {
  std::string deep = R"({"type": "string"})";
  for (int i = 0; i < 100; ++i) deep = R"({"items": )" + deep + "}";
  EXPECT_TRUE(contains(error_of(deep), "deeper than"));
  // Refused by the parser's depth bound before the missing brackets are seen (core/json_parse.h).
  std::string nested_json(100000, '[');
  EXPECT_TRUE(
      contains(error_of(R"({"enum": [)" + nested_json + "]}"), "schema nests deeper than 128 levels"));
  EXPECT_TRUE(contains(error_of(R"({"type": "string", "minLength": 5000})"), "limit"));
  // A large maximum is capped: a subset of the valid values, not an error.
  EXPECT_TRUE(contains(convert(R"({"type": "string", "maxLength": 1000000000})"), "char{0,1024}"));
  std::string many = R"({"properties": {)";
  for (int i = 0; i < 300; ++i)
    many += (i ? "," : "") + ("\"p" + std::to_string(i) + "\": {\"maxLength\": " + std::to_string(i) + "}");
  many += "}}";
  JsonSchemaOptions small;
  small.limits.max_rules = 100;
  EXPECT_TRUE(contains(error_of(many, small), "rules"));
  EXPECT_FALSE(convert(many).empty());
}

TEST(JsonSchemaCorpus, EverySchemaConverts) {
  // The conformance corpus (generation and validation: tests/sample/slow/schema_conformance_test.cpp).
  size_t count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_dir() + "/tests/sample/data/schemas")) {
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    auto grammar = json_schema_text_to_grammar(text.str());
    EXPECT_TRUE(grammar.ok()) << entry.path() << ": " << grammar.error().message();
    ++count;
  }
  EXPECT_GE(count, 30u);
}

}  // namespace
}  // namespace sinter
