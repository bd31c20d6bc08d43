#include "chat/jinja/attributes.h"

#include <optional>

#include "chat/jinja/methods.h"
#include "chat/jinja/objects.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

Value unsafe(const Value& object, std::string_view name) {
  return Value::undefined(
      "access to attribute " + py::repr(name) + " of " + py::repr(type_name(object)) + " object is unsafe.",
      /*unsafe=*/true);
}

// Python's getattr(object, name) as the sandbox sees it, or nullopt when there is no attribute.
std::optional<Value> python_attribute(const Value& object, std::string_view name) {
  if (name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__") {
    return unsafe(object, name);  // __class__, __init__ ...: every object has them
  }
  if (object.is_object()) {
    Value attribute = object.as_object().attribute(name);
    if (!attribute.is_undefined()) return attribute;
    return std::nullopt;
  }
  switch (method_kind(object, name)) {
    case MethodKind::kNone: return std::nullopt;
    case MethodKind::kMutating: return unsafe(object, name);
    case MethodKind::kSafe: break;
  }
  std::string method(name);
  Value self = object;
  return make_function(method, [self, method](Interpreter& interpreter, CallArgs args) {
    return call_method(interpreter, self, method, args);
  });
}

// Methods that modify are not unsafe when the caller allowed mutation.
std::optional<Value> attribute_for(Interpreter& interpreter, const Value& object, std::string_view name) {
  if (interpreter.options().allow_mutation && method_kind(object, name) == MethodKind::kMutating) {
    std::string method(name);
    Value self = object;
    return make_function(method, [self, method](Interpreter& in, CallArgs args) {
      return call_method(in, self, method, args);
    });
  }
  return python_attribute(object, name);
}

Value missing(const Value& object, const Value& key) {
  if (key.is_string()) {
    return Value::undefined(
        concat(py::repr(object_type_repr(object)), " has no attribute ", py::repr(key.as_string())));
  }
  return Value::undefined(concat(object_type_repr(object), " has no element ", repr(key)));
}

std::optional<Value> index_sequence(const std::vector<Value>& items, int64_t index) {
  auto size = static_cast<int64_t>(items.size());
  if (index < 0) index += size;
  if (index < 0 || index >= size) return std::nullopt;
  return items[static_cast<size_t>(index)];
}

}  // namespace

Result<Value> get_attribute(Interpreter& interpreter, const Value& object, std::string_view name) {
  if (object.is_undefined()) return undefined_failure(object);
  if (auto attribute = attribute_for(interpreter, object, name)) return *attribute;
  if (object.is_dict()) {
    if (const Value* value = object.as_dict().find(name)) return *value;
  }
  return missing(object, Value(name));
}

Result<Value> get_python_attribute(Interpreter& interpreter, const Value& object, std::string_view name) {
  if (object.is_undefined()) return undefined_failure(object);
  if (auto attribute = attribute_for(interpreter, object, name)) return *attribute;
  return missing(object, Value(name));
}

Result<Value> get_item(Interpreter& interpreter, const Value& object, const Value& key) {
  if (object.is_undefined()) return undefined_failure(object);
  switch (object.kind()) {
    case Value::Kind::kDict:
      if (is_hashable(key)) {
        if (const Value* value = object.as_dict().find(key)) return *value;
      }
      break;
    case Value::Kind::kString:
      if (key.is_integral()) {
        std::u32string text = py::decode(object.as_string());
        int64_t index = key.as_int();
        auto size = static_cast<int64_t>(text.size());
        if (index < 0) index += size;
        if (index >= 0 && index < size)
          return Value(py::encode(std::u32string(1, text[static_cast<size_t>(index)])));
      }
      break;
    case Value::Kind::kList:
      if (key.is_integral() &&
          (object.is_list() || object.is_tuple() || object.flavor() == ListFlavor::kRange)) {
        if (auto item = index_sequence(object.items(), key.as_int())) return *item;
      }
      break;
    default: break;
  }
  if (key.is_string()) {
    if (auto attribute = attribute_for(interpreter, object, key.as_string())) return *attribute;
  }
  return missing(object, key);
}

}  // namespace sinter::chat::jinja
