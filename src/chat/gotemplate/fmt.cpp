// Go's fmt (print.go, format.go) for the value model of value.h. The structure follows Go's
// printer: printArg switches on the dynamic type, handleMethods calls String(), printValue walks
// composite values, and the fmt* helpers apply width, precision and flags.
#include "chat/gotemplate/fmt.h"

#include <utf8proc.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/gotemplate/json.h"
#include "chat/gotemplate/strconv.h"
#include "core/utf8.h"

namespace sinter::chat::gotemplate {
namespace {

constexpr int kTooLarge = 1000000;  // fmt's limit on widths and precisions
const char* const kLowerHex = "0123456789abcdef";
const char* const kUpperHex = "0123456789ABCDEF";

size_t rune_count(std::string_view s) {
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) utf8_decode(s, &pos);
  return n;
}

struct Flags {
  bool plus = false, minus = false, sharp = false, space = false, zero = false;
  bool plus_v = false, sharp_v = false;
  bool wid_present = false, prec_present = false;
  int wid = 0, prec = 0;
};

class Printer {
 public:
  std::string buf;
  Flags f;

  void print_arg(const Value& arg, char32_t verb);
  void do_print(const std::vector<Value>& args, bool line);
  void do_printf(std::string_view format, const std::vector<Value>& args);

 private:
  bool erroring_ = false;

  void write_padding(int n) {
    if (n <= 0) return;
    buf.append(static_cast<size_t>(n), f.zero ? '0' : ' ');
  }
  void pad(std::string_view s) {
    if (!f.wid_present || f.wid == 0) {
      buf.append(s);
      return;
    }
    int width = f.wid - static_cast<int>(rune_count(s));
    if (!f.minus) {
      write_padding(width);
      buf.append(s);
    } else {
      buf.append(s);
      write_padding(width);
    }
  }
  std::string truncate(std::string_view s) const {
    if (!f.prec_present) return std::string(s);
    size_t pos = 0;
    for (int n = 0; n < f.prec && pos < s.size(); ++n) utf8_decode(s, &pos);
    return std::string(s.substr(0, pos));
  }

