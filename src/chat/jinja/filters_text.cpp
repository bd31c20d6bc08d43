// Filters on strings and scalars. Each follows its Jinja2 definition (filters.py): most convert
// their input with str() first, so that Undefined becomes "" and None becomes "None".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja/arguments.h"
#include "chat/jinja/attributes.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/json.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"
#include "core/utf8.h"

namespace sinter::chat::jinja {
namespace {

Result<BoundArguments> bind(std::string_view filter, const CallArgs& args,
                            std::initializer_list<std::string_view> parameters, size_t required = 0) {
  return BoundArguments::bind(concat("do_", filter), args, parameters, required);
}

Result<Value> text_result(Interpreter& interpreter, std::string text) {
  SINTER_TRY(interpreter.check_size(text.size()));
  return Value(std::move(text));
}

Result<Value> filter_upper(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_upper", args));
  return Value(py::upper(to_str(input)));
}

Result<Value> filter_lower(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_lower", args));
  return Value(py::lower(to_str(input)));
}

Result<Value> filter_capitalize(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_capitalize", args));
  return Value(py::capitalize(to_str(input)));
}

// Jinja2's title(): words start after '-', whitespace or an opening bracket; the first letter of
// each is uppercased and the rest lowercased.
Result<Value> filter_title(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_title", args));
  std::u32string text = py::decode(to_str(input));
  auto is_separator = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py::is_space(c);
  };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    bool separator = is_separator(text[i]);
    while (j < text.size() && is_separator(text[j]) == separator) ++j;
    std::u32string_view part(text.data() + i, j - i);
    out += py::upper(py::encode(part.substr(0, 1)));
    out += py::lower(py::encode(part.substr(1)));
    i = j;
  }
  return Value(std::move(out));
}

Result<Value> filter_trim(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("trim", args, {"chars"}));
  std::optional<std::string> chars;
  Value c = a.get(0, Value::none());
  if (c.is_string()) {
    chars = c.as_string();
  } else if (!c.is_none()) {
    return type_error("strip arg must be None or str");
  }
  return Value(py::strip(to_str(input), chars, py::StripSide::kBoth));
}

Result<Value> filter_replace(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("replace", args, {"old", "new", "count"}, 2));
  int64_t count = -1;
  Value c = a.get(2, Value::none());
  if (c.is_integral()) {
    count = c.as_int();
  } else if (!c.is_none()) {
    return type_error(concat("'", type_name(c), "' object cannot be interpreted as an integer"));
  }
  return text_result(interpreter, py::replace(to_str(input), to_str(a.get(0)), to_str(a.get(1)), count));
}

Result<Value> filter_string(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("soft_str", args));
  return Value(to_str(input));
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Result<Value> filter_escape(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("escape", args));
  return Value(html_escape(to_str(input)));
}

// markupsafe's unescape for the entities that matter; others are left as they are.
std::string html_unescape(std::string_view text) {
  static constexpr std::pair<std::string_view, std::string_view> kNamed[] = {
      {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}, {"nbsp", "\xC2\xA0"}};
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '&') {
      out += text[i++];
      continue;
    }
    size_t semicolon = text.find(';', i);
    if (semicolon != std::string_view::npos && semicolon - i <= 10) {
      std::string_view name = text.substr(i + 1, semicolon - i - 1);
      bool done = false;
      for (const auto& [entity, replacement] : kNamed) {
        if (name == entity) {
          out += replacement;
          done = true;
        }
      }
      if (!done && name.size() > 1 && name[0] == '#') {
        bool hex = name[1] == 'x' || name[1] == 'X';
        std::string digits(name.substr(hex ? 2 : 1));
        char* end = nullptr;
        unsigned long code = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
        if (!digits.empty() && end && *end == 0 && code > 0 && code <= 0x10FFFF &&
            (code < 0xD800 || code > 0xDFFF)) {
          utf8_append(&out, static_cast<uint32_t>(code));
          done = true;
        }
      }
      if (done) {
        i = semicolon + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

Result<Value> filter_striptags(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_striptags", args));
  std::string text = to_str(input);
  std::string stripped;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 4, "<!--") == 0) {
      size_t end = text.find("-->", i + 4);
      if (end != std::string::npos) {
        i = end + 3;
        continue;
      }
    }
    stripped += text[i++];
  }
  std::string untagged;
  i = 0;
  while (i < stripped.size()) {
    if (stripped[i] == '<') {
      size_t end = stripped.find('>', i + 1);
      if (end != std::string::npos) {
        i = end + 1;
        continue;
      }
    }
    untagged += stripped[i++];
  }
  std::string joined;
  for (const auto& word : py::split(untagged, std::nullopt, -1)) {
    if (!joined.empty()) joined += ' ';
    joined += word;
  }
  return Value(html_unescape(joined));
}

