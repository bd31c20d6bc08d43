#include "chat/jinja/python_format.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "chat/jinja/attributes.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

constexpr int64_t kMaxWidth = int64_t{1} << 20;

struct FormatSpec {
  char32_t fill = ' ';
  char align = 0;  // < > ^ =, or 0 for the type's default
  char sign = '-';
  bool alternate = false;
  int64_t width = -1;
  char grouping = 0;  // ',' or '_'
  int64_t precision = -1;
  char type = 0;
};

Result<FormatSpec> parse_spec(std::string_view text) {
  std::u32string spec = py::decode(text);
  FormatSpec out;
  size_t i = 0;
  auto is_align = [](char32_t c) { return c == '<' || c == '>' || c == '=' || c == '^'; };
  if (spec.size() >= 2 && is_align(spec[1])) {
    out.fill = spec[0];
    out.align = static_cast<char>(spec[1]);
    i = 2;
  } else if (!spec.empty() && is_align(spec[0])) {
    out.align = static_cast<char>(spec[0]);
    i = 1;
  }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' '))
    out.sign = static_cast<char>(spec[i++]);
  if (i < spec.size() && spec[i] == 'z') ++i;
  if (i < spec.size() && spec[i] == '#') {
    out.alternate = true;
    ++i;
  }
  if (i < spec.size() && spec[i] == '0') {
    if (!out.align) {
      out.fill = '0';
      out.align = '=';
    }
    ++i;
  }
  auto read_number = [&](int64_t* target) {
    if (i >= spec.size() || spec[i] < '0' || spec[i] > '9') return;
    int64_t n = 0;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9')
      n = std::min(n * 10 + (spec[i++] - '0'), kMaxWidth);
    *target = n;
  };
  read_number(&out.width);
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) out.grouping = static_cast<char>(spec[i++]);
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    if (i >= spec.size() || spec[i] < '0' || spec[i] > '9')
      return value_error("Format specifier missing precision");
    read_number(&out.precision);
  }
  if (i < spec.size()) out.type = static_cast<char>(spec[i++]);
  if (i < spec.size()) return value_error("Invalid format specifier");
  return out;
}

std::string group_digits(const std::string& digits, char separator, size_t every) {
  if (!separator) return digits;
  std::string out;
  size_t count = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    if (count && count % every == 0) out.insert(out.begin(), separator);
    out.insert(out.begin(), digits[i]);
    ++count;
  }
  return out;
}

// Pads `sign + body` to the width; '=' puts the padding between them.
std::string align_text(const std::string& sign, const std::string& body, const FormatSpec& spec,
                       char default_align) {
  char align = spec.align ? spec.align : default_align;
  int64_t length = static_cast<int64_t>(py::length(sign) + py::length(body));
  if (spec.width <= length) return sign + body;
  int64_t padding = spec.width - length;
  std::string fill;
  py::append_code_point(&fill, spec.fill);
  auto repeat = [&](int64_t n) {
    std::string out;
    for (int64_t k = 0; k < n; ++k) out += fill;
    return out;
  };
  switch (align) {
    case '<': return sign + body + repeat(padding);
    case '^': return repeat(padding / 2) + sign + body + repeat(padding - padding / 2);
    case '=': return sign + repeat(padding) + body;
    default: return repeat(padding) + sign + body;
  }
}

std::string sign_of(bool negative, const FormatSpec& spec) {
  if (negative) return "-";
  if (spec.sign == '+') return "+";
  if (spec.sign == ' ') return " ";
  return "";
}

