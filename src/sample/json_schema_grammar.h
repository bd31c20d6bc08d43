// JSON schema → GBNF grammar (llama.cpp's GBNF syntax), for structured output: Ollama's `format`,
// OpenAI's `response_format`, tool-call arguments and `sinter run --json-schema`.
//
// The schema is outside input (an HTTP request body), so everything is bounded: nesting depth,
// number of rules, repetition counts and the size of the grammar text. Keywords the converter does
// not implement are an error naming the keyword and its JSON pointer, never silently dropped
// (vendor keywords that JSON Schema does not define are ignored, as validators ignore them).
// docs/SAMPLING.md, "JSON schemas", lists what is supported and the choices made.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "sinter/result.h"

namespace sinter {

struct JsonSchemaLimits {
  int max_depth = 64;         // nested schemas (and nested regex groups)
  size_t max_rules = 4096;    // rules in the grammar
  int max_repetition = 1024;  // a larger maxLength/maxItems/{m,n} upper bound is capped to it
  size_t max_grammar_bytes = size_t{1} << 20;
  size_t max_schema_bytes = size_t{1} << 20;  // the JSON text given to the string overload
};

// Between tokens, llama.cpp's whitespace: nothing, one space, or one or two newlines followed by
// up to 20 spaces or tabs. Compact allows at most one space.
enum class JsonWhitespace { kFlexible, kCompact };

struct JsonSchemaOptions {
  JsonSchemaLimits limits;
  JsonWhitespace whitespace = JsonWhitespace::kFlexible;
};

// The grammar (rule `root` first) whose sentences are JSON texts valid under `schema`.
// Properties come in the order of the schema's `properties` object: ordered_json keeps the order
// of the text it was parsed from (a nlohmann::json converted to it would be sorted by name).
// Errors: kInvalidArgument for a malformed schema or one that admits no value, kUnsupported for
// a keyword or feature the converter does not implement or a limit exceeded; the message names
// the JSON pointer ("schema keyword 'not' at /properties/x is not supported").
Result<std::string> json_schema_to_grammar(const nlohmann::ordered_json& schema,
                                           const JsonSchemaOptions& options = {});
// The same from the schema's JSON text (a parse error is kInvalidArgument with its byte offset).
Result<std::string> json_schema_text_to_grammar(std::string_view schema_json,
                                                const JsonSchemaOptions& options = {});

// Any JSON object (Ollama's `format: "json"`, OpenAI's `response_format: json_object`).
std::string json_object_grammar(JsonWhitespace whitespace = JsonWhitespace::kFlexible);
// Any JSON value (the empty schema).
std::string json_value_grammar(JsonWhitespace whitespace = JsonWhitespace::kFlexible);

}  // namespace sinter
