// The fixed JSON rules every conversion draws on: whitespace, strings, numbers, the literals, any
// value/object/array, and the string formats (date, time, date-time, uuid).
#pragma once

#include <span>
#include <string_view>

#include "sample/json_schema_grammar.h"

namespace sinter::json_schema {

struct PrimitiveRule {
  std::string_view name;
  std::string_view body;
  std::span<const std::string_view> uses;  // the primitives the body refers to
};

// The primitive called `name`, or nullptr. `space` depends on the whitespace choice.
const PrimitiveRule* find_primitive(std::string_view name, JsonWhitespace whitespace);

}  // namespace sinter::json_schema