Result<std::string> format_integer(int64_t n, const FormatSpec& spec) {
  uint64_t magnitude = n < 0 ? static_cast<uint64_t>(0) - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  std::string digits;
  std::string prefix;
  size_t every = 3;
  char type = spec.type ? spec.type : 'd';
  switch (type) {
    case 'd':
    case 'n': digits = std::to_string(magnitude); break;
    case 'b':
      do {
        digits.insert(digits.begin(), static_cast<char>('0' + (magnitude & 1)));
        magnitude >>= 1;
      } while (magnitude);
      prefix = "0b";
      every = 4;
      break;
    case 'o':
    case 'x':
    case 'X': {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer,
                    type == 'o'   ? "%llo"
                    : type == 'x' ? "%llx"
                                  : "%llX",
                    static_cast<unsigned long long>(magnitude));
      digits = buffer;
      prefix = type == 'o' ? "0o" : type == 'x' ? "0x" : "0X";
      every = 4;
      break;
    }
    case 'c': {
      if (n < 0 || n > 0x10FFFF) return overflow_error("%c arg not in range(0x110000)");
      std::string text;
      py::append_code_point(&text, static_cast<char32_t>(n));
      return align_text("", text, spec, '<');
    }
    default: return value_error(concat("Unknown format code '", type, "' for object of type 'int'"));
  }
  if (spec.precision >= 0) return value_error("Precision not allowed in integer format specifier");
  std::string body = (spec.alternate ? prefix : "") + group_digits(digits, spec.grouping, every);
  return align_text(sign_of(n < 0, spec), body, spec, '>');
}

Result<std::string> format_float_spec(double x, const FormatSpec& spec) {
  char type = spec.type;
  bool negative = std::signbit(x) && !std::isnan(x);
  double magnitude = std::fabs(x);
  std::string body;
  char buffer[512];
  if (!type && spec.precision < 0) {
    body = format_float(magnitude);
  } else {
    int precision = static_cast<int>(std::min<int64_t>(spec.precision < 0 ? 6 : spec.precision, 300));
    std::string c_format = concat("%", spec.alternate ? "#" : "", ".", precision);
    switch (type) {
      case 0:
        std::snprintf(buffer, sizeof buffer, (c_format + "g").c_str(), magnitude);
        body = buffer;
        if (std::isfinite(magnitude) && body.find_first_of(".e") == std::string::npos) body += ".0";
        break;
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G':
        std::snprintf(buffer, sizeof buffer, (c_format + type).c_str(), magnitude);
        body = buffer;
        break;
      case 'n':
        std::snprintf(buffer, sizeof buffer, (c_format + "g").c_str(), magnitude);
        body = buffer;
        break;
      case '%':
        std::snprintf(buffer, sizeof buffer, (c_format + "f").c_str(), magnitude * 100);
        body = std::string(buffer) + "%";
        break;
      default: return value_error(concat("Unknown format code '", type, "' for object of type 'float'"));
    }
  }
  if (spec.grouping && std::isfinite(magnitude)) {
    size_t end = body.find_first_not_of("0123456789");
    if (end == std::string::npos) end = body.size();
    body = group_digits(body.substr(0, end), spec.grouping, 3) + body.substr(end);
  }
  return align_text(sign_of(negative, spec), body, spec, '>');
}

}  // namespace

Result<std::string> format_value(const Value& value, std::string_view spec_text) {
  if (spec_text.empty()) return to_str(value);
  SINTER_ASSIGN(FormatSpec spec, parse_spec(spec_text));
  if (value.is_string()) {
    if (spec.type && spec.type != 's') {
      return value_error(concat("Unknown format code '", spec.type, "' for object of type 'str'"));
    }
    if (spec.sign != '-') return value_error("Sign not allowed in string format specifier");
    if (spec.align == '=') return value_error("'=' alignment not allowed in string format specifier");
    std::string text = value.as_string();
    if (spec.precision >= 0)
      text = py::encode(py::decode(text).substr(0, static_cast<size_t>(spec.precision)));
    return align_text("", text, spec, '<');
  }
  if (value.is_integral()) {
    if (spec.type && std::string_view("eEfFgG%").find(spec.type) != std::string_view::npos) {
      return format_float_spec(static_cast<double>(value.as_int()), spec);
    }
    return format_integer(value.as_int(), spec);
  }
  if (value.is_float()) return format_float_spec(value.as_float(), spec);
  return type_error(concat("unsupported format string passed to ", type_name(value), ".__format__"));
}

