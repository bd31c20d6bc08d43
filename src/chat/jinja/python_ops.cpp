#include "chat/jinja/python_ops.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "chat/jinja/budget.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/objects.h"
#include "chat/jinja/py_string.h"

namespace sinter::chat::jinja {
namespace {

// Containers nested deeper than this print as "..." (a guard for the C++ stack).
constexpr int kMaxReprDepth = 200;
// What iterating a string costs per character: a Value and a string of its own.
constexpr size_t kBytesPerCharacterValue = 64;

// The containers whose repr is being built, as CPython's Py_ReprEnter tracks them: a container
// met again inside itself prints as [...] or {...} (a namespace can hold itself).
thread_local std::vector<const void*> repr_in_progress;
thread_local int repr_depth = 0;  // across namespace boundaries too

class ReprGuard {
 public:
  explicit ReprGuard(const void* container) {
    for (const void* p : repr_in_progress) recursive_ = recursive_ || p == container;
    if (!recursive_) repr_in_progress.push_back(container);
  }
  ~ReprGuard() {
    if (!recursive_) repr_in_progress.pop_back();
  }
  bool recursive() const { return recursive_; }

 private:
  bool recursive_ = false;
};

void append_repr(std::string* out, const Value& value, int depth);

void refuse_text(size_t cap) {
  refuse_in_render(limit_error(concat("a value's text would pass ", cap, " bytes")));
}

void append_sequence(std::string* out, const Value& value, int depth) {
  const List& list = *value.list_ptr();
  switch (list.flavor) {
    case ListFlavor::kGenerator: *out += "<generator object>"; return;
    case ListFlavor::kRange:
      *out += concat("range(", list.range_start, ", ", list.range_stop);
      *out += list.range_step == 1 ? std::string(")") : concat(", ", list.range_step, ")");
      return;
    case ListFlavor::kDictItems:
    case ListFlavor::kDictKeys:
    case ListFlavor::kDictValues: {
      *out += list.flavor == ListFlavor::kDictItems  ? "dict_items("
              : list.flavor == ListFlavor::kDictKeys ? "dict_keys("
                                                     : "dict_values(";
      Value plain = Value::list(list.items);
      append_sequence(out, plain, depth);
      *out += ')';
      return;
    }
    default: break;
  }
  bool tuple = value.is_tuple();
  ReprGuard guard(value.list_ptr().get());
  if (guard.recursive()) {
    *out += tuple ? "(...)" : "[...]";
    return;
  }
  *out += tuple ? '(' : '[';
  const auto& items = value.items();
  const size_t cap = value_size_cap();
  for (size_t i = 0; i < items.size(); ++i) {
    // Past the render's size cap, stop building (a list holding one long string a million times
    // would fill memory first) and fail the render.
    if (out->size() > cap) return refuse_text(cap);
    if (i) *out += ", ";
    append_repr(out, items[i], depth + 1);
  }
  if (tuple && items.size() == 1) *out += ',';
  *out += tuple ? ')' : ']';
}

void append_repr(std::string* out, const Value& value, int depth) {
  struct DepthCount {
    DepthCount() { ++repr_depth; }
    ~DepthCount() { --repr_depth; }
  } count;
  if (depth > kMaxReprDepth || repr_depth > kMaxReprDepth) {
    *out += "...";
    return;
  }
  switch (value.kind()) {
    case Value::Kind::kUndefined: *out += "Undefined"; return;
    case Value::Kind::kNone: *out += "None"; return;
    case Value::Kind::kBool: *out += value.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: *out += std::to_string(value.as_int()); return;
    case Value::Kind::kFloat: *out += format_float(value.as_float()); return;
    case Value::Kind::kString: *out += py::repr(value.as_string()); return;
    case Value::Kind::kList: append_sequence(out, value, depth); return;
    case Value::Kind::kDict: {
      ReprGuard guard(value.dict_ptr().get());
      if (guard.recursive()) {
        *out += "{...}";
        return;
      }
      *out += '{';
      bool first = true;
      const size_t cap = value_size_cap();
      for (const auto& [k, v] : value.as_dict().entries()) {
        if (out->size() > cap) return refuse_text(cap);  // as for lists
        if (!first) *out += ", ";
        first = false;
        append_repr(out, k, depth + 1);
        *out += ": ";
        append_repr(out, v, depth + 1);
      }
      *out += '}';
      return;
    }
    case Value::Kind::kCallable: *out += "<function " + value.as_callable().name() + ">"; return;
    case Value::Kind::kObject: *out += value.as_object().repr(); return;
  }
}

bool numbers_equal(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
  return a.as_float() == b.as_float();
}

}  // namespace

bool truthy(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return value.as_bool();
    case Value::Kind::kInt: return value.as_int() != 0;
    case Value::Kind::kFloat: return value.as_float() != 0.0;
    case Value::Kind::kString: return !value.as_string().empty();
    case Value::Kind::kList: return value.is_generator() || !value.items().empty();
    case Value::Kind::kDict: return !value.as_dict().empty();
    case Value::Kind::kCallable:
    case Value::Kind::kObject: return true;
  }
  return false;
}

