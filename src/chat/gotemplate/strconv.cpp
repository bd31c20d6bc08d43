// Go's strconv for the template engine: quoting strings and runes as strconv.Quote does, the
// printable-rune test, and the shortest float formatting of FormatFloat(f, fmt, -1, 64).
#include "chat/gotemplate/strconv.h"

#include <utf8proc.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/utf8.h"

namespace sinter::chat::gotemplate {
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_escaped_rune(std::string* out, char32_t r, char quote) {
  if (r == static_cast<char32_t>(quote) || r == '\\') {
    *out += '\\';
    *out += static_cast<char>(r);
    return;
  }
  if (go_is_print(r)) {
    utf8_append(out, r);
    return;
  }
  switch (r) {
    case '\a': *out += "\\a"; return;
    case '\b': *out += "\\b"; return;
    case '\f': *out += "\\f"; return;
    case '\n': *out += "\\n"; return;
    case '\r': *out += "\\r"; return;
    case '\t': *out += "\\t"; return;
    case '\v': *out += "\\v"; return;
    default: break;
  }
  char tmp[16];
  if (r < ' ' || r == 0x7F) {
    std::snprintf(tmp, sizeof tmp, "\\x%02x", static_cast<unsigned>(r));
  } else if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) {
    std::snprintf(tmp, sizeof tmp, "\\u%04x", 0xFFFDu);
  } else if (r < 0x10000) {
    std::snprintf(tmp, sizeof tmp, "\\u%04x", static_cast<unsigned>(r));
  } else {
    std::snprintf(tmp, sizeof tmp, "\\U%08x", static_cast<unsigned>(r));
  }
  *out += tmp;
}

}  // namespace

// Decodes like Go's utf8.DecodeRuneInString: invalid bytes give U+FFFD with width 1.
char32_t go_decode_rune(std::string_view s, size_t pos, size_t* width) {
  size_t next = pos;
  char32_t r = utf8_decode(s, &next);
  *width = next - pos;
  return r;
}

bool go_is_print(char32_t r) {
  if (r < 0x80) return r >= 0x20 && r < 0x7F;
  if (r > 0x10FFFF) return false;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(r))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO: return true;
    default: return false;
  }
}

std::string go_quote(std::string_view s) {
  std::string out = "\"";
  for (size_t pos = 0; pos < s.size();) {
    size_t width = 0;
    char32_t r = go_decode_rune(s, pos, &width);
    if (width == 1 && r == 0xFFFD && static_cast<unsigned char>(s[pos]) >= 0x80) {
      auto b = static_cast<unsigned char>(s[pos]);
      out += "\\x";
      out += kLowerHex[b >> 4];
      out += kLowerHex[b & 0xF];
    } else {
      append_escaped_rune(&out, r, '"');
    }
    pos += width;
  }
  out += '"';
  return out;
}

std::string go_quote_rune(char32_t r) {
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = 0xFFFD;
  std::string out = "'";
  append_escaped_rune(&out, r, '\'');
  out += '\'';
  return out;
}

std::string go_format_float_shortest(double f, char fmt) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f < 0 ? "-Inf" : "+Inf";
  // Shortest round-trip digits and decimal exponent, from the scientific form "d.ddde±x".
  std::array<char, 64> tmp{};
  auto [end, ec] = std::to_chars(tmp.data(), tmp.data() + tmp.size(), f, std::chars_format::scientific);
  std::string sci(tmp.data(), end);
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  int exp = std::stoi(sci.substr(e + 1));
  bool zero = f == 0;
  if (zero) digits.assign(1, '0');
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int dp = zero ? 1 : exp + 1;  // position of the decimal point after digits[0..dp)
  int nd = static_cast<int>(digits.size());

  auto format_e = [&]() {
    std::string out;
    if (negative) out += '-';
    out += digits[0];
    if (nd > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    int x = zero ? 0 : dp - 1;
    out += x < 0 ? '-' : '+';
    if (x < 0) x = -x;
    if (x < 10) out += '0';
    out += std::to_string(x);
    return out;
  };
  auto format_f = [&]() {
    std::string out;
    if (negative) out += '-';
    if (dp > 0) {
      for (int i = 0; i < dp; ++i) out += i < nd ? digits[static_cast<size_t>(i)] : '0';
    } else {
      out += '0';
    }
    if (nd > dp) {
      out += '.';
      for (int i = dp; i < nd; ++i) out += i < 0 ? '0' : digits[static_cast<size_t>(i)];
    }
    return out;
  };
  if (fmt == 'e') return format_e();
  if (fmt == 'f') return format_f();
  int x = zero ? 0 : dp - 1;
  int eprec = 6;  // shortest %g: strconv decides with precision 6
  if (x < -4 || x >= eprec) return format_e();
  return format_f();
}