  bool handle_methods(const Value& v, char32_t verb);
  void print_value(const Value& v, char32_t verb, int depth);
  void bad_verb(char32_t verb, const Value& arg, bool have_arg);
  void fmt_bool(bool b, char32_t verb, const Value& arg);
  void fmt_integer(uint64_t u, bool is_signed, char32_t verb, const Value& arg);
  void fmt_integer_base(uint64_t u, int base, bool is_signed, char32_t verb, const char* digits);
  void fmt_float(double v, char32_t verb, const Value& arg);
  void fmt_float_with(double v, char verb, int prec);
  void fmt_string(const std::string& s, char32_t verb, const Value& arg);
  void fmt_hex_bytes(std::string_view s, const char* digits);
  void fmt_quote(const std::string& s);
  void fmt_bytes(const std::string& bytes, char32_t verb, const Value& arg);
};

// fmt's badVerb: %!verb(type=value).
void Printer::bad_verb(char32_t verb, const Value& arg, bool have_arg) {
  erroring_ = true;
  buf += "%!";
  utf8_append(&buf, verb);
  buf += '(';
  if (have_arg && arg.valid()) {
    buf += arg.type()->name;
    buf += '=';
    print_arg(arg, 'v');
  } else {
    buf += "<nil>";
  }
  buf += ')';
  erroring_ = false;
}

void Printer::fmt_bool(bool b, char32_t verb, const Value& arg) {
  if (verb == 't' || verb == 'v') {
    pad(b ? "true" : "false");
  } else {
    bad_verb(verb, arg, true);
  }
}

void Printer::fmt_integer_base(uint64_t u, int base, bool is_signed, char32_t verb, const char* digits) {
  bool negative = is_signed && static_cast<int64_t>(u) < 0;
  if (negative) u = -u;
  int prec = 0;
  if (f.prec_present) {
    prec = f.prec;
    if (prec == 0 && u == 0) {  // precision 0 and value 0 print nothing but padding
      bool old_zero = f.zero;
      f.zero = false;
      write_padding(f.wid);
      f.zero = old_zero;
      return;
    }
  } else if (f.zero && f.wid_present) {
    prec = f.wid;
    if (negative || f.plus || f.space) --prec;  // room for the sign
  }
  std::string digits_rev;
  do {
    digits_rev += digits[u % static_cast<unsigned>(base)];
    u /= static_cast<unsigned>(base);
  } while (u != 0);
  while (static_cast<int>(digits_rev.size()) < prec) digits_rev += '0';
  if (f.sharp) {
    if (base == 2) digits_rev += "b0";
    if (base == 8 && digits_rev.back() != '0') digits_rev += '0';
    if (base == 16) {
      digits_rev += digits == kUpperHex ? 'X' : 'x';
      digits_rev += '0';
    }
  }
  if (verb == 'O') digits_rev += "o0";
  if (negative) {
    digits_rev += '-';
  } else if (f.plus) {
    digits_rev += '+';
  } else if (f.space) {
    digits_rev += ' ';
  }
  std::string out(digits_rev.rbegin(), digits_rev.rend());
  bool old_zero = f.zero;
  f.zero = false;
  pad(out);
  f.zero = old_zero;
}

void Printer::fmt_integer(uint64_t u, bool is_signed, char32_t verb, const Value& arg) {
  switch (verb) {
    case 'v':
    case 'd': fmt_integer_base(u, 10, is_signed, verb, kLowerHex); return;
    case 'b': fmt_integer_base(u, 2, is_signed, verb, kLowerHex); return;
    case 'o':
    case 'O': fmt_integer_base(u, 8, is_signed, verb, kLowerHex); return;
    case 'x': fmt_integer_base(u, 16, is_signed, verb, kLowerHex); return;
    case 'X': fmt_integer_base(u, 16, is_signed, verb, kUpperHex); return;
    case 'c': {
      char32_t r = u > 0x10FFFF ? 0xFFFD : static_cast<char32_t>(u);
      std::string s;
      utf8_append(&s, r);
      pad(s);
      return;
    }
    case 'q': {
      char32_t r = u > 0x10FFFF ? 0xFFFD : static_cast<char32_t>(u);
      pad(go_quote_rune(r));
      return;
    }
    case 'U': {
      char tmp[32];
      std::snprintf(tmp, sizeof tmp, "U+%04llX", static_cast<unsigned long long>(u));
      std::string s = tmp;
      if (f.sharp && u <= 0x10FFFF && go_is_print(static_cast<char32_t>(u))) {
        s += " '";
        utf8_append(&s, static_cast<char32_t>(u));
        s += "'";
      }
      pad(s);
      return;
    }
    default: bad_verb(verb, arg, true);
  }
}

// format.go's fmtFloat for 'e', 'E', 'f', 'g', 'G' with prec -1 (shortest) or a precision.
void Printer::fmt_float_with(double v, char verb, int prec) {
  if (f.prec_present) prec = f.prec;
  std::string num;
  if (std::isnan(v)) {
    num = f.plus ? "+NaN" : (f.space ? " NaN" : "NaN");
  } else if (std::isinf(v)) {
    num = v < 0 ? "-Inf" : (f.plus ? "+Inf" : (f.space ? " Inf" : "Inf"));
  }
  if (!num.empty()) {
    bool old_zero = f.zero;
    f.zero = false;
    pad(num);
    f.zero = old_zero;
    return;
  }
  std::string body;
  char lower = static_cast<char>(verb | 0x20);
  if (prec < 0) {
    body = go_format_float_shortest(v, lower);
  } else {
    char spec[8] = {'%', '.', '*', lower, 0};
    char tmp[400];
    int n = std::snprintf(tmp, sizeof tmp, spec, prec, v);
    if (n < 0) n = 0;
    if (n >= static_cast<int>(sizeof tmp)) {
      std::string big(static_cast<size_t>(n) + 1, '\0');
      std::snprintf(big.data(), big.size(), spec, prec, v);
      big.resize(static_cast<size_t>(n));
      body = big;
    } else {
      body.assign(tmp, static_cast<size_t>(n));
    }
  }
  if (verb == 'E' || verb == 'G') {
    for (char& c : body) {
      if (c == 'e') c = 'E';
    }
  }
  // Sign handling: num[0] is the sign ('+' when positive).
  if (body[0] == '-' || body[0] == '+') {
    num = body;
  } else {
    num = "+" + body;
  }
  if (f.space && num[0] == '+' && !f.plus) num[0] = ' ';
  if (f.plus || num[0] != '+') {
    if (f.zero && f.wid_present && f.wid > static_cast<int>(num.size())) {
      buf += num[0];
      write_padding(f.wid - static_cast<int>(num.size()));
      buf.append(num, 1);
      return;
    }
    pad(num);
    return;
  }
  pad(std::string_view(num).substr(1));
}

void Printer::fmt_float(double v, char32_t verb, const Value& arg) {
  switch (verb) {
    case 'v': fmt_float_with(v, 'g', -1); return;
    case 'g':
    case 'G': fmt_float_with(v, static_cast<char>(verb), -1); return;
    case 'f':
    case 'e':
    case 'E': fmt_float_with(v, static_cast<char>(verb), 6); return;
    case 'F': fmt_float_with(v, 'f', 6); return;
    default: bad_verb(verb, arg, true);
  }
}

void Printer::fmt_hex_bytes(std::string_view s, const char* digits) {
  size_t length = s.size();
  if (f.prec_present && static_cast<size_t>(f.prec) < length) length = static_cast<size_t>(f.prec);
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    if (f.space && i > 0) out += ' ';
    if (f.sharp && (f.space || i == 0)) {
      out += '0';
      out += digits == kUpperHex ? 'X' : 'x';
    }
    auto b = static_cast<unsigned char>(s[i]);
    out += digits[b >> 4];
    out += digits[b & 0xF];
  }
  pad(out);
}