std::string format_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
  std::string sign;
  if (!text.empty() && text[0] == '-') {
    sign = "-";
    text.remove_prefix(1);
  }
  size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  int point = exponent + 1;  // digits[0:point] is the integer part
  int count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    if (point >= count) return sign + digits + std::string(static_cast<size_t>(point - count), '0') + ".0";
    return sign + digits.substr(0, point) + "." + digits.substr(point);
  }
  std::string out = sign + digits.substr(0, 1);
  if (count > 1) out += "." + digits.substr(1);
  int shown = point - 1;
  out += shown < 0 ? "e-" : "e+";
  std::string exponent_digits = std::to_string(std::abs(shown));
  if (exponent_digits.size() < 2) exponent_digits = "0" + exponent_digits;
  return out + exponent_digits;
}

std::string repr(const Value& value) {
  std::string out;
  append_repr(&out, value, 0);
  return out;
}

std::string to_str(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "";
    case Value::Kind::kString: return value.as_string();
    default: return repr(value);
  }
}

std::string type_name(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "str";
    case Value::Kind::kList:
      switch (value.flavor()) {
        case ListFlavor::kList: return "list";
        case ListFlavor::kTuple: return "tuple";
        case ListFlavor::kDictItems: return "dict_items";
        case ListFlavor::kDictKeys: return "dict_keys";
        case ListFlavor::kDictValues: return "dict_values";
        case ListFlavor::kRange: return "range";
        case ListFlavor::kGenerator: return "generator";
      }
      return "list";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kCallable:
      return value.as_callable().is_macro() ? "Macro" : "builtin_function_or_method";
    case Value::Kind::kObject: return value.as_object().type_name();
  }
  return "object";
}

std::string object_type_repr(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNone: return "None";
    case Value::Kind::kUndefined: return "jinja2.runtime.Undefined object";
    case Value::Kind::kCallable:
      return value.as_callable().is_macro() ? "jinja2.runtime.Macro object"
                                            : "builtin_function_or_method object";
    case Value::Kind::kObject: {
      std::string name = value.as_object().type_name();
      if (name == "Namespace") return "jinja2.utils.Namespace object";
      if (name == "LoopContext") return "jinja2.runtime.LoopContext object";
      return "jinja2.utils." + name + " object";
    }
    default: return type_name(value) + " object";
  }
}

