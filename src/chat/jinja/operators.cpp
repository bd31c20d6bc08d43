#include "chat/jinja/operators.h"

#include <cmath>
#include <cstdio>

#include "chat/jinja/errors.h"
#include "chat/jinja/py_string.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

const char* op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "//";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kPow: return "** or pow()";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
  }
  return "?";
}

Error unsupported(BinaryOp op, const Value& a, const Value& b) {
  return type_error(concat("unsupported operand type(s) for ", op_symbol(op), ": '", type_name(a), "' and '",
                           type_name(b), "'"));
}

Error integer_overflow() {
  return overflow_error("integer result does not fit in 64 bits (sinter's integers are 64-bit)");
}

// CPython's float floor division and modulo (the result's sign follows the divisor).
void float_divmod(double x, double y, double* floor_div, double* mod) {
  double m = std::fmod(x, y);
  double div = (x - m) / y;
  if (m != 0.0) {
    if ((y < 0) != (m < 0)) {
      m += y;
      div -= 1.0;
    }
  } else {
    m = std::copysign(0.0, y);
  }
  double floored;
  if (div != 0.0) {
    floored = std::floor(div);
    if (div - floored > 0.5) floored += 1.0;
  } else {
    floored = std::copysign(0.0, x / y);
  }
  *floor_div = floored;
  *mod = m;
}

Result<Value> integer_operation(BinaryOp op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
    case BinaryOp::kAdd:
      if (__builtin_add_overflow(x, y, &r)) return integer_overflow();
      return Value(r);
    case BinaryOp::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return integer_overflow();
      return Value(r);
    case BinaryOp::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return integer_overflow();
      return Value(r);
    case BinaryOp::kDiv:
      if (y == 0) return zero_division_error("division by zero");
      return Value(static_cast<double>(x) / static_cast<double>(y));
    case BinaryOp::kFloorDiv:
    case BinaryOp::kMod: {
      if (y == 0) return zero_division_error("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) {
        if (op == BinaryOp::kMod) return Value(int64_t{0});
        return integer_overflow();
      }
      int64_t q = x / y;
      int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        m += y;
        q -= 1;
      }
      return Value(op == BinaryOp::kFloorDiv ? q : m);
    }
    case BinaryOp::kPow: {
      if (y < 0) {
        if (x == 0) return zero_division_error("0.0 cannot be raised to a negative power");
        return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
      int64_t result = 1;
      int64_t base = x;
      while (y > 0) {
        if (y & 1) {
          if (__builtin_mul_overflow(result, base, &result)) return integer_overflow();
        }
        y >>= 1;
        if (y > 0 && __builtin_mul_overflow(base, base, &base)) return integer_overflow();
      }
      return Value(result);
    }
    default: return type_error("not an arithmetic operator");
  }
}

Result<Value> float_operation(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::kAdd: return Value(x + y);
    case BinaryOp::kSub: return Value(x - y);
    case BinaryOp::kMul: return Value(x * y);
    case BinaryOp::kDiv:
      if (y == 0.0) return zero_division_error("float division by zero");
      return Value(x / y);
    case BinaryOp::kFloorDiv:
    case BinaryOp::kMod: {
      if (y == 0.0) {
        return zero_division_error(op == BinaryOp::kMod ? "float modulo" : "float floor division by zero");
      }
      double floor_div = 0;
      double mod = 0;
      float_divmod(x, y, &floor_div, &mod);
      return Value(op == BinaryOp::kFloorDiv ? floor_div : mod);
    }
    case BinaryOp::kPow:
      if (x == 0.0 && y < 0) return zero_division_error("0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) {
        return value_error("a negative number raised to a fractional power is complex (not supported)");
      }
      return Value(std::pow(x, y));
    default: return type_error("not an arithmetic operator");
  }
}

Result<Value> repeat(const Value& sequence, int64_t times, size_t max_bytes) {
  if (times < 0) times = 0;
  if (sequence.is_string()) {
    const std::string& s = sequence.as_string();
    if (!s.empty() && static_cast<uint64_t>(times) > max_bytes / s.size()) {
      return limit_error("a string repeated by * would pass the output size limit");
    }
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value(std::move(out));
  }
  const auto& items = sequence.items();
  if (!items.empty() && static_cast<uint64_t>(times) > max_bytes / 8 / items.size()) {
    return limit_error("a list repeated by * would pass the size limit");
  }
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<size_t>(times));
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::sequence(std::move(out), sequence.is_tuple() ? ListFlavor::kTuple : ListFlavor::kList);
}

bool is_plain_sequence(const Value& v) { return v.is_list() || v.is_tuple(); }

}  // namespace