Result<Value> filter_safe(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_mark_safe", args));
  return Value(to_str(input));
}

Result<Value> filter_center(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("center", args, {"width"}));
  Value width = a.get(0, Value(80));
  if (!width.is_integral())
    return type_error(concat("'", type_name(width), "' object cannot be interpreted as an integer"));
  std::string text = to_str(input);
  auto length = static_cast<int64_t>(py::length(text));
  int64_t total = width.as_int() - length;
  if (total <= 0) return Value(std::move(text));
  SINTER_TRY(interpreter.check_size(static_cast<size_t>(total) + text.size()));
  int64_t left = total / 2 + (total & width.as_int() & 1);
  return Value(std::string(static_cast<size_t>(left), ' ') + text +
               std::string(static_cast<size_t>(total - left), ' '));
}

Result<Value> filter_indent(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("indent", args, {"width", "first", "blank"}));
  Value width = a.get(0, Value(4));
  std::string indention;
  if (width.is_string()) {
    indention = width.as_string();
  } else if (width.is_integral()) {
    if (width.as_int() > (int64_t{1} << 20)) return limit_error("indent width too large");
    indention = std::string(static_cast<size_t>(std::max<int64_t>(width.as_int(), 0)), ' ');
  } else {
    return type_error(concat("can't multiply sequence by non-int of type '", type_name(width), "'"));
  }
  bool first = truthy(a.get(1, Value(false)));
  bool blank = truthy(a.get(2, Value(false)));
  std::string text = to_str(input) + "\n";  // Jinja2 appends a newline for splitlines()
  std::vector<std::string> lines = py::splitlines(text, false);
  std::string out;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) out += "\n" + indention;
      out += lines[i];
    }
  } else {
    out = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      out += '\n';
      if (!lines[i].empty()) out += indention + lines[i];
    }
  }
  if (first) out = indention + out;
  return text_result(interpreter, std::move(out));
}

Result<Value> filter_truncate(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("truncate", args, {"length", "killwords", "end", "leeway"}));
  std::u32string text = py::decode(to_str(input));
  Value length_value = a.get(0, Value(255));
  Value leeway_value = a.get(3, Value(5));
  if (leeway_value.is_none()) leeway_value = Value(5);
  if (!length_value.is_integral() || !leeway_value.is_integral())
    return type_error("truncate length must be an int");
  std::u32string end = py::decode(to_str(a.get(2, Value("..."))));
  int64_t length = length_value.as_int();
  int64_t leeway = leeway_value.as_int();
  if (length < static_cast<int64_t>(end.size())) {
    return Error(ErrorCode::kInvalidArgument,
                 concat("AssertionError: expected length >= ", end.size(), ", got ", length));
  }
  if (leeway < 0)
    return Error(ErrorCode::kInvalidArgument, concat("AssertionError: expected leeway >= 0, got ", leeway));
  if (static_cast<int64_t>(text.size()) <= length + leeway) return Value(py::encode(text));
  std::u32string head = text.substr(0, static_cast<size_t>(length) - end.size());
  if (truthy(a.get(1, Value(false)))) return Value(py::encode(head + end));
  size_t space = head.rfind(U' ');
  if (space != std::u32string::npos) head = head.substr(0, space);
  return Value(py::encode(head + end));
}

Result<Value> filter_wordcount(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_wordcount", args));
  int64_t words = 0;
  bool in_word = false;
  for (char32_t c : py::decode(to_str(input))) {
    bool word = c == '_' || py::is_alpha(c) || py::is_numeric(c) || py::is_digit(c);
    if (word && !in_word) ++words;
    in_word = word;
  }
  return Value(words);
}

Result<Value> filter_format(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  Value values;
  if (!args.keyword.empty()) {
    if (!args.positional.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   "FilterArgumentError: can't handle positional and keyword arguments");
    }
    auto dict = std::make_shared<Dict>();
    for (const auto& [key, value] : args.keyword) dict->set(Value(key), value);
    values = Value(std::move(dict));
  } else {
    values = Value::tuple(args.positional);
  }
  SINTER_ASSIGN(std::string text, percent_format(to_str(input), values));
  return text_result(interpreter, std::move(text));
}

Result<Value> filter_abs(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("abs", args));
  if (input.is_integral()) {
    if (input.as_int() == INT64_MIN) return overflow_error("integer result does not fit in 64 bits");
    return Value(input.as_int() < 0 ? -input.as_int() : input.as_int());
  }
  if (input.is_float()) return Value(std::fabs(input.as_float()));
  if (input.is_undefined()) return undefined_failure(input);
  return type_error(concat("bad operand type for abs(): '", type_name(input), "'"));
}