Error undefined_failure(const Value& undefined) {
  std::string reason = undefined.undefined_reason();
  return undefined.undefined_is_unsafe() ? security_error(reason) : undefined_error(reason);
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: {
      const std::string& x = a.as_string();
      const std::string& y = b.as_string();
      if (&x == &y) return true;
      if (x.size() != y.size()) return false;
      // A failure stays in the budget: the interpreter's next step reports it.
      (void)charge_scanned_bytes(x.size());
      return x == y;
    }
    case Value::Kind::kList: {
      if (a.flavor() != b.flavor()) return false;
      if (a.list_ptr() == b.list_ptr()) return true;
      if (a.is_generator()) return false;
      const auto& x = a.items();
      const auto& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      if (a.dict_ptr() == b.dict_ptr()) return true;
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x.entries()) {
        const Value* other = y.find(k);
        if (!other || !equals(v, *other)) return false;
      }
      return true;
    }
    default: return a.same_object(b);
  }
}

size_t hash_value(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kBool:
    case Value::Kind::kInt:
    case Value::Kind::kFloat: {
      // Numbers compare by value across kinds: hash the double (0.0 and -0.0 alike). Integers
      // that differ only beyond a double's precision collide, which equals() then sorts out.
      double number = value.as_float();
      return number == 0 ? 0 : std::hash<double>()(number);
    }
    case Value::Kind::kString: return std::hash<std::string_view>()(value.as_string());
    case Value::Kind::kList: {
      if (value.is_generator()) return 7;
      size_t hash = 0x345678 + static_cast<size_t>(value.flavor());
      for (const auto& item : value.items()) hash = hash * 1000003 ^ hash_value(item);
      return hash;
    }
    case Value::Kind::kNone: return 1;
    case Value::Kind::kUndefined: return 2;
    default: return 3;  // dicts, callables and objects: rarely keys, and then compared one by one
  }
}

Result<int> compare_values(const Value& a, const Value& b) {
  if (a.is_undefined()) return undefined_failure(a);
  if (b.is_undefined()) return undefined_failure(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral())
      return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    double x = a.as_float();
    double y = b.as_float();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    SINTER_TRY(charge_scanned_bytes(std::min(a.as_string().size(), b.as_string().size())));
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_sequence() && b.is_sequence() && a.flavor() == b.flavor() && (a.is_list() || a.is_tuple())) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return compare_values(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  return type_error(
      concat("'<' not supported between instances of '", type_name(a), "' and '", type_name(b), "'"));
}

Result<bool> ordered(const Value& a, const Value& b, Ordering ordering) {
  static constexpr const char* kSymbols[] = {"<", "<=", ">", ">="};
  auto decide = [ordering](auto x, auto y) {
    switch (ordering) {
      case Ordering::kLess: return x < y;
      case Ordering::kLessEqual: return x <= y;
      case Ordering::kGreater: return x > y;
      case Ordering::kGreaterEqual: return x >= y;
    }
    return false;
  };
  if (a.is_undefined()) return undefined_failure(a);
  if (b.is_undefined()) return undefined_failure(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return decide(a.as_int(), b.as_int());
    return decide(a.as_float(), b.as_float());
  }
  if (a.is_string() && b.is_string()) return decide(a.as_string().compare(b.as_string()), 0);
  if (a.is_sequence() && b.is_sequence() && a.flavor() == b.flavor() && (a.is_list() || a.is_tuple())) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return ordered(x[i], y[i], ordering);
    }
    return decide(x.size(), y.size());
  }
  return type_error(concat("'", kSymbols[static_cast<int>(ordering)],
                           "' not supported between instances of '", type_name(a), "' and '", type_name(b),
                           "'"));
}

