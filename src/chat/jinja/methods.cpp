#include "chat/jinja/methods.h"

#include <algorithm>
#include <optional>

#include "chat/jinja/arguments.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_format.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

constexpr std::string_view kStringMethods[] = {
    "capitalize", "casefold",   "center",       "count",        "endswith",     "find",    "format",
    "index",      "isalnum",    "isalpha",      "isascii",      "isdecimal",    "isdigit", "islower",
    "isnumeric",  "isspace",    "istitle",      "isupper",      "isprintable",  "join",    "ljust",
    "lower",      "lstrip",     "partition",    "removeprefix", "removesuffix", "replace", "rfind",
    "rindex",     "rjust",      "rpartition",   "rsplit",       "rstrip",       "split",   "splitlines",
    "startswith", "strip",      "swapcase",     "title",        "upper",        "zfill",   "encode",
    "expandtabs", "format_map", "isidentifier", "maketrans",    "translate"};
constexpr std::string_view kDictMethods[] = {"items", "keys", "values", "get", "copy", "fromkeys"};
constexpr std::string_view kDictMutators[] = {"pop", "popitem", "setdefault", "update", "clear"};
constexpr std::string_view kListMethods[] = {"index", "count", "copy"};
constexpr std::string_view kListMutators[] = {"append", "extend",  "insert", "pop",
                                              "remove", "reverse", "sort",   "clear"};

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Result<std::string> string_argument(std::string_view method, const Value& value) {
  if (!value.is_string())
    return type_error(concat(method, "() argument must be str, not ", type_name(value)));
  return value.as_string();
}

Result<std::optional<std::string>> optional_string(std::string_view method, const Value& value) {
  if (value.is_none() || value.is_undefined()) return std::optional<std::string>();
  if (!value.is_string()) return type_error(concat(method, " arg must be None or str"));
  return std::optional<std::string>(value.as_string());
}

Result<int64_t> int_argument(std::string_view method, const Value& value, int64_t fallback) {
  if (value.is_undefined() || value.is_none()) return fallback;
  if (!value.is_integral()) {
    return type_error(
        concat(method, "(): '", type_name(value), "' object cannot be interpreted as an integer"));
  }
  return value.as_int();
}

// Python's handling of str.find(sub, start, end) bounds.
void clamp_range(int64_t length, int64_t* start, int64_t* end) {
  if (*start < 0) *start = std::max<int64_t>(*start + length, 0);
  if (*end < 0) *end = std::max<int64_t>(*end + length, 0);
  *end = std::min(*end, length);
}

Result<Value> affix_test(std::string_view method, const std::string& text, const BoundArguments& a) {
  std::vector<std::string> candidates;
  Value what = a.get(0);
  if (what.is_string()) {
    candidates.push_back(what.as_string());
  } else if (what.is_tuple()) {
    for (const auto& item : what.items()) {
      if (!item.is_string()) {
        return type_error(concat("tuple for ", method, " must only contain str, not ", type_name(item)));
      }
      candidates.push_back(item.as_string());
    }
  } else {
    return type_error(concat(method, " first arg must be str or a tuple of str, not ", type_name(what)));
  }
  std::u32string s = py::decode(text);
  auto length = static_cast<int64_t>(s.size());
  SINTER_ASSIGN(int64_t start, int_argument(method, a.get(1), 0));
  SINTER_ASSIGN(int64_t end, int_argument(method, a.get(2), length));
  clamp_range(length, &start, &end);
  if (start > length) return Value(false);
  std::u32string window = start <= end
                              ? s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start))
                              : std::u32string();
  bool prefix = method == "startswith";
  for (const auto& candidate : candidates) {
    std::u32string c = py::decode(candidate);
    if (start > end) continue;
    if (c.size() > window.size()) continue;
    if (prefix ? window.compare(0, c.size(), c) == 0
               : window.compare(window.size() - c.size(), c.size(), c) == 0) {
      return Value(true);
    }
  }
  return Value(false);
}

