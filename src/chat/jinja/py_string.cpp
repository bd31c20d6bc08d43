#include "chat/jinja/py_string.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdio>

#include "core/utf8.h"

namespace sinter::chat::jinja::py {
namespace {

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// The unconditional multi-character mappings of Unicode's SpecialCasing.txt that matter in
// practice (Python applies all of them; utf8proc only knows one-to-one mappings).
const char* special_upper(char32_t c) {
  switch (c) {
    case 0x00DF: return "SS";
    case 0xFB00: return "FF";
    case 0xFB01: return "FI";
    case 0xFB02: return "FL";
    case 0xFB03: return "FFI";
    case 0xFB04: return "FFL";
    case 0xFB05: return "ST";
    case 0xFB06: return "ST";
    default: return nullptr;
  }
}

const char* special_title(char32_t c) {
  switch (c) {
    case 0x00DF: return "Ss";
    case 0xFB00: return "Ff";
    case 0xFB01: return "Fi";
    case 0xFB02: return "Fl";
    case 0xFB03: return "Ffi";
    case 0xFB04: return "Ffl";
    case 0xFB05: return "St";
    case 0xFB06: return "St";
    default: return nullptr;
  }
}

void append_upper(std::string* out, char32_t c) {
  if (const char* s = special_upper(c)) {
    *out += s;
  } else {
    append_code_point(out, static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))));
  }
}

void append_lower(std::string* out, char32_t c) {
  if (c == 0x0130) {  // İ lowercases to i + combining dot above
    *out += "i\xCC\x87";
    return;
  }
  append_code_point(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
}

void append_title(std::string* out, char32_t c) {
  if (const char* s = special_title(c)) {
    *out += s;
  } else {
    append_code_point(out, static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c))));
  }
}

bool in_set(char32_t c, const std::u32string& set) { return set.find(c) != std::u32string::npos; }

}  // namespace

std::u32string decode(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) out.push_back(utf8_decode(text, &pos));
  return out;
}

void append_code_point(std::string* out, char32_t c) { utf8_append(out, static_cast<uint32_t>(c)); }

std::string encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_code_point(&out, c);
  return out;
}

size_t length(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool is_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_printable(char32_t c) {
  if (c == ' ') return true;
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x7F) return true;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
  }
}

bool is_alpha(char32_t c) {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return true;
    default: return false;
  }
}

bool is_decimal(char32_t c) { return category(c) == UTF8PROC_CATEGORY_ND; }

bool is_digit(char32_t c) {
  // Decimal digits plus the superscript and circled digits (Numeric_Type=Digit).
  return is_decimal(c) || c == 0xB2 || c == 0xB3 || c == 0xB9 ||
         (c >= 0x2070 && c <= 0x2079 && c != 0x2071 && c != 0x2072 && c != 0x2073) ||
         (c >= 0x2080 && c <= 0x2089) || (c >= 0x2460 && c <= 0x2468) || (c >= 0x2474 && c <= 0x247C) ||
         (c >= 0x2488 && c <= 0x2490) || c == 0x24EA || (c >= 0x24F5 && c <= 0x24FD) || c == 0x24FF ||
         (c >= 0x2776 && c <= 0x277E) || (c >= 0x2780 && c <= 0x2788) || (c >= 0x278A && c <= 0x2792);
}

bool is_numeric(char32_t c) {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return true;
    default: return false;
  }
}

bool is_upper(char32_t c) { return category(c) == UTF8PROC_CATEGORY_LU; }
bool is_lower(char32_t c) { return category(c) == UTF8PROC_CATEGORY_LL; }
bool is_cased(char32_t c) {
  auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

std::string upper(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      out += static_cast<char>(byte >= 'a' && byte <= 'z' ? byte - 32 : byte);
      ++pos;
    } else {
      append_upper(&out, utf8_decode(text, &pos));
    }
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      out += static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte);
      ++pos;
    } else {
      append_lower(&out, utf8_decode(text, &pos));
    }
  }
  return out;
}

std::string swapcase(std::string_view text) {
  std::string out;
  for (char32_t c : decode(text)) {
    if (is_upper(c)) {
      append_lower(&out, c);
    } else if (is_lower(c)) {
      append_upper(&out, c);
    } else {
      append_code_point(&out, c);
    }
  }
  return out;
}