Status check_nesting(const Value& value, int limit, const void* container) {
  if (limit < 0) return limit_error("a value is nested too deeply");
  switch (value.kind()) {
    case Value::Kind::kList:
      if (value.list_ptr().get() == container)
        return value_error("a list cannot contain itself (reference cycle)");
      for (const auto& item : value.items()) SINTER_TRY(check_nesting(item, limit - 1, container));
      return ok_status();
    case Value::Kind::kDict:
      if (value.dict_ptr().get() == container)
        return value_error("a dict cannot contain itself (reference cycle)");
      for (const auto& [key, item] : value.as_dict().entries())
        SINTER_TRY(check_nesting(item, limit - 1, container));
      return ok_status();
    case Value::Kind::kObject:
      if (value.as_object().is_namespace()) {
        const auto& ns = static_cast<const Namespace&>(value.as_object());
        for (const auto& [key, item] : ns.attributes().entries()) {
          SINTER_TRY(check_nesting(item, limit - 1, container));
        }
      }
      return ok_status();
    default: return ok_status();
  }
}

bool is_hashable(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kList:
      if (value.flavor() == ListFlavor::kRange) return true;
      if (!value.is_tuple()) return false;
      for (const auto& item : value.items()) {
        if (!is_hashable(item)) return false;
      }
      return true;
    case Value::Kind::kDict: return false;
    default: return true;
  }
}

Status require_hashable(const Value& value) {
  if (is_hashable(value)) return ok_status();
  if (value.is_tuple()) {
    for (const auto& item : value.items()) SINTER_TRY(require_hashable(item));
  }
  return type_error(concat("unhashable type: '", type_name(value), "'"));
}

Result<int64_t> length(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return int64_t{0};
    case Value::Kind::kString: return static_cast<int64_t>(py::length(value.as_string()));
    case Value::Kind::kList:
      if (value.is_generator()) break;
      return static_cast<int64_t>(value.items().size());
    case Value::Kind::kDict: return static_cast<int64_t>(value.as_dict().size());
    case Value::Kind::kObject: {
      Value n = value.as_object().attribute("length");
      if (n.is_int() && value.as_object().type_name() == "LoopContext") return n.as_int();
      break;
    }
    default: break;
  }
  return type_error(concat("object of type '", type_name(value), "' has no len()"));
}

Result<std::vector<Value>> iterate(const Value& value) {
  std::vector<Value> out;
  switch (value.kind()) {
    case Value::Kind::kUndefined: return out;
    case Value::Kind::kString: {
      const std::string& s = value.as_string();
      // Each character becomes a string value of its own (tens of bytes).
      if (s.size() > value_size_cap() / kBytesPerCharacterValue) {
        return limit_error(
            concat("iterating a string of ", s.size(), " bytes would pass ", value_size_cap(), " bytes"));
      }
      SINTER_TRY(charge_steps(s.size()));
      out.reserve(s.size());
      size_t pos = 0;
      while (pos < s.size()) {
        size_t start = pos;
        ++pos;
        while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
        out.emplace_back(s.substr(start, pos - start));
      }
      return out;
    }
    case Value::Kind::kList:
      SINTER_TRY(charge_steps(value.items().size()));
      if (value.is_generator()) {
        out = std::move(value.list_ptr()->items);  // a generator is exhausted by iterating it
        value.list_ptr()->items.clear();
        return out;
      }
      return value.items();
    case Value::Kind::kDict:
      SINTER_TRY(charge_steps(value.as_dict().size()));
      out.reserve(value.as_dict().size());
      for (const auto& entry : value.as_dict().entries()) out.push_back(entry.first);
      return out;
    default: return type_error(concat("'", type_name(value), "' object is not iterable"));
  }
}

Result<bool> contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        return type_error(concat("'in <string>' requires string as left operand, not ", type_name(item)));
      }
      SINTER_TRY(charge_scanned_bytes(container.as_string().size()));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      SINTER_TRY(charge_steps(container.items().size()));
      for (const auto& element : container.items()) {
        if (equals(element, item)) return true;
      }
      return false;
    case Value::Kind::kDict:
      SINTER_TRY(require_hashable(item));
      return container.as_dict().find(item) != nullptr;
    default: return type_error(concat("argument of type '", type_name(container), "' is not iterable"));
  }
}

}  // namespace sinter::chat::jinja