// Python's float(str): optional sign, digits with single underscores, a fraction, an exponent;
// or inf/infinity/nan. Surrounding whitespace is allowed.
std::optional<double> parse_python_float(const std::string& raw) {
  std::string text = py::strip(raw, std::nullopt, py::StripSide::kBoth);
  std::string lowered = py::lower(text);
  size_t sign = !lowered.empty() && (lowered[0] == '+' || lowered[0] == '-') ? 1 : 0;
  std::string_view body = std::string_view(lowered).substr(sign);
  double sign_factor = sign && lowered[0] == '-' ? -1.0 : 1.0;
  if (body == "inf" || body == "infinity") return sign_factor * INFINITY;
  if (body == "nan") return NAN;
  std::string cleaned;
  bool digits = false;
  bool exponent = false;
  bool point = false;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c >= '0' && c <= '9') {
      digits = true;
      cleaned += c;
    } else if (c == '_') {
      bool between = i > 0 && i + 1 < body.size() && body[i - 1] >= '0' && body[i - 1] <= '9' &&
                     body[i + 1] >= '0' && body[i + 1] <= '9';
      if (!between) return std::nullopt;
    } else if (c == '.' && !point && !exponent) {
      point = true;
      cleaned += c;
    } else if (c == 'e' && digits && !exponent) {
      exponent = true;
      cleaned += c;
      if (i + 1 < body.size() && (body[i + 1] == '+' || body[i + 1] == '-')) cleaned += body[++i];
      if (i + 1 >= body.size()) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!digits) return std::nullopt;
  return sign_factor * std::strtod(cleaned.c_str(), nullptr);
}

// Python's int(str, base): whitespace, sign, digits with single underscores, and for bases 2, 8
// and 16 an optional prefix.
std::optional<int64_t> parse_python_int(const std::string& raw, int base) {
  std::string text = py::strip(raw, std::nullopt, py::StripSide::kBoth);
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  if (i + 1 < text.size() && text[i] == '0') {
    char p = static_cast<char>(text[i + 1] | 0x20);
    if ((p == 'x' && base == 16) || (p == 'o' && base == 8) || (p == 'b' && base == 2)) i += 2;
  }
  if (i >= text.size()) return std::nullopt;
  uint64_t value = 0;
  bool previous_digit = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '_' && previous_digit && i + 1 < text.size()) {
      previous_digit = false;
      continue;
    }
    int digit = c >= '0' && c <= '9'                     ? c - '0'
                : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10
                                                         : 99;
    if (digit >= base) return std::nullopt;
    if (value > (UINT64_MAX - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(base))
      return std::nullopt;
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
    previous_digit = true;
  }
  if (!previous_digit) return std::nullopt;
  if (value > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
}

Result<std::optional<double>> to_python_float(const Value& value) {
  if (value.is_undefined()) return undefined_failure(value);
  if (value.is_number()) return std::optional<double>(value.as_float());
  if (value.is_string()) return parse_python_float(value.as_string());
  return std::optional<double>();
}

Result<Value> filter_int(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("int", args, {"default", "base"}));
  Value fallback = a.get(0, Value(0));
  Value base = a.get(1, Value(10));
  if (input.is_undefined()) return undefined_failure(input);
  if (input.is_integral()) return Value(input.as_int());
  if (input.is_string() && base.is_integral() && base.as_int() >= 2 && base.as_int() <= 36) {
    if (auto n = parse_python_int(input.as_string(), static_cast<int>(base.as_int()))) return Value(*n);
  }
  if (input.is_float() && std::isinf(input.as_float())) {
    return overflow_error("cannot convert float infinity to integer");
  }
  SINTER_ASSIGN(auto f, to_python_float(input));
  if (f && std::isfinite(*f)) {
    if (std::fabs(*f) >= 9.2e18) return overflow_error("integer does not fit in 64 bits");
    return Value(static_cast<int64_t>(*f));
  }
  if (f && std::isinf(*f)) return overflow_error("cannot convert float infinity to integer");
  return fallback;
}

Result<Value> filter_float(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("float", args, {"default"}));
  SINTER_ASSIGN(auto f, to_python_float(input));
  if (f) return Value(*f);
  return a.get(0, Value(0.0));
}

// Python's round(x, n) on a float: the exactly rounded decimal (ties to even), as printf does.
double round_float(double value, int64_t precision) {
  if (!std::isfinite(value)) return value;
  if (precision >= 0) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.*f", static_cast<int>(std::min<int64_t>(precision, 300)), value);
    return std::strtod(buffer, nullptr);
  }
  double scale = std::pow(10.0, static_cast<double>(-precision));
  return std::nearbyint(value / scale) * scale;
}

