// The names of Jinja2's built-in filters and tests, and whether sinter implements each: the
// parser rejects unknown names at compile time, as Jinja2 does.
#pragma once

#include <string_view>

namespace sinter::chat::jinja {

enum class BuiltinStatus { kSupported, kUnsupported, kUnknown };

BuiltinStatus filter_status(std::string_view name);
BuiltinStatus test_status(std::string_view name);

}  // namespace sinter::chat::jinja