Result<Value> binary_operation(BinaryOp op, const Value& a, const Value& b, size_t max_bytes) {
  if (a.is_undefined()) return undefined_failure(a);
  if (op == BinaryOp::kMod && a.is_string()) {
    SINTER_ASSIGN(std::string formatted, percent_format(a.as_string(), b));
    return Value(std::move(formatted));
  }
  if (b.is_undefined()) return undefined_failure(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return integer_operation(op, a.as_int(), b.as_int());
    return float_operation(op, a.as_float(), b.as_float());
  }
  switch (op) {
    case BinaryOp::kAdd:
      if (a.is_string()) {
        if (!b.is_string())
          return type_error(concat("can only concatenate str (not \"", type_name(b), "\") to str"));
        if (a.as_string().size() + b.as_string().size() > max_bytes) {
          return limit_error("a string built by + would pass the output size limit");
        }
        return Value(a.as_string() + b.as_string());
      }
      if (is_plain_sequence(a)) {
        if (!is_plain_sequence(b) || a.is_tuple() != b.is_tuple()) {
          std::string kind = type_name(a);
          return type_error(concat("can only concatenate ", kind, " (not \"", type_name(b), "\") to ", kind));
        }
        std::vector<Value> items = a.items();
        items.insert(items.end(), b.items().begin(), b.items().end());
        return Value::sequence(std::move(items), a.is_tuple() ? ListFlavor::kTuple : ListFlavor::kList);
      }
      return unsupported(op, a, b);
    case BinaryOp::kMul: {
      bool a_sequence = a.is_string() || is_plain_sequence(a);
      bool b_sequence = b.is_string() || is_plain_sequence(b);
      if (a_sequence && b.is_integral()) return repeat(a, b.as_int(), max_bytes);
      if (b_sequence && a.is_integral()) return repeat(b, a.as_int(), max_bytes);
      if (a_sequence && !b_sequence)
        return type_error(concat("can't multiply sequence by non-int of type '", type_name(b), "'"));
      if (b_sequence && !a_sequence)
        return type_error(concat("can't multiply sequence by non-int of type '", type_name(a), "'"));
      return unsupported(op, a, b);
    }
    default: return unsupported(op, a, b);
  }
}

Result<Value> negate(const Value& value) {
  if (value.is_undefined()) return undefined_failure(value);
  if (value.is_integral()) {
    if (value.as_int() == INT64_MIN) return integer_overflow();
    return Value(-value.as_int());
  }
  if (value.is_float()) return Value(-value.as_float());
  return type_error(concat("bad operand type for unary -: '", type_name(value), "'"));
}

Result<Value> unary_plus(const Value& value) {
  if (value.is_undefined()) return undefined_failure(value);
  if (value.is_integral()) return Value(value.as_int());
  if (value.is_float()) return value;
  return type_error(concat("bad operand type for unary +: '", type_name(value), "'"));
}

namespace {

struct PercentSpec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char conversion = 0;
};

std::string pad(std::string text, const PercentSpec& spec) {
  size_t length = py::length(text);
  if (spec.width < 0 || length >= static_cast<size_t>(spec.width)) return text;
  std::string padding(static_cast<size_t>(spec.width) - length, ' ');
  return spec.flags.find('-') != std::string::npos ? text + padding : padding + text;
}

