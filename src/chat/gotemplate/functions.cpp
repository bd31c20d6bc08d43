// Go's text/template funcs.go and Ollama's template FuncMap, on the value model of value.h.
#include "chat/gotemplate/functions.h"

#include <ctime>

#include "chat/gotemplate/fmt.h"
#include "chat/gotemplate/json.h"
#include "core/utf8.h"
#include "sinter/result.h"

namespace sinter::chat::gotemplate {
namespace {

using Args = std::vector<Value>;

bool int_like(const Value& v) { return v.kind() == Kind::kInt || v.kind() == Kind::kUint8; }

// indexArg: an index into something of length `cap`.
bool index_arg(const Value& index, size_t cap, size_t* out, std::string* error) {
  int64_t x = 0;
  if (int_like(index)) {
    x = index.as_int();
  } else if (!index.valid()) {
    *error = "cannot index slice/array with nil";
    return false;
  } else {
    *error = "cannot index slice/array with type " + index.type()->name;
    return false;
  }
  if (x < 0 || static_cast<uint64_t>(x) > cap) {
    *error = concat("index out of range: ", x);
    return false;
  }
  *out = static_cast<size_t>(x);
  return true;
}

Value fn_index(const Args& args, const CallContext&, std::string* error) {
  Value item = indirect_interface(args[0]);
  if (!item.valid()) {
    *error = "index of untyped nil";
    return {};
  }
  for (size_t k = 1; k < args.size(); ++k) {
    Value index = indirect_interface(args[k]);
    bool nil = false;
    item = indirect(item, &nil);
    if (nil) {
      *error = "index of nil pointer";
      return {};
    }
    switch (item.kind()) {
      case Kind::kSlice:
      case Kind::kString: {
        size_t x = 0;
        if (!index_arg(index, item.len(), &x, error)) return {};
        if (x >= item.len()) {  // reflect panics, which safeCall reports
          *error = item.kind() == Kind::kString ? "reflect: string index out of range"
                                                : "reflect: slice index out of range";
          return {};
        }
        if (item.kind() == Kind::kString) {
          item =
              Value::of_type(&basic_types().byte_t, int64_t{static_cast<unsigned char>(item.as_string()[x])});
        } else {
          item = item.index(x);
        }
        break;
      }
      case Kind::kMap: {
        if (!index.valid()) {
          *error = "value is nil; should be of type string";
          return {};
        }
        if (index.type() != &basic_types().string_t) {
          *error = "value has type " + index.type()->name + "; should be string";
          return {};
        }
        const Value* found = item.find(index.as_string());
        item = found ? *found : Value::zero(item.type()->elem);
        break;
      }
      default: *error = "can't index item of type " + item.type()->name; return {};
    }
  }
  return item;
}

Value fn_slice(const Args& args, const CallContext&, std::string* error) {
  Value item = indirect_interface(args[0]);
  if (!item.valid()) {
    *error = "slice of untyped nil";
    return {};
  }
  size_t n = args.size() - 1;
  if (n > 3) {
    *error = concat("too many slice indexes: ", n);
    return {};
  }
  if (item.kind() == Kind::kString) {
    if (n == 3) {
      *error = "cannot 3-index slice a string";
      return {};
    }
  } else if (item.kind() != Kind::kSlice) {
    *error = "can't slice item of type " + item.type()->name;
    return {};
  }
  size_t cap = item.len();
  size_t idx[3] = {0, item.len(), 0};
  for (size_t i = 0; i < n; ++i) {
    if (!index_arg(args[i + 1], cap, &idx[i], error)) return {};
  }
  if (idx[0] > idx[1]) {
    *error = concat("invalid slice index: ", idx[0], " > ", idx[1]);
    return {};
  }
  if (n == 3 && idx[1] > idx[2]) {
    *error = concat("invalid slice index: ", idx[1], " > ", idx[2]);
    return {};
  }
  if (item.kind() == Kind::kString) {
    return Value::of_type(item.type(), item.as_string().substr(idx[0], idx[1] - idx[0]));
  }
  if (item.type()->is_bytes()) {
    return Value::of_type(item.type(), item.as_string().substr(idx[0], idx[1] - idx[0]));
  }
  std::vector<Value> items;
  for (size_t i = idx[0]; i < idx[1]; ++i) items.push_back(item.index(i));
  return Value::slice(item.type(), std::move(items));
}

Value fn_len(const Args& args, const CallContext&, std::string* error) {
  bool nil = false;
  Value item = indirect(args[0], &nil);
  if (nil) {
    *error = "len of nil pointer";
    return {};
  }
  switch (item.kind()) {
    case Kind::kSlice:
    case Kind::kMap:
    case Kind::kString: return Value::integer(static_cast<int64_t>(item.len()));
    case Kind::kInvalid: *error = "reflect: call of reflect.Value.Type on zero Value"; return {};
    default: *error = "len of type " + item.type()->name; return {};
  }
}

Value fn_not(const Args& args, const CallContext&, std::string*) {
  bool ok = false;
  return Value::boolean(!is_true(indirect_interface(args[0]), &ok));
}

enum class BasicKind { kInvalid, kBool, kInt, kUint, kFloat, kString };

BasicKind basic_kind(const Value& v) {
  switch (v.kind()) {
    case Kind::kBool: return BasicKind::kBool;
    case Kind::kInt: return BasicKind::kInt;
    case Kind::kUint8: return BasicKind::kUint;
    case Kind::kFloat: return BasicKind::kFloat;
    case Kind::kString: return BasicKind::kString;
    default: return BasicKind::kInvalid;
  }
}

bool comparable_type(const Type* t) {
  switch (t->kind) {
    case Kind::kSlice:
    case Kind::kMap: return false;
    case Kind::kStruct:
      for (const Field& f : t->fields) {
        if (!comparable_type(f.type)) return false;
      }
      return true;
    default: return true;
  }
}

bool is_nil_value(const Value& v) { return !v.valid() || v.is_nil(); }

// eq: arg1 == arg2 || arg1 == arg3 ...
Value fn_eq(const Args& args, const CallContext&, std::string* error) {
  Value a = indirect_interface(args[0]);
  if (args.size() < 2) {
    *error = "missing argument for comparison";
    return {};
  }
  BasicKind k1 = basic_kind(a);
  for (size_t i = 1; i < args.size(); ++i) {
    Value b = indirect_interface(args[i]);
    BasicKind k2 = basic_kind(b);
    bool truth = false;
    if (k1 != k2) {
      if (k1 == BasicKind::kInt && k2 == BasicKind::kUint) {
        truth = a.as_int() >= 0 && a.as_int() == b.as_int();
      } else if (k1 == BasicKind::kUint && k2 == BasicKind::kInt) {
        truth = b.as_int() >= 0 && a.as_int() == b.as_int();
      } else if (a.valid() && b.valid()) {
        *error = "incompatible types for comparison";
        return {};
      }
    } else {
      switch (k1) {
        case BasicKind::kBool: truth = a.as_bool() == b.as_bool(); break;
        case BasicKind::kFloat: truth = a.as_float() == b.as_float(); break;
        case BasicKind::kInt:
        case BasicKind::kUint: truth = a.as_int() == b.as_int(); break;
        case BasicKind::kString: truth = a.as_string() == b.as_string(); break;
        case BasicKind::kInvalid:
          if (a.kind() != b.kind() && a.valid() && b.valid()) {
            *error = "non-comparable types " + go_sprintf("%s", {a}) + ": " + a.type()->name + ", " +
                     b.type()->name + ": " + go_sprintf("%v", {b});
            return {};
          }
          if (is_nil_value(a) || is_nil_value(b)) {
            truth = is_nil_value(a) == is_nil_value(b);
          } else if (!comparable_type(b.type())) {
            *error = "non-comparable type " + go_sprintf("%s", {b}) + ": " + b.type()->name;
            return {};
          } else {
            truth = a.type() == b.type() && a.same_payload(b);
          }
          break;
      }
    }
    if (truth) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Value fn_ne(const Args& args, const CallContext& context, std::string* error) {
  Value equal = fn_eq(args, context, error);
  if (!error->empty()) return {};
  return Value::boolean(!equal.as_bool());
}

// lt; *error set for incomparable values.
bool less_than(const Value& a_in, const Value& b_in, std::string* error) {
  Value a = indirect_interface(a_in), b = indirect_interface(b_in);
  BasicKind k1 = basic_kind(a), k2 = basic_kind(b);
  if (k1 == BasicKind::kInvalid || k2 == BasicKind::kInvalid) {
    *error = "invalid type for comparison";
    return false;
  }
  if (k1 != k2) {
    if (k1 == BasicKind::kInt && k2 == BasicKind::kUint) return a.as_int() < b.as_int();
    if (k1 == BasicKind::kUint && k2 == BasicKind::kInt) return b.as_int() >= 0 && a.as_int() < b.as_int();
    *error = "incompatible types for comparison";
    return false;
  }
  switch (k1) {
    case BasicKind::kBool: *error = "invalid type for comparison"; return false;
    case BasicKind::kFloat: return a.as_float() < b.as_float();
    case BasicKind::kInt:
    case BasicKind::kUint: return a.as_int() < b.as_int();
    case BasicKind::kString: return a.as_string() < b.as_string();
    case BasicKind::kInvalid: break;
  }
  return false;
}

Value fn_lt(const Args& args, const CallContext&, std::string* error) {
  bool r = less_than(args[0], args[1], error);
  return error->empty() ? Value::boolean(r) : Value();
}

Value fn_le(const Args& args, const CallContext& context, std::string* error) {
  bool r = less_than(args[0], args[1], error);
  if (!error->empty()) return {};
  if (r) return Value::boolean(true);
  return fn_eq(args, context, error);
}

Value fn_gt(const Args& args, const CallContext& context, std::string* error) {
  Value le = fn_le(args, context, error);
  if (!error->empty()) return {};
  return Value::boolean(!le.as_bool());
}

Value fn_ge(const Args& args, const CallContext&, std::string* error) {
  bool r = less_than(args[0], args[1], error);
  return error->empty() ? Value::boolean(!r) : Value();
}

// evalArgs of funcs.go: one string is used as it is, anything else is printed.
std::string eval_args(const Args& args) {
  if (args.size() == 1) {
    Value a = as_any(args[0]);
    if (a.type() == &basic_types().string_t) return a.as_string();
  }
  std::vector<Value> printable;
  for (const Value& arg : args) {
    Value a = as_any(arg);
    if (a.kind() == Kind::kPointer) {
      bool nil = false;
      Value target = indirect(a, &nil);
      if (!nil) a = target;
    }
    printable.push_back(a.valid() ? a : Value::string("<no value>"));
  }
  return go_sprint(printable);
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\0': out += "\xEF\xBF\xBD"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string js_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\\': out += "\\\\"; break;
        case '\'': out += "\\'"; break;
        case '"': out += "\\\""; break;
        case '<': out += "\\u003C"; break;
        case '>': out += "\\u003E"; break;
        case '&': out += "\\u0026"; break;
        case '=': out += "\\u003D"; break;
        default:
          if (c < ' ') {
            out += "\\u00";
            out += "0123456789ABCDEF"[c >> 4];
            out += "0123456789ABCDEF"[c & 0xF];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    size_t next = i;
    char32_t r = utf8_decode(s, &next);
    if (go_is_print(r)) {
      out.append(s, i, next - i);
    } else {
      char tmp[16];
      std::snprintf(tmp, sizeof tmp, "\\u%04X", static_cast<unsigned>(r));
      out += tmp;
    }
    i = next;
  }
  return out;
}

std::string query_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += "0123456789ABCDEF"[c >> 4];
      out += "0123456789ABCDEF"[c & 0xF];
    }
  }
  return out;
}

std::string local_date(std::chrono::system_clock::time_point now, int days_back) {
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  tm.tm_mday -= days_back;  // AddDate(0, 0, -n): normalised by mktime
  tm.tm_isdst = -1;
  if (days_back != 0) std::mktime(&tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string map_typescript_type(const std::string& json_type) {
  if (json_type == "string") return "string";
  if (json_type == "number" || json_type == "integer") return "number";
  if (json_type == "boolean") return "boolean";
  if (json_type == "array") return "any[]";
  if (json_type == "object") return "Record<string, any>";
  if (json_type == "null") return "null";
  return "any";
}

Function make(std::vector<ParamType> params, bool variadic,
              std::function<Value(const Args&, const CallContext&, std::string*)> call) {
  return Function{std::move(params), variadic, std::move(call)};
}

}  // namespace

std::string to_typescript_type(const Value& tool_property) {
  const Type* type = tool_property.type();
  size_t any_of = 0, type_field = 0;
  for (size_t i = 0; i < type->fields.size(); ++i) {
    if (type->fields[i].name == "AnyOf") any_of = i;
    if (type->fields[i].name == "Type") type_field = i;
  }
  const Value& alternatives = tool_property.field(any_of);
  if (alternatives.len() > 0) {
    std::string out;
    for (size_t i = 0; i < alternatives.len(); ++i) {
      if (i > 0) out += " | ";
      out += to_typescript_type(alternatives.index(i));
    }
    return out;
  }
  const Value& types = tool_property.field(type_field);
  if (types.len() == 0) return "any";
  std::string out;
  for (size_t i = 0; i < types.len(); ++i) {
    if (i > 0) out += " | ";
    out += map_typescript_type(types.index(i).as_string());
  }
  return out;
}

const FunctionTable& builtin_functions() {
  using P = ParamType;
  static const FunctionTable kTable = [] {
    FunctionTable t;
    auto unreachable = [](const Args&, const CallContext&, std::string* error) {
      *error = "unreachable";
      return Value();
    };
    t["and"] = make({P::kValue, P::kValue}, true, unreachable);  // evaluated lazily by the executor
    t["or"] = make({P::kValue, P::kValue}, true, unreachable);
    t["call"] =
        make({P::kValue, P::kValue}, true, [](const Args& args, const CallContext&, std::string* error) {
          Value fn = indirect_interface(args[0]);
          *error = fn.valid() ? "non-function of type " + fn.type()->name : "call of nil";
          return Value();
        });
    t["not"] = make({P::kValue}, false, fn_not);
    t["len"] = make({P::kValue}, false, fn_len);
    t["index"] = make({P::kValue, P::kValue}, true, fn_index);
    t["slice"] = make({P::kValue, P::kValue}, true, fn_slice);
    t["eq"] = make({P::kValue, P::kValue}, true, fn_eq);
    t["ne"] = make({P::kValue, P::kValue}, false, fn_ne);
    t["lt"] = make({P::kValue, P::kValue}, false, fn_lt);
    t["le"] = make({P::kValue, P::kValue}, false, fn_le);
    t["gt"] = make({P::kValue, P::kValue}, false, fn_gt);
    t["ge"] = make({P::kValue, P::kValue}, false, fn_ge);
    t["print"] = make({P::kAny}, true, [](const Args& args, const CallContext&, std::string*) {
      return Value::string(go_sprint(args));
    });
    t["println"] = make({P::kAny}, true, [](const Args& args, const CallContext&, std::string*) {
      return Value::string(go_sprintln(args));
    });
    t["printf"] = make({P::kString, P::kAny}, true, [](const Args& args, const CallContext&, std::string*) {
      std::vector<Value> rest(args.begin() + 1, args.end());
      return Value::string(go_sprintf(args[0].as_string(), rest));
    });
    t["html"] = make({P::kAny}, true, [](const Args& args, const CallContext&, std::string*) {
      return Value::string(html_escape(eval_args(args)));
    });
    t["js"] = make({P::kAny}, true, [](const Args& args, const CallContext&, std::string*) {
      return Value::string(js_escape(eval_args(args)));
    });
    t["urlquery"] = make({P::kAny}, true, [](const Args& args, const CallContext&, std::string*) {
      return Value::string(query_escape(eval_args(args)));
    });
    return t;
  }();
  return kTable;
}

const FunctionTable& ollama_functions() {
  using P = ParamType;
  static const FunctionTable kTable = [] {
    FunctionTable t;
    t["json"] = make({P::kAny}, false, [](const Args& args, const CallContext&, std::string*) {
      return Value::string(go_json_marshal(as_any(args[0])).value_or(""));
    });
    t["currentDate"] = make({P::kString}, true, [](const Args&, const CallContext& context, std::string*) {
      return Value::string(local_date(context.now, 0));
    });
    t["yesterdayDate"] = make({P::kString}, true, [](const Args&, const CallContext& context, std::string*) {
      return Value::string(local_date(context.now, 1));
    });
    t["toTypeScriptType"] = make({P::kAny}, false, [](const Args& args, const CallContext&, std::string*) {
      Value v = as_any(args[0]);
      if (v.kind() == Kind::kPointer && !v.is_nil()) v = v.elem();
      if (v.valid() && v.type()->has_typescript_method) return Value::string(to_typescript_type(v));
      return Value::string("any");
    });
    return t;
  }();
  return kTable;
}

}  // namespace sinter::chat::gotemplate