void Printer::fmt_quote(const std::string& s) {
  std::string t = truncate(s);
  if (f.sharp && t.find('`') == std::string::npos) {
    bool can_backquote = true;
    for (size_t pos = 0; pos < t.size();) {
      size_t width = 0;
      char32_t r = go_decode_rune(t, pos, &width);
      if ((width == 1 && r == 0xFFFD) || (r < ' ' && r != '\t') || r == 0x7F || r == 0xFEFF) {
        can_backquote = false;
        break;
      }
      pos += width;
    }
    if (can_backquote) {
      pad("`" + t + "`");
      return;
    }
  }
  pad(go_quote(t));
}

void Printer::fmt_string(const std::string& s, char32_t verb, const Value& arg) {
  switch (verb) {
    case 'v':
      if (f.sharp_v) {
        fmt_quote(s);
      } else {
        pad(truncate(s));
      }
      return;
    case 's': pad(truncate(s)); return;
    case 'x': fmt_hex_bytes(s, kLowerHex); return;
    case 'X': fmt_hex_bytes(s, kUpperHex); return;
    case 'q': fmt_quote(s); return;
    default: bad_verb(verb, arg, true);
  }
}

void Printer::fmt_bytes(const std::string& bytes, char32_t verb, const Value& arg) {
  switch (verb) {
    case 's': pad(truncate(bytes)); return;
    case 'x': fmt_hex_bytes(bytes, kLowerHex); return;
    case 'X': fmt_hex_bytes(bytes, kUpperHex); return;
    case 'q': fmt_quote(bytes); return;
    default: print_value(arg, verb, 1);  // element by element
  }
}

// Calls String() for the verbs that use it; true when it did.
bool Printer::handle_methods(const Value& v, char32_t verb) {
  if (erroring_ || !v.valid() || v.type()->stringer == Stringer::kNone) return false;
  if (f.sharp_v) return false;
  if (verb != 'v' && verb != 's' && verb != 'x' && verb != 'X' && verb != 'q') return false;
  fmt_string(stringer_text(v), verb, v);
  return true;
}

void Printer::print_value(const Value& v, char32_t verb, int depth) {
  if (depth > 0 && v.valid() && handle_methods(v, verb)) return;
  switch (v.kind()) {
    case Kind::kInvalid:
      if (depth == 0) {
        buf += "<invalid reflect.Value>";
      } else if (verb == 'v') {
        buf += "<nil>";
      } else {
        bad_verb(verb, v, false);
      }
      return;
    case Kind::kBool: fmt_bool(v.as_bool(), verb, v); return;
    case Kind::kInt: fmt_integer(static_cast<uint64_t>(v.as_int()), true, verb, v); return;
    case Kind::kUint8: fmt_integer(static_cast<uint64_t>(v.as_int()), false, verb, v); return;
    case Kind::kFloat: fmt_float(v.as_float(), verb, v); return;
    case Kind::kString: fmt_string(v.as_string(), verb, v); return;
    case Kind::kMap: {
      buf += "map[";
      bool first = true;
      for (const auto& [key, value] : v.entries()) {
        if (!first) buf += ' ';
        first = false;
        print_value(Value::string(key), verb, depth + 1);
        buf += ':';
        print_value(value, verb, depth + 1);
      }
      buf += ']';
      return;
    }
    case Kind::kStruct: {
      buf += '{';
      for (size_t i = 0; i < v.type()->fields.size(); ++i) {
        if (i > 0) buf += ' ';
        if (f.plus_v) {
          buf += v.type()->fields[i].name;
          buf += ':';
        }
        const Value& field = v.field(i);
        if (field.kind() == Kind::kInterface && !field.is_nil()) {
          print_value(field.elem(), verb, depth + 1);
        } else {
          print_value(field, verb, depth + 1);
        }
      }
      buf += '}';
      return;
    }
    case Kind::kInterface:
      if (v.is_nil()) {
        buf += "<nil>";
      } else {
        print_value(v.elem(), verb, depth + 1);
      }
      return;
    case Kind::kSlice:
      if (v.type()->is_bytes() && (verb == 's' || verb == 'q' || verb == 'x' || verb == 'X')) {
        fmt_bytes(v.is_nil() ? std::string() : v.as_string(), verb, v);
        return;
      }
      buf += '[';
      for (size_t i = 0; i < v.len(); ++i) {
        if (i > 0) buf += ' ';
        print_value(v.index(i), verb, depth + 1);
      }
      buf += ']';
      return;
    case Kind::kPointer:
      if (depth == 0 && !v.is_nil()) {
        Kind target = v.elem().kind();
        if (target == Kind::kSlice || target == Kind::kStruct || target == Kind::kMap) {
          buf += '&';
          print_value(v.elem(), verb, depth + 1);
          return;
        }
      }
      // fmtPointer: Go prints the address, which has no stable value; nil prints <nil>.
      if (verb == 'v' && v.is_nil()) {
        pad("<nil>");
      } else if (verb == 'v' || verb == 'p' || verb == 'x' || verb == 'X' || verb == 'd') {
        pad("0xc000010000");
      } else {
        bad_verb(verb, v, true);
      }
      return;
  }
}