Result<std::string> justify(std::string_view method, const std::string& text, const BoundArguments& a) {
  SINTER_ASSIGN(int64_t width, int_argument(method, a.get(0), 0));
  std::string fill = " ";
  if (a.has(1)) {
    Value f = a.get(1);
    if (!f.is_string() || py::length(f.as_string()) != 1) {
      return type_error(concat("The fill character must be exactly one character long"));
    }
    fill = f.as_string();
  }
  auto length = static_cast<int64_t>(py::length(text));
  if (width <= length) return text;
  if (width > (int64_t{1} << 26)) return limit_error("string padding too wide");
  int64_t total = width - length;
  int64_t left = 0;
  if (method == "rjust") {
    left = total;
  } else if (method == "center") {
    left = total / 2 + (total & width & 1);  // CPython's centering rule
  }
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += text;
  for (int64_t i = left; i < total; ++i) out += fill;
  return out;
}

Result<Value> string_method(Interpreter& interpreter, const std::string& text, std::string_view name,
                            const CallArgs& args) {
  auto bind = [&](std::initializer_list<std::string_view> parameters, size_t required = 0) {
    return BoundArguments::bind(concat("str.", name), args, parameters, required);
  };
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize" || name == "swapcase" ||
      name == "casefold") {
    SINTER_TRY(expect_no_arguments(concat("str.", name), args));
    if (name == "upper") return Value(py::upper(text));
    if (name == "title") return Value(py::title(text));
    if (name == "capitalize") return Value(py::capitalize(text));
    if (name == "swapcase") return Value(py::swapcase(text));
    return Value(py::lower(text));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    SINTER_ASSIGN(auto a, bind({"chars"}));
    SINTER_ASSIGN(auto chars, optional_string(name, a.get(0)));
    auto side = name == "strip"    ? py::StripSide::kBoth
                : name == "lstrip" ? py::StripSide::kLeft
                                   : py::StripSide::kRight;
    return Value(py::strip(text, chars, side));
  }
  if (name == "split" || name == "rsplit") {
    SINTER_ASSIGN(auto a, bind({"sep", "maxsplit"}));
    SINTER_ASSIGN(auto sep, optional_string(name, a.get(0)));
    if (sep && sep->empty()) return value_error("empty separator");
    SINTER_ASSIGN(int64_t maxsplit, int_argument(name, a.get(1), -1));
    auto parts = name == "split" ? py::split(text, sep, maxsplit) : py::rsplit(text, sep, maxsplit);
    std::vector<Value> items(parts.begin(), parts.end());
    return Value::list(std::move(items));
  }
  if (name == "splitlines") {
    SINTER_ASSIGN(auto a, bind({"keepends"}));
    auto parts = py::splitlines(text, truthy(a.get(0, Value(false))));
    return Value::list(std::vector<Value>(parts.begin(), parts.end()));
  }
  if (name == "startswith" || name == "endswith") {
    SINTER_ASSIGN(auto a, bind({"prefix", "start", "end"}, 1));
    return affix_test(name, text, a);
  }
  if (name == "replace") {
    SINTER_ASSIGN(auto a, bind({"old", "new", "count"}, 2));
    SINTER_ASSIGN(std::string old_text, string_argument(name, a.get(0)));
    SINTER_ASSIGN(std::string new_text, string_argument(name, a.get(1)));
    SINTER_ASSIGN(int64_t count, int_argument(name, a.get(2), -1));
    std::string out = py::replace(text, old_text, new_text, count);
    SINTER_TRY(interpreter.check_size(out.size()));
    return Value(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    SINTER_ASSIGN(auto a, bind({"sub", "start", "end"}, 1));
    SINTER_ASSIGN(std::string sub, string_argument(name, a.get(0)));
    auto length = static_cast<int64_t>(py::length(text));
    SINTER_ASSIGN(int64_t start, int_argument(name, a.get(1), 0));
    SINTER_ASSIGN(int64_t end, int_argument(name, a.get(2), length));
    clamp_range(length, &start, &end);
    if (name == "count") return Value(start > end ? int64_t{0} : py::count(text, sub, start, end));
    int64_t found = py::find(text, sub, start, end, name == "rfind" || name == "rindex");
    if (found < 0 && (name == "index" || name == "rindex")) return value_error("substring not found");
    return Value(found);
  }
  if (name == "join") {
    SINTER_ASSIGN(auto a, bind({"iterable"}, 1));
    SINTER_ASSIGN(std::vector<Value> items, iterate(a.get(0)));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) {
        return type_error(
            concat("sequence item ", i, ": expected str instance, ", type_name(items[i]), " found"));
      }
      if (i) out += text;
      out += items[i].as_string();
      SINTER_TRY(interpreter.check_size(out.size()));
    }
    return Value(std::move(out));
  }
  if (name == "center" || name == "ljust" || name == "rjust") {
    SINTER_ASSIGN(auto a, bind({"width", "fillchar"}, 1));
    SINTER_ASSIGN(std::string out, justify(name, text, a));
    return Value(std::move(out));
  }
  if (name == "zfill") {
    SINTER_ASSIGN(auto a, bind({"width"}, 1));
    SINTER_ASSIGN(int64_t width, int_argument(name, a.get(0), 0));
    auto length = static_cast<int64_t>(py::length(text));
    if (width <= length) return Value(text);
    if (width > (int64_t{1} << 26)) return limit_error("string padding too wide");
    std::string out = text;
    size_t sign = !out.empty() && (out[0] == '+' || out[0] == '-') ? 1 : 0;
    out.insert(sign, std::string(static_cast<size_t>(width - length), '0'));
    return Value(std::move(out));
  }
  if (name == "partition" || name == "rpartition") {
    SINTER_ASSIGN(auto a, bind({"sep"}, 1));
    SINTER_ASSIGN(std::string sep, string_argument(name, a.get(0)));
    if (sep.empty()) return value_error("empty separator");
    size_t at = name == "partition" ? text.find(sep) : text.rfind(sep);
    if (at == std::string::npos) {
      return name == "partition" ? Value::tuple({Value(text), Value(""), Value("")})
                                 : Value::tuple({Value(""), Value(""), Value(text)});
    }
    return Value::tuple({Value(text.substr(0, at)), Value(sep), Value(text.substr(at + sep.size()))});
  }
  if (name == "removeprefix" || name == "removesuffix") {
    SINTER_ASSIGN(auto a, bind({"affix"}, 1));
    SINTER_ASSIGN(std::string affix, string_argument(name, a.get(0)));
    if (name == "removeprefix" && text.compare(0, affix.size(), affix) == 0)
      return Value(text.substr(affix.size()));
    if (name == "removesuffix" && !affix.empty() && text.size() >= affix.size() &&
        text.compare(text.size() - affix.size(), affix.size(), affix) == 0) {
      return Value(text.substr(0, text.size() - affix.size()));
    }
    return Value(text);
  }
  if (name == "format") {
    SINTER_ASSIGN(std::string out, str_format(interpreter, text, args));
    return Value(std::move(out));
  }
  if (name.substr(0, 2) == "is") {
    SINTER_TRY(expect_no_arguments(concat("str.", name), args));
    if (name == "isalpha") return Value(py::all_of(text, py::is_alpha));
    if (name == "isdecimal") return Value(py::all_of(text, py::is_decimal));
    if (name == "isdigit") return Value(py::all_of(text, py::is_digit));
    if (name == "isnumeric") return Value(py::all_of(text, py::is_numeric));
    if (name == "isspace") return Value(py::all_of(text, py::is_space));
    if (name == "isalnum") {
      return Value(py::all_of(text, [](char32_t c) { return py::is_alpha(c) || py::is_numeric(c); }));
    }
    if (name == "isascii")
      return Value(std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; }));
    if (name == "isprintable") return Value(text.empty() || py::all_of(text, py::is_printable));
    if (name == "isupper") return Value(py::is_upper_string(text));
    if (name == "islower") return Value(py::is_lower_string(text));
    if (name == "istitle") return Value(py::is_title_string(text));
  }
  return unsupported_error(concat("the str method '", name, "'"));
}