std::string title(std::string_view text) {
  std::string out;
  bool previous_is_cased = false;
  for (char32_t c : decode(text)) {
    if (previous_is_cased) {
      append_lower(&out, c);
    } else {
      append_title(&out, c);
    }
    previous_is_cased = is_cased(c);
  }
  return out;
}

std::string capitalize(std::string_view text) {
  std::string out;
  bool first = true;
  for (char32_t c : decode(text)) {
    if (first) {
      append_title(&out, c);
      first = false;
    } else {
      append_lower(&out, c);
    }
  }
  return out;
}

bool all_of(std::string_view text, bool (*predicate)(char32_t)) {
  if (text.empty()) return false;
  for (char32_t c : decode(text)) {
    if (!predicate(c)) return false;
  }
  return true;
}

bool is_upper_string(std::string_view text) {
  bool cased = false;
  for (char32_t c : decode(text)) {
    if (is_lower(c) || category(c) == UTF8PROC_CATEGORY_LT) return false;
    cased = cased || is_upper(c);
  }
  return cased;
}

bool is_lower_string(std::string_view text) {
  bool cased = false;
  for (char32_t c : decode(text)) {
    if (is_upper(c) || category(c) == UTF8PROC_CATEGORY_LT) return false;
    cased = cased || is_lower(c);
  }
  return cased;
}

bool is_title_string(std::string_view text) {
  bool cased = false;
  bool previous_is_cased = false;
  for (char32_t c : decode(text)) {
    bool title_or_upper = is_upper(c) || category(c) == UTF8PROC_CATEGORY_LT;
    if (title_or_upper) {
      if (previous_is_cased) return false;
      previous_is_cased = true;
      cased = true;
    } else if (is_lower(c)) {
      if (!previous_is_cased) return false;
      previous_is_cased = true;
      cased = true;
    } else {
      previous_is_cased = false;
    }
  }
  return cased;
}

