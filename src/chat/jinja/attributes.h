// Jinja2's attribute and item access under the immutable sandbox Hugging Face uses:
//   x.name  - a Python attribute or method of x if it has one, else the item x['name'];
//   x[key]  - the item, else (for a string key) the attribute;
// whatever is missing is an Undefined that remembers why. Names starting with an underscore and
// methods that modify a list or dict are forbidden: using them is a SecurityError.
#pragma once

#include <string_view>

#include "chat/jinja/interpreter.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

Result<Value> get_attribute(Interpreter& interpreter, const Value& object, std::string_view name);
Result<Value> get_item(Interpreter& interpreter, const Value& object, const Value& key);
// The attribute alone, without falling back to items (the `attr` filter).
Result<Value> get_python_attribute(Interpreter& interpreter, const Value& object, std::string_view name);

}  // namespace sinter::chat::jinja
