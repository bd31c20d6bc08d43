// JSON schema `pattern` (an ECMA-262 regex; validators such as Python's jsonschema use their own
// engine's semantics) → a GBNF expression for the string's JSON-encoded characters, between its
// quotes. The subset llama.cpp converts: literals, escapes, `.`, classes with ranges and negation,
// \d \w \s and their negations, groups (capturing or not), alternation, ? * + {m} {m,} {m,n}
// (lazy forms read as greedy), and anchors ^ $ only at the ends.
//
// The expression generates only strings the regex matches in full, so they also match it in the
// search sense JSON Schema uses (an unanchored pattern is read as if anchored). Where the exact
// set would need characters that JSON must escape or Unicode tables, it generates a subset:
// `.` and negated classes exclude `"`, `\` and control characters; \d \w \s and their negations
// are their ASCII members (Python's are Unicode-aware).
#pragma once

#include <string>
#include <string_view>

#include "sample/json_schema_grammar.h"
#include "sinter/result.h"

namespace sinter::json_schema {

// Errors name the construct and its offset in the pattern (in characters): kUnsupported for what
// the subset lacks, kInvalidArgument for what is no regex of characters (a lone surrogate escape).
Result<std::string> pattern_expression(std::string_view pattern, const JsonSchemaLimits& limits);

// `code_point` as it appears in a JSON string (escaped where JSON requires), as a GBNF literal.
std::string json_char_literal(uint32_t code_point);

}  // namespace sinter::json_schema