std::string strip(std::string_view text, const std::optional<std::string>& chars, StripSide side) {
  std::u32string s = decode(text);
  std::u32string set = chars ? decode(*chars) : std::u32string();
  auto strippable = [&](char32_t c) { return chars ? in_set(c, set) : is_space(c); };
  size_t begin = 0;
  size_t end = s.size();
  if (side != StripSide::kRight) {
    while (begin < end && strippable(s[begin])) ++begin;
  }
  if (side != StripSide::kLeft) {
    while (end > begin && strippable(s[end - 1])) --end;
  }
  return encode(std::u32string_view(s).substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view text, const std::optional<std::string>& sep,
                               int64_t maxsplit) {
  std::vector<std::string> parts;
  int64_t remaining = maxsplit < 0 ? INT64_MAX : maxsplit;
  if (sep) {
    size_t start = 0;
    while (remaining-- > 0) {
      size_t found = text.find(*sep, start);
      if (found == std::string_view::npos) break;
      parts.emplace_back(text.substr(start, found - start));
      start = found + sep->size();
    }
    parts.emplace_back(text.substr(start));
    return parts;
  }
  std::u32string s = decode(text);
  size_t n = s.size();
  size_t i = 0;
  while (remaining-- > 0) {
    while (i < n && is_space(s[i])) ++i;
    if (i == n) break;
    size_t j = i++;
    while (i < n && !is_space(s[i])) ++i;
    parts.push_back(encode(std::u32string_view(s).substr(j, i - j)));
  }
  if (i < n) {
    while (i < n && is_space(s[i])) ++i;
    if (i != n) parts.push_back(encode(std::u32string_view(s).substr(i)));
  }
  return parts;
}

std::vector<std::string> rsplit(std::string_view text, const std::optional<std::string>& sep,
                                int64_t maxsplit) {
  std::vector<std::string> parts;
  int64_t remaining = maxsplit < 0 ? INT64_MAX : maxsplit;
  if (sep) {
    size_t end = text.size();
    while (remaining-- > 0) {
      if (end < sep->size()) break;
      size_t found = text.substr(0, end).rfind(*sep);
      if (found == std::string_view::npos) break;
      parts.emplace_back(text.substr(found + sep->size(), end - found - sep->size()));
      end = found;
    }
    parts.emplace_back(text.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  std::u32string s = decode(text);
  int64_t i = static_cast<int64_t>(s.size()) - 1;
  while (remaining-- > 0) {
    while (i >= 0 && is_space(s[i])) --i;
    if (i < 0) break;
    int64_t j = i--;
    while (i >= 0 && !is_space(s[i])) --i;
    parts.push_back(encode(std::u32string_view(s).substr(i + 1, j - i)));
  }
  if (i >= 0) {
    while (i >= 0 && is_space(s[i])) --i;
    if (i >= 0) parts.push_back(encode(std::u32string_view(s).substr(0, i + 1)));
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> splitlines(std::string_view text, bool keep_ends) {
  std::vector<std::string> lines;
  std::u32string s = decode(text);
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && !is_line_break(s[j])) ++j;
    size_t eol = j;
    if (j < s.size()) {
      j += (s[j] == '\r' && j + 1 < s.size() && s[j + 1] == '\n') ? 2 : 1;
      if (keep_ends) eol = j;
    }
    lines.push_back(encode(std::u32string_view(s).substr(i, eol - i)));
    i = j;
  }
  return lines;
}

std::string replace(std::string_view text, std::string_view old_text, std::string_view new_text,
                    int64_t count) {
  if (count < 0) count = INT64_MAX;
  std::string out;
  if (old_text.empty()) {
    size_t pos = 0;
    while (pos < text.size()) {
      if (count > 0) {
        out += new_text;
        --count;
      }
      size_t len = utf8_sequence_length(static_cast<uint8_t>(text[pos]));
      len = std::clamp<size_t>(len, 1, text.size() - pos);
      out += text.substr(pos, len);
      pos += len;
    }
    if (count > 0) out += new_text;
    return out;
  }
  size_t start = 0;
  while (count-- > 0) {
    size_t found = text.find(old_text, start);
    if (found == std::string_view::npos) break;
    out += text.substr(start, found - start);
    out += new_text;
    start = found + old_text.size();
  }
  out += text.substr(start);
  return out;
}

int64_t count(std::string_view text, std::string_view sub, int64_t start, int64_t end) {
  std::u32string s = decode(text);
  std::u32string needle = decode(sub);
  if (start > end || start > static_cast<int64_t>(s.size())) return 0;
  if (needle.empty()) return end - start + 1;
  int64_t n = 0;
  std::u32string_view window = std::u32string_view(s).substr(start, end - start);
  size_t pos = 0;
  while ((pos = window.find(needle, pos)) != std::u32string_view::npos) {
    ++n;
    pos += needle.size();
  }
  return n;
}

int64_t find(std::string_view text, std::string_view sub, int64_t start, int64_t end, bool reverse) {
  std::u32string s = decode(text);
  std::u32string needle = decode(sub);
  if (start > static_cast<int64_t>(s.size()) || end - start < static_cast<int64_t>(needle.size())) return -1;
  std::u32string_view window = std::u32string_view(s).substr(start, end - start);
  size_t found = reverse ? window.rfind(needle) : window.find(needle);
  return found == std::u32string_view::npos ? -1 : static_cast<int64_t>(found) + start;
}

SliceIndices adjust_slice(int64_t length, std::optional<int64_t> start, std::optional<int64_t> stop,
                          int64_t step) {
  int64_t first = start.value_or(step < 0 ? INT64_MAX : 0);
  int64_t last = stop.value_or(step < 0 ? INT64_MIN : INT64_MAX);
  auto clamp = [&](int64_t* index) {
    if (*index < 0) {
      *index = *index < -length ? (step < 0 ? -1 : 0) : *index + length;
    } else if (*index >= length) {
      *index = step < 0 ? length - 1 : length;
    }
  };
  clamp(&first);
  clamp(&last);
  SliceIndices result;
  result.start = first;
  result.step = step;
  if (step < 0) {
    if (last < first) result.count = (first - last - 1) / (-step) + 1;
  } else if (first < last) {
    result.count = (last - first - 1) / step + 1;
  }
  return result;
}

std::string repr(std::string_view text) {
  bool has_single = text.find('\'') != std::string_view::npos;
  bool has_double = text.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  size_t pos = 0;
  char buffer[16];
  while (pos < text.size()) {
    char32_t c = utf8_decode(text, &pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (is_printable(c)) {
      append_code_point(&out, c);
    } else {
      const char* format = c <= 0xFF ? "\\x%02x" : c <= 0xFFFF ? "\\u%04x" : "\\U%08x";
      std::snprintf(buffer, sizeof buffer, format, static_cast<unsigned>(c));
      out += buffer;
    }
  }
  out += quote;
  return out;
}

}  // namespace sinter::chat::jinja::py
