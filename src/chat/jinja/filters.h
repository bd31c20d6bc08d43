// Jinja2's built-in filters and tests (and Hugging Face's tojson), looked up by name.
#pragma once

#include <span>
#include <string_view>

#include "chat/jinja/interpreter.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

using FilterFunction = Result<Value> (*)(Interpreter&, const Value& input, const CallArgs& args);
using TestFunction = Result<bool> (*)(Interpreter&, const Value& value, const CallArgs& args);

struct FilterEntry {
  std::string_view name;
  FilterFunction function;
};
struct TestEntry {
  std::string_view name;
  TestFunction function;
};

// Filters on strings and scalars (filters_text.cpp) and on sequences (filters_sequence.cpp).
std::span<const FilterEntry> text_filters();
std::span<const FilterEntry> sequence_filters();
std::span<const TestEntry> builtin_tests();

// nullptr for a name sinter does not implement (the parser has already rejected those).
FilterFunction find_filter(std::string_view name);
TestFunction find_test(std::string_view name);

}  // namespace sinter::chat::jinja