void Printer::print_arg(const Value& arg_in, char32_t verb) {
  Value arg = as_any(arg_in);
  if (!arg.valid()) {
    if (verb == 'T' || verb == 'v') {
      pad("<nil>");
    } else {
      bad_verb(verb, arg, false);
    }
    return;
  }
  if (verb == 'T') {
    pad(arg.type()->name);
    return;
  }
  const BasicTypes& basic = basic_types();
  const Type* type = arg.type();
  if (type == &basic.bool_t) return fmt_bool(arg.as_bool(), verb, arg);
  if (type == &basic.float64_t) return fmt_float(arg.as_float(), verb, arg);
  if (type == &basic.int_t) return fmt_integer(static_cast<uint64_t>(arg.as_int()), true, verb, arg);
  if (type == &basic.byte_t) return fmt_integer(static_cast<uint64_t>(arg.as_int()), false, verb, arg);
  if (type == &basic.string_t) return fmt_string(arg.as_string(), verb, arg);
  if (!handle_methods(arg, verb)) print_value(arg, verb, 0);
}

void Printer::do_print(const std::vector<Value>& args, bool line) {
  bool prev_string = false;
  for (size_t i = 0; i < args.size(); ++i) {
    Value arg = as_any(args[i]);
    bool is_string = arg.kind() == Kind::kString;
    if (i > 0 && (line || (!is_string && !prev_string))) buf += ' ';
    print_arg(arg, 'v');
    prev_string = is_string;
  }
  if (line) buf += '\n';
}

// parsenum: digits at s[start:end]; a number over fmt's limit swallows the rest.
bool parse_num(std::string_view s, size_t start, size_t end, int* num, size_t* next) {
  *num = 0;
  bool is_num = false;
  size_t i = start;
  if (start >= end) {
    *next = end;
    return false;
  }
  for (; i < end && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (*num > kTooLarge) {
      *num = 0;
      *next = end;
      return false;
    }
    *num = *num * 10 + (s[i] - '0');
    is_num = true;
  }
  *next = i;
  return is_num;
}

