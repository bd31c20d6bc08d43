// Python's format mini-language: format(value, spec) and str.format(*args, **kwargs).
#pragma once

#include <string>
#include <string_view>

#include "chat/jinja/interpreter.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

// format(value, "spec"), e.g. format(3.14159, ".2f") == "3.14", format("x", ">3") == "  x".
Result<std::string> format_value(const Value& value, std::string_view spec);
// "{} {name} {0[key]}".format(...), with fields read through the sandboxed attribute access.
Result<std::string> str_format(Interpreter& interpreter, std::string_view format, const CallArgs& args);

}  // namespace sinter::chat::jinja