Result<Value> dict_method(Interpreter& interpreter, const Value& self, std::string_view name,
                          const CallArgs& args) {
  const Dict& dict = self.as_dict();
  auto bind = [&](std::initializer_list<std::string_view> parameters, size_t required = 0) {
    return BoundArguments::bind(concat("dict.", name), args, parameters, required);
  };
  if (name == "items" || name == "keys" || name == "values") {
    SINTER_TRY(expect_no_arguments(concat("dict.", name), args));
    std::vector<Value> items;
    items.reserve(dict.size());
    for (const auto& [key, value] : dict.entries()) {
      if (name == "items") {
        items.push_back(Value::tuple({key, value}));
      } else {
        items.push_back(name == "keys" ? key : value);
      }
    }
    auto flavor = name == "items"  ? ListFlavor::kDictItems
                  : name == "keys" ? ListFlavor::kDictKeys
                                   : ListFlavor::kDictValues;
    return Value::sequence(std::move(items), flavor);
  }
  if (name == "get") {
    SINTER_ASSIGN(auto a, bind({"key", "default"}, 1));
    SINTER_TRY(require_hashable(a.get(0)));
    if (const Value* found = dict.find(a.get(0))) return *found;
    return a.get(1, Value::none());
  }
  if (name == "copy") {
    SINTER_TRY(expect_no_arguments("dict.copy", args));
    return Value(std::make_shared<Dict>(dict));
  }
  // Mutators: only reachable with RenderOptions::allow_mutation.
  Dict& target = *self.dict_ptr();
  if (name == "pop" || name == "setdefault") {
    SINTER_ASSIGN(auto a, bind({"key", "default"}, 1));
    SINTER_TRY(require_hashable(a.get(0)));
    if (const Value* found = dict.find(a.get(0))) {
      Value value = *found;
      if (name == "pop") target.erase(a.get(0));
      return value;
    }
    if (name == "setdefault") {
      Value value = a.get(1, Value::none());
      SINTER_TRY(check_nesting(value, kMaxValueNesting, self.dict_ptr().get()));
      target.set(a.get(0), value);
      return value;
    }
    if (!a.has(1)) return key_error(repr(a.get(0)));
    return a.get(1);
  }
  if (name == "popitem") {
    if (dict.empty()) return key_error("'popitem(): dictionary is empty'");
    auto entry = dict.entries().back();
    target.erase(entry.first);
    return Value::tuple({entry.first, entry.second});
  }
  if (name == "update") {
    if (args.positional.size() > 1) return type_error("update expected at most 1 argument");
    for (const auto& arg : args.positional)
      SINTER_TRY(check_nesting(arg, kMaxValueNesting, self.dict_ptr().get()));
    for (const auto& [key, arg] : args.keyword)
      SINTER_TRY(check_nesting(arg, kMaxValueNesting, self.dict_ptr().get()));
    if (!args.positional.empty()) {
      const Value& other = args.positional[0];
      if (other.is_dict()) {
        for (const auto& [key, value] : other.as_dict().entries()) target.set(key, value);
      } else {
        SINTER_ASSIGN(std::vector<Value> pairs, iterate(other));
        for (const auto& pair : pairs) {
          SINTER_ASSIGN(std::vector<Value> kv, iterate(pair));
          if (kv.size() != 2) return value_error("dictionary update sequence element has wrong length");
          SINTER_TRY(require_hashable(kv[0]));
          target.set(kv[0], kv[1]);
        }
      }
    }
    for (const auto& [key, value] : args.keyword) target.set(Value(key), value);
    return Value::none();
  }
  if (name == "clear") {
    target.clear();
    return Value::none();
  }
  (void)interpreter;
  return unsupported_error(concat("the dict method '", name, "'"));
}