void Printer::do_printf(std::string_view format, const std::vector<Value>& args) {
  size_t end = format.size();
  size_t arg_num = 0;
  bool after_index = false;
  bool reordered = false;
  bool good_arg_num = true;
  // argNumber: an explicit [n] argument index at format[i].
  auto arg_number = [&](size_t* i) {
    if (*i >= end || format[*i] != '[') return false;
    reordered = true;
    size_t close = format.find(']', *i + 1);
    if (end - *i < 3 || close == std::string_view::npos) {
      good_arg_num = false;
      *i += 1;
      return false;
    }
    int index = 0;
    size_t next = 0;
    bool ok = parse_num(format, *i + 1, close, &index, &next) && next == close;
    *i = close + 1;
    if (ok && index >= 1 && static_cast<size_t>(index - 1) < args.size()) {
      arg_num = static_cast<size_t>(index - 1);
      return true;
    }
    good_arg_num = false;
    return ok;
  };
  auto int_from_arg = [&](int* out) {
    bool is_int = false;
    *out = 0;
    if (arg_num < args.size()) {
      Value a = as_any(args[arg_num]);
      if (a.kind() == Kind::kInt || a.kind() == Kind::kUint8) {
        int64_t n = a.as_int();
        if (n >= -kTooLarge && n <= kTooLarge) {
          *out = static_cast<int>(n);
          is_int = true;
        }
      }
      ++arg_num;
    }
    return is_int;
  };

  for (size_t i = 0; i < end;) {
    good_arg_num = true;
    size_t last = i;
    while (i < end && format[i] != '%') ++i;
    if (i > last) buf.append(format.substr(last, i - last));
    if (i >= end) break;
    ++i;  // the '%'
    f = Flags{};
    bool simple_done = false;
    for (; i < end; ++i) {
      char c = format[i];
      if (c == '#') {
        f.sharp = true;
      } else if (c == '0') {
        f.zero = !f.minus;
      } else if (c == '+') {
        f.plus = true;
      } else if (c == '-') {
        f.minus = true;
        f.zero = false;
      } else if (c == ' ') {
        f.space = true;
      } else {
        if (c >= 'a' && c <= 'z' && arg_num < args.size()) {  // fast path: flags and a verb
          if (c == 'v') {
            f.sharp_v = f.sharp;
            f.sharp = false;
            f.plus_v = f.plus;
            f.plus = false;
          }
          print_arg(args[arg_num], static_cast<char32_t>(c));
          ++arg_num;
          ++i;
          simple_done = true;
        }
        break;
      }
    }
    if (simple_done) continue;

    after_index = arg_number(&i);
    if (i < end && format[i] == '*') {
      ++i;
      f.wid_present = int_from_arg(&f.wid);
      if (!f.wid_present) buf += "%!(BADWIDTH)";
      if (f.wid < 0) {
        f.wid = -f.wid;
        f.minus = true;
        f.zero = false;
      }
      after_index = false;
    } else {
      f.wid_present = parse_num(format, i, end, &f.wid, &i);
      if (after_index && f.wid_present) good_arg_num = false;
    }
    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (after_index) good_arg_num = false;
      after_index = arg_number(&i);
      if (i < end && format[i] == '*') {
        ++i;
        f.prec_present = int_from_arg(&f.prec);
        if (f.prec < 0) {
          f.prec = 0;
          f.prec_present = false;
        }
        if (!f.prec_present) buf += "%!(BADPREC)";
        after_index = false;
      } else {
        f.prec_present = parse_num(format, i, end, &f.prec, &i);
        if (!f.prec_present) {
          f.prec = 0;
          f.prec_present = true;
        }
      }
    }
    if (!after_index) after_index = arg_number(&i);
    if (i >= end) {
      buf += "%!(NOVERB)";
      break;
    }
    size_t width = 1;
    auto verb = static_cast<char32_t>(static_cast<unsigned char>(format[i]));
    if (verb >= 0x80) verb = go_decode_rune(format, i, &width);
    i += width;
    if (verb == '%') {
      buf += '%';
    } else if (!good_arg_num) {
      buf += "%!";
      utf8_append(&buf, verb);
      buf += "(BADINDEX)";
    } else if (arg_num >= args.size()) {
      buf += "%!";
      utf8_append(&buf, verb);
      buf += "(MISSING)";
    } else {
      if (verb == 'v') {
        f.sharp_v = f.sharp;
        f.sharp = false;
        f.plus_v = f.plus;
        f.plus = false;
      }
      print_arg(args[arg_num], verb);
      ++arg_num;
    }
  }
  if (!reordered && arg_num < args.size()) {
    f = Flags{};
    buf += "%!(EXTRA ";
    for (size_t k = arg_num; k < args.size(); ++k) {
      if (k > arg_num) buf += ", ";
      Value a = as_any(args[k]);
      if (!a.valid()) {
        buf += "<nil>";
      } else {
        buf += a.type()->name;
        buf += '=';
        print_arg(a, 'v');
      }
    }
    buf += ')';
  }
}

}  // namespace

std::string go_sprint(const std::vector<Value>& args) {
  Printer p;
  p.do_print(args, false);
  return p.buf;
}

std::string go_sprintln(const std::vector<Value>& args) {
  Printer p;
  p.do_print(args, true);
  return p.buf;
}

std::string go_sprintf(std::string_view format, const std::vector<Value>& args) {
  Printer p;
  p.do_printf(format, args);
  return p.buf;
}

}  // namespace sinter::chat::gotemplate