Result<std::string> format_one(const PercentSpec& spec, const Value& value) {
  char conversion = spec.conversion;
  std::string c_format = "%" + spec.flags;
  if (spec.width >= 0) c_format += std::to_string(spec.width);
  if (spec.precision >= 0) c_format += concat(".", spec.precision);
  char buffer[512];
  switch (conversion) {
    case 's':
    case 'r':
    case 'a': {
      std::string text = conversion == 's' ? to_str(value) : repr(value);
      if (spec.precision >= 0)
        text = py::encode(py::decode(text).substr(0, static_cast<size_t>(spec.precision)));
      return pad(std::move(text), spec);
    }
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      int64_t n = 0;
      if (value.is_integral()) {
        n = value.as_int();
      } else if (value.is_float() && (conversion == 'd' || conversion == 'i' || conversion == 'u')) {
        double f = value.as_float();
        if (!std::isfinite(f)) return overflow_error("cannot convert float infinity or NaN to integer");
        n = static_cast<int64_t>(f);
      } else {
        bool decimal = conversion == 'd' || conversion == 'i' || conversion == 'u';
        return type_error(concat("%", conversion, " format: ", decimal ? "a real number" : "an integer",
                                 " is required, not ", type_name(value)));
      }
      // Digits of the magnitude, then sign and prefix, then padding: Python's rules, which
      // differ from C's for negative hex/octal numbers and for the '#' prefixes.
      auto has = [&](char flag) { return spec.flags.find(flag) != std::string::npos; };
      uint64_t magnitude =
          n < 0 ? static_cast<uint64_t>(0) - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
      const char* digit_format = conversion == 'x'   ? "%llx"
                                 : conversion == 'X' ? "%llX"
                                 : conversion == 'o' ? "%llo"
                                                     : "%llu";
      std::snprintf(buffer, sizeof buffer, digit_format, static_cast<unsigned long long>(magnitude));
      std::string digits = buffer;
      if (spec.precision >= 0 && digits.size() < static_cast<size_t>(spec.precision)) {
        digits.insert(0, static_cast<size_t>(spec.precision) - digits.size(), '0');
      }
      std::string sign = n < 0 ? "-" : has('+') ? "+" : has(' ') ? " " : "";
      if (has('#') && conversion != 'd' && conversion != 'i' && conversion != 'u') {
        sign += conversion == 'o' ? "0o" : conversion == 'x' ? "0x" : "0X";
      }
      size_t length = sign.size() + digits.size();
      size_t width = spec.width > 0 ? static_cast<size_t>(spec.width) : 0;
      if (length >= width) return sign + digits;
      if (has('-')) return sign + digits + std::string(width - length, ' ');
      if (has('0')) return sign + std::string(width - length, '0') + digits;
      return std::string(width - length, ' ') + sign + digits;
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      if (!value.is_number()) return type_error(concat("must be real number, not ", type_name(value)));
      std::snprintf(buffer, sizeof buffer, (c_format + conversion).c_str(), value.as_float());
      return std::string(buffer);
    }
    case 'c': {
      if (value.is_string() && py::length(value.as_string()) == 1) return pad(value.as_string(), spec);
      if (!value.is_integral()) return type_error("%c requires int or char");
      int64_t code = value.as_int();
      if (code < 0 || code > 0x10FFFF) return overflow_error("%c arg not in range(0x110000)");
      std::string text;
      py::append_code_point(&text, static_cast<char32_t>(code));
      return pad(std::move(text), spec);
    }
    default: break;
  }
  return value_error(concat("unsupported format character '", conversion, "'"));
}

}  // namespace

Result<std::string> percent_format(const std::string& format, const Value& args) {
  std::vector<Value> positional;
  bool mapping = args.is_dict();
  if (args.is_tuple()) {
    positional = args.items();
  } else {
    positional.push_back(args);
  }
  size_t next_arg = 0;
  auto take = [&]() -> Result<Value> {
    if (next_arg >= positional.size()) return type_error("not enough arguments for format string");
    return positional[next_arg++];
  };
  std::string out;
  size_t i = 0;
  while (i < format.size()) {
    char c = format[i++];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i >= format.size()) return value_error("incomplete format");
    if (format[i] == '%') {
      out += '%';
      ++i;
      continue;
    }
    std::optional<Value> keyed;
    if (format[i] == '(') {
      if (!mapping) return type_error("format requires a mapping");
      size_t close = format.find(')', i);
      if (close == std::string::npos) return value_error("incomplete format key");
      const Value* found = args.as_dict().find(std::string_view(format).substr(i + 1, close - i - 1));
      if (!found) return key_error(py::repr(format.substr(i + 1, close - i - 1)));
      keyed = *found;
      i = close + 1;
    }
    PercentSpec spec;
    while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos) {
      spec.flags += format[i++];
    }
    auto read_number = [&](int* target) -> Status {
      if (i < format.size() && format[i] == '*') {
        ++i;
        SINTER_ASSIGN(Value n, take());
        if (!n.is_integral()) return type_error("* wants int");
        *target = static_cast<int>(std::min<int64_t>(n.as_int(), 4096));
        return ok_status();
      }
      if (i < format.size() && format[i] >= '0' && format[i] <= '9') {
        int n = 0;
        while (i < format.size() && format[i] >= '0' && format[i] <= '9')
          n = std::min(n * 10 + (format[i++] - '0'), 4096);
        *target = n;
      }
      return ok_status();
    };
    SINTER_TRY(read_number(&spec.width));
    if (i < format.size() && format[i] == '.') {
      ++i;
      spec.precision = 0;
      SINTER_TRY(read_number(&spec.precision));
    }
    while (i < format.size() && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
    if (i >= format.size()) return value_error("incomplete format");
    spec.conversion = format[i++];
    if (std::string_view("sradiuxXoeEfFgGc").find(spec.conversion) == std::string_view::npos) {
      return value_error(concat("unsupported format character '", spec.conversion, "' (0x", std::hex,
                                static_cast<int>(static_cast<unsigned char>(spec.conversion)), ") at index ",
                                std::dec, i - 1));
    }
    Value value;
    if (keyed) {
      value = *keyed;
    } else {
      SINTER_ASSIGN(value, take());
    }
    if (value.is_undefined() && spec.conversion != 's') return undefined_failure(value);
    SINTER_ASSIGN(std::string piece, format_one(spec, value));
    out += piece;
  }
  if (!mapping && next_arg < positional.size()) {
    return type_error("not all arguments converted during string formatting");
  }
  return out;
}

}  // namespace sinter::chat::jinja