Result<Value> filter_round(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("round", args, {"precision", "method"}));
  Value precision_value = a.get(0, Value(0));
  std::string method = to_str(a.get(1, Value("common")));
  if (method != "common" && method != "ceil" && method != "floor") {
    return Error(ErrorCode::kInvalidArgument, "FilterArgumentError: method must be common, ceil or floor");
  }
  if (!precision_value.is_integral()) {
    return type_error(
        concat("'", type_name(precision_value), "' object cannot be interpreted as an integer"));
  }
  int64_t precision = precision_value.as_int();
  if (input.is_undefined()) return undefined_failure(input);
  if (!input.is_number())
    return type_error(concat("type ", type_name(input), " doesn't define __round__ method"));
  if (method == "common") {
    if (input.is_integral() && precision >= 0) return Value(input.as_int());
    return Value(round_float(input.as_float(), precision));
  }
  double scale = std::pow(10.0, static_cast<double>(precision));
  double scaled = input.as_float() * scale;
  return Value((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Result<Value> filter_default(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("default", args, {"default_value", "boolean"}));
  bool boolean = truthy(a.get(1, Value(false)));
  if (input.is_undefined() || (boolean && !truthy(input))) return a.get(0, Value(""));
  return input;
}

Result<Value> filter_attr(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("attr", args, {"name"}, 1));
  return get_python_attribute(interpreter, input, to_str(a.get(0)));
}

// pprint.pformat's order: dict keys sorted (by type name first where they cannot be compared).
Value sorted_for_pprint(const Value& value, int depth) {
  if (depth > 64) return value;
  if (value.is_list() || value.is_tuple()) {
    std::vector<Value> items;
    for (const auto& item : value.items()) items.push_back(sorted_for_pprint(item, depth + 1));
    return Value::sequence(std::move(items), value.flavor());
  }
  if (!value.is_dict()) return value;
  auto entries = value.as_dict().entries();
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    auto c = compare_values(a.first, b.first);
    if (c) return *c < 0;
    return type_name(a.first) < type_name(b.first);
  });
  auto dict = std::make_shared<Dict>();
  for (const auto& [k, v] : entries) dict->set(k, sorted_for_pprint(v, depth + 1));
  return Value(std::move(dict));
}

// pformat() as long as the text fits its 80 columns (longer values are not wrapped here).
Result<Value> filter_pprint(Interpreter&, const Value& input, const CallArgs& args) {
  SINTER_TRY(expect_no_arguments("do_pprint", args));
  return Value(repr(sorted_for_pprint(input, 0)));
}

// Hugging Face's tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None,
// sort_keys=False), not Jinja2's HTML-safe one.
Result<Value> filter_tojson(Interpreter& interpreter, const Value& input, const CallArgs& args) {
  SINTER_ASSIGN(auto a, bind("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"}));
  JsonDumpOptions options;
  options.ensure_ascii = truthy(a.get(0, Value(false)));
  Value indent = a.get(1, Value::none());
  if (indent.is_string()) {
    options.indent = indent.as_string();
  } else if (indent.is_integral()) {
    if (indent.as_int() > 4096) return limit_error("tojson indent too large");
    options.indent = std::string(static_cast<size_t>(std::max<int64_t>(indent.as_int(), 0)), ' ');
  } else if (!indent.is_none()) {
    return type_error(concat("can't multiply sequence by non-int of type '", type_name(indent), "'"));
  }
  Value separators = a.get(2, Value::none());
  if (!separators.is_none()) {
    SINTER_ASSIGN(std::vector<Value> parts, iterate(separators));
    if (parts.size() != 2 || !parts[0].is_string() || !parts[1].is_string()) {
      return value_error("separators must be a pair of strings");
    }
    options.item_separator = parts[0].as_string();
    options.key_separator = parts[1].as_string();
  }
  options.sort_keys = truthy(a.get(3, Value(false)));
  SINTER_ASSIGN(std::string text, dump_json(input, options));
  return text_result(interpreter, std::move(text));
}

constexpr FilterEntry kTextFilters[] = {
    {"abs", filter_abs},
    {"attr", filter_attr},
    {"capitalize", filter_capitalize},
    {"center", filter_center},
    {"d", filter_default},
    {"default", filter_default},
    {"e", filter_escape},
    {"escape", filter_escape},
    {"float", filter_float},
    {"forceescape", filter_escape},
    {"format", filter_format},
    {"indent", filter_indent},
    {"int", filter_int},
    {"lower", filter_lower},
    {"pprint", filter_pprint},
    {"replace", filter_replace},
    {"round", filter_round},
    {"safe", filter_safe},
    {"string", filter_string},
    {"striptags", filter_striptags},
    {"title", filter_title},
    {"tojson", filter_tojson},
    {"trim", filter_trim},
    {"truncate", filter_truncate},
    {"upper", filter_upper},
    {"wordcount", filter_wordcount},
};

}  // namespace

std::span<const FilterEntry> text_filters() { return kTextFilters; }

}  // namespace sinter::chat::jinja
