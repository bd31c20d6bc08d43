// The functions a template can call: Go's builtins (and, or, not, len, index, slice, eq, ne, lt,
// le, gt, ge, print, printf, println, html, js, urlquery, call) and the ones Ollama adds to its
// FuncMap (json, currentDate, yesterdayDate, toTypeScriptType).
//
// Each function has Go's signature, because the executor converts arguments by parameter type as
// Go's reflection does: a reflect.Value parameter takes anything, an `any` parameter takes a value
// as it is, a string parameter only a string.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chat/gotemplate/value.h"

namespace sinter::chat::gotemplate {

enum class ParamType : uint8_t { kValue, kAny, kString };

struct CallContext {
  std::chrono::system_clock::time_point now;
};

struct Function {
  std::vector<ParamType> params;  // for a variadic function the last is the element type
  bool variadic = false;
  // Returns the result; on failure sets *error (the executor reports "error calling NAME: ...").
  std::function<Value(const std::vector<Value>& args, const CallContext& context, std::string* error)> call;
};

using FunctionTable = std::unordered_map<std::string, Function>;

const FunctionTable& builtin_functions();
const FunctionTable& ollama_functions();

// api.ToolProperty.ToTypeScriptType for a value of the ToolProperty type (see ollama_data.h).
std::string to_typescript_type(const Value& tool_property);

}  // namespace sinter::chat::gotemplate