Result<std::string> str_format(Interpreter& interpreter, std::string_view format, const CallArgs& args) {
  std::string out;
  size_t automatic = 0;
  bool used_automatic = false;
  bool used_manual = false;
  size_t i = 0;
  while (i < format.size()) {
    char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        out += '}';
        i += 2;
        continue;
      }
      return value_error("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      i += 2;
      continue;
    }
    size_t j = i + 1;
    int depth = 1;
    while (j < format.size() && depth > 0) {
      if (format[j] == '{') ++depth;
      if (format[j] == '}') --depth;
      if (depth > 0) ++j;
    }
    if (j >= format.size()) return value_error("expected '}' before end of string");
    std::string_view field = format.substr(i + 1, j - i - 1);
    i = j + 1;
    // field_name[!conversion][:spec]
    size_t name_end = 0;
    while (name_end < field.size() && field[name_end] != '!' && field[name_end] != ':') {
      if (field[name_end] == '[') {
        size_t close = field.find(']', name_end);
        if (close == std::string_view::npos) return value_error("Missing ']' in format string");
        name_end = close;
      }
      ++name_end;
    }
    std::string_view name = field.substr(0, name_end);
    char conversion = 0;
    std::string spec;
    size_t rest = name_end;
    if (rest < field.size() && field[rest] == '!') {
      if (rest + 1 >= field.size())
        return value_error("end of string while looking for conversion specifier");
      conversion = field[rest + 1];
      rest += 2;
      if (rest < field.size() && field[rest] != ':')
        return value_error("expected ':' after conversion specifier");
    }
    if (rest < field.size() && field[rest] == ':') {
      std::string_view nested = field.substr(rest + 1);
      if (nested.find('{') != std::string_view::npos) {
        CallArgs nested_args = args;
        SINTER_ASSIGN(spec, str_format(interpreter, nested, nested_args));
      } else {
        spec = std::string(nested);
      }
    }
    size_t first_end = name.find_first_of(".[");
    std::string_view first = name.substr(0, first_end);
    Value value;
    if (first.empty()) {
      if (used_manual)
        return value_error("cannot switch from manual field specification to automatic field numbering");
      used_automatic = true;
      if (automatic >= args.positional.size()) {
        return index_error(
            concat("Replacement index ", automatic, " out of range for positional args tuple"));
      }
      value = args.positional[automatic++];
    } else if (first.find_first_not_of("0123456789") == std::string_view::npos) {
      if (used_automatic)
        return value_error("cannot switch from automatic field numbering to manual field specification");
      used_manual = true;
      size_t index = std::stoul(std::string(first.substr(0, 9)));
      if (index >= args.positional.size()) {
        return index_error(concat("Replacement index ", index, " out of range for positional args tuple"));
      }
      value = args.positional[index];
    } else {
      bool found = false;
      for (const auto& [key, keyword_value] : args.keyword) {
        if (key == first) {
          value = keyword_value;
          found = true;
        }
      }
      if (!found) return key_error(py::repr(first));
    }
    size_t p = first_end == std::string_view::npos ? name.size() : first_end;
    while (p < name.size()) {
      if (name[p] == '.') {
        size_t end = name.find_first_of(".[", p + 1);
        if (end == std::string_view::npos) end = name.size();
        SINTER_ASSIGN(value, get_attribute(interpreter, value, name.substr(p + 1, end - p - 1)));
        p = end;
      } else {
        size_t close = name.find(']', p);
        std::string_view key = name.substr(p + 1, close - p - 1);
        Value key_value = key.find_first_not_of("0123456789") == std::string_view::npos && !key.empty()
                              ? Value(static_cast<int64_t>(std::stoll(std::string(key.substr(0, 18)))))
                              : Value(key);
        SINTER_ASSIGN(value, get_item(interpreter, value, key_value));
        p = close + 1;
      }
    }
    if (conversion == 'r' || conversion == 'a') {
      value = Value(repr(value));
    } else if (conversion == 's') {
      value = Value(to_str(value));
    } else if (conversion) {
      return value_error(concat("Unknown conversion specifier ", conversion));
    }
    SINTER_ASSIGN(std::string piece, format_value(value, spec));
    out += piece;
    SINTER_TRY(interpreter.check_size(out.size()));
  }
  return out;
}

}  // namespace sinter::chat::jinja