Result<Value> list_method(Interpreter& interpreter, const Value& self, std::string_view name,
                          const CallArgs& args) {
  const auto& items = self.items();
  const char* type = self.is_tuple() ? "tuple" : "list";
  auto bind = [&](std::initializer_list<std::string_view> parameters, size_t required = 0) {
    return BoundArguments::bind(concat(type, ".", name), args, parameters, required);
  };
  if (name == "index") {
    SINTER_ASSIGN(auto a, bind({"value", "start", "stop"}, 1));
    auto length = static_cast<int64_t>(items.size());
    SINTER_ASSIGN(int64_t start, int_argument(name, a.get(1), 0));
    SINTER_ASSIGN(int64_t end, int_argument(name, a.get(2), length));
    clamp_range(length, &start, &end);
    for (int64_t i = start; i < end; ++i) {
      if (equals(items[static_cast<size_t>(i)], a.get(0))) return Value(i);
    }
    return value_error(
        concat(self.is_tuple() ? "tuple.index(x): x not in tuple" : repr(a.get(0)), " is not in list"));
  }
  if (name == "count") {
    SINTER_ASSIGN(auto a, bind({"value"}, 1));
    return Value(static_cast<int64_t>(std::count_if(
        items.begin(), items.end(), [&](const Value& item) { return equals(item, a.get(0)); })));
  }
  if (name == "copy") {
    SINTER_TRY(expect_no_arguments("list.copy", args));
    return Value::list(items);
  }
  // Mutators: only reachable with RenderOptions::allow_mutation.
  auto& target = self.list_ptr()->items;
  if (name == "append") {
    SINTER_ASSIGN(auto a, bind({"object"}, 1));
    SINTER_TRY(interpreter.check_size(8 * (target.size() + 1)));
    SINTER_TRY(check_nesting(a.get(0), kMaxValueNesting, self.list_ptr().get()));
    target.push_back(a.get(0));
    return Value::none();
  }
  if (name == "extend") {
    SINTER_ASSIGN(auto a, bind({"iterable"}, 1));
    SINTER_ASSIGN(std::vector<Value> more, iterate(a.get(0)));
    SINTER_TRY(interpreter.check_size(8 * (target.size() + more.size())));
    for (const auto& item : more) SINTER_TRY(check_nesting(item, kMaxValueNesting, self.list_ptr().get()));
    target.insert(target.end(), more.begin(), more.end());
    return Value::none();
  }
  if (name == "insert") {
    SINTER_ASSIGN(auto a, bind({"index", "object"}, 2));
    SINTER_ASSIGN(int64_t index, int_argument(name, a.get(0), 0));
    auto length = static_cast<int64_t>(target.size());
    if (index < 0) index = std::max<int64_t>(index + length, 0);
    index = std::min(index, length);
    SINTER_TRY(interpreter.check_size(8 * (target.size() + 1)));
    SINTER_TRY(check_nesting(a.get(1), kMaxValueNesting, self.list_ptr().get()));
    target.insert(target.begin() + index, a.get(1));
    return Value::none();
  }
  if (name == "pop") {
    SINTER_ASSIGN(auto a, bind({"index"}));
    if (target.empty()) return index_error("pop from empty list");
    auto length = static_cast<int64_t>(target.size());
    SINTER_ASSIGN(int64_t index, int_argument(name, a.get(0), -1));
    if (index < 0) index += length;
    if (index < 0 || index >= length) return index_error("pop index out of range");
    Value value = target[static_cast<size_t>(index)];
    target.erase(target.begin() + index);
    return value;
  }
  if (name == "remove") {
    SINTER_ASSIGN(auto a, bind({"value"}, 1));
    for (auto it = target.begin(); it != target.end(); ++it) {
      if (equals(*it, a.get(0))) {
        target.erase(it);
        return Value::none();
      }
    }
    return value_error("list.remove(x): x not in list");
  }
  if (name == "reverse") {
    SINTER_TRY(expect_no_arguments("list.reverse", args));
    std::reverse(target.begin(), target.end());
    return Value::none();
  }
  if (name == "clear") {
    SINTER_TRY(expect_no_arguments("list.clear", args));
    target.clear();
    return Value::none();
  }
  if (name == "sort") {
    SINTER_ASSIGN(auto a, bind({"reverse"}));
    Status failure = ok_status();
    std::vector<Value> sorted = target;
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& x, const Value& y) {
      auto c = compare_values(x, y);
      if (!c) {
        if (failure) failure = std::move(c).error();
        return false;
      }
      return *c < 0;
    });
    SINTER_TRY(failure);
    if (truthy(a.get(0))) std::reverse(sorted.begin(), sorted.end());
    target = std::move(sorted);
    return Value::none();
  }
  return unsupported_error(concat("the list method '", name, "'"));
}

}  // namespace