// strconv.UnquoteChar: one (possibly escaped) character of a quoted literal at s[*i].
bool go_unquote_char(std::string_view s, size_t* i, char quote, std::string* out) {
  auto c = static_cast<unsigned char>(s[*i]);
  if (c == static_cast<unsigned char>(quote) && (quote == '\'' || quote == '"')) return false;
  if (c >= 0x80) {
    size_t next = *i;
    utf8_decode(s, &next);
    out->append(s.substr(*i, next - *i));
    *i = next;
    return true;
  }
  if (c != '\\') {
    *out += static_cast<char>(c);
    ++*i;
    return true;
  }
  if (*i + 1 >= s.size()) return false;
  char e = s[*i + 1];
  *i += 2;
  switch (e) {
    case 'a': *out += '\a'; return true;
    case 'b': *out += '\b'; return true;
    case 'f': *out += '\f'; return true;
    case 'n': *out += '\n'; return true;
    case 'r': *out += '\r'; return true;
    case 't': *out += '\t'; return true;
    case 'v': *out += '\v'; return true;
    case '\\': *out += '\\'; return true;
    case '\'':
    case '"':
      if (e != quote) return false;
      *out += e;
      return true;
    case 'x':
    case 'u':
    case 'U': {
      size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (*i + n > s.size()) return false;
      uint32_t v = 0;
      for (size_t k = 0; k < n; ++k) {
        int h = hex_value(s[*i + k]);
        if (h < 0) return false;
        v = v * 16 + static_cast<uint32_t>(h);
      }
      *i += n;
      if (e == 'x') {
        *out += static_cast<char>(v);
        return true;
      }
      if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
      utf8_append(out, v);
      return true;
    }
    default:
      if (e >= '0' && e <= '7') {
        if (*i + 2 > s.size()) return false;
        uint32_t v = static_cast<uint32_t>(e - '0');
        for (size_t k = 0; k < 2; ++k) {
          char d = s[*i + k];
          if (d < '0' || d > '7') return false;
          v = v * 8 + static_cast<uint32_t>(d - '0');
        }
        if (v > 255) return false;
        *i += 2;
        *out += static_cast<char>(v);
        return true;
      }
      return false;
  }
}

bool go_underscore_ok(std::string_view s) {
  char saw = '^';
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0') {
    char b = static_cast<char>(s[1] | 0x20);
    if (b == 'b' || b == 'o' || b == 'x') {
      i = 2;
      saw = '0';
      hex = b == 'x';
    }
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    char lc = static_cast<char>(c | 0x20);
    if ((c >= '0' && c <= '9') || (hex && lc >= 'a' && lc <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

// strconv.ParseUint(s, 0, 64) / ParseInt(s, 0, 64).
bool go_parse_integer(std::string_view s, bool is_signed, uint64_t* magnitude, bool* negative) {
  *negative = false;
  if (s.empty()) return false;
  if (is_signed && (s[0] == '+' || s[0] == '-')) {
    *negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int base = 10;
  bool prefixed = false;
  if (s[0] == '0') {
    if (s.size() >= 3 && (s[1] | 0x20) == 'x') {
      base = 16;
      s.remove_prefix(2);
      prefixed = true;
    } else if (s.size() >= 3 && (s[1] | 0x20) == 'o') {
      base = 8;
      s.remove_prefix(2);
      prefixed = true;
    } else if (s.size() >= 3 && (s[1] | 0x20) == 'b') {
      base = 2;
      s.remove_prefix(2);
      prefixed = true;
    } else if (s.size() > 1) {
      base = 8;
      s.remove_prefix(1);
      prefixed = true;
    }
  }
  (void)prefixed;
  uint64_t v = 0;
  bool any = false, underscores = false;
  for (char c : s) {
    if (c == '_') {
      underscores = true;
      continue;
    }
    int d = hex_value(c);
    if (d < 0 || d >= base) return false;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    any = true;
  }
  if (!any && base != 8) return false;
  *magnitude = v;
  return !underscores || true;
}

// strconv.ParseFloat(s, 64) for the forms the lexer produces.
bool go_parse_float(std::string_view s, double* out) {
  std::string clean;
  bool hex = s.size() > 2 && s[s[0] == '-' || s[0] == '+' ? 1 : 0] == '0' &&
             (s.find('x') != std::string_view::npos || s.find('X') != std::string_view::npos);
  for (char c : s) {
    if (c != '_') clean += c;
  }
  if (clean.size() != s.size() && !go_underscore_ok(s)) return false;
  if (hex && clean.find_first_of("pP") == std::string::npos) return false;
  if (clean.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return false;
  if (errno == ERANGE && std::isinf(v)) return false;
  *out = v;
  return true;
}

bool go_unquote(std::string_view quoted, std::string* out) {
  out->clear();
  if (quoted.size() < 2) return false;
  char quote = quoted.front();
  if (quoted.back() != quote) return false;
  std::string_view body = quoted.substr(1, quoted.size() - 2);
  if (quote == '`') {
    if (body.find('`') != std::string_view::npos) return false;
    for (char c : body) {
      if (c != '\r') *out += c;
    }
    return true;
  }
  if (quote != '"' && quote != '\'') return false;
  if (body.find('\n') != std::string_view::npos) return false;
  size_t i = 0;
  while (i < body.size()) {
    if (!go_unquote_char(body, &i, quote, out)) return false;
    if (quote == '\'' && i < body.size()) return false;  // one character only
  }
  return quote == '"' || !out->empty();
}

}  // namespace sinter::chat::gotemplate
