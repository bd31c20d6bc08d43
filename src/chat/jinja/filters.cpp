#include "chat/jinja/filters.h"

#include <algorithm>

#include "chat/jinja/builtins.h"
#include "chat/jinja/errors.h"

namespace sinter::chat::jinja {
namespace {

// Built into Jinja2 but not implemented by sinter: templates using them fail to parse with a
// message that says so, rather than rendering differently.
constexpr std::string_view kUnsupportedFilters[] = {"filesizeformat", "groupby",  "random", "urlencode",
                                                    "urlize",         "wordwrap", "xmlattr"};

}  // namespace

FilterFunction find_filter(std::string_view name) {
  for (auto table : {text_filters(), sequence_filters()}) {
    for (const auto& entry : table) {
      if (entry.name == name) return entry.function;
    }
  }
  return nullptr;
}

TestFunction find_test(std::string_view name) {
  for (const auto& entry : builtin_tests()) {
    if (entry.name == name) return entry.function;
  }
  return nullptr;
}

BuiltinStatus filter_status(std::string_view name) {
  if (find_filter(name)) return BuiltinStatus::kSupported;
  if (std::find(std::begin(kUnsupportedFilters), std::end(kUnsupportedFilters), name) !=
      std::end(kUnsupportedFilters)) {
    return BuiltinStatus::kUnsupported;
  }
  return BuiltinStatus::kUnknown;
}

BuiltinStatus test_status(std::string_view name) {
  return find_test(name) ? BuiltinStatus::kSupported : BuiltinStatus::kUnknown;
}

Result<Value> Interpreter::apply_filter(std::string_view name, const Value& input, CallArgs args) {
  FilterFunction function = find_filter(name);
  if (!function)
    return Error(ErrorCode::kInvalidArgument,
                 concat("TemplateRuntimeError: No filter named '", name, "' found."));
  return function(*this, input, args);
}

Result<bool> Interpreter::apply_test(std::string_view name, const Value& value, CallArgs args) {
  TestFunction function = find_test(name);
  if (!function)
    return Error(ErrorCode::kInvalidArgument,
                 concat("TemplateRuntimeError: No test named '", name, "' found."));
  return function(*this, value, args);
}

}  // namespace sinter::chat::jinja