MethodKind method_kind(const Value& self, std::string_view name) {
  switch (self.kind()) {
    case Value::Kind::kString: return listed(kStringMethods, name) ? MethodKind::kSafe : MethodKind::kNone;
    case Value::Kind::kDict:
      if (listed(kDictMethods, name)) return MethodKind::kSafe;
      return listed(kDictMutators, name) ? MethodKind::kMutating : MethodKind::kNone;
    case Value::Kind::kList:
      if (self.is_tuple()) return name == "index" || name == "count" ? MethodKind::kSafe : MethodKind::kNone;
      if (!self.is_list()) return MethodKind::kNone;
      if (listed(kListMethods, name)) return MethodKind::kSafe;
      return listed(kListMutators, name) ? MethodKind::kMutating : MethodKind::kNone;
    default: return MethodKind::kNone;
  }
}

Result<Value> call_method(Interpreter& interpreter, const Value& self, std::string_view name,
                          const CallArgs& args) {
  switch (self.kind()) {
    case Value::Kind::kString: return string_method(interpreter, self.as_string(), name, args);
    case Value::Kind::kDict: return dict_method(interpreter, self, name, args);
    case Value::Kind::kList: return list_method(interpreter, self, name, args);
    default: return type_error(concat("'", type_name(self), "' object has no attribute '", name, "'"));
  }
}

}  // namespace sinter::chat::jinja
