#include "chat/jinja/lexer.h"

#include <utf8proc.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "chat/jinja/py_string.h"
#include "core/utf8.h"

namespace sinter::chat::jinja {
namespace {

// Byte offsets of the normalized source to line and column, in O(log lines) per query whatever
// the order of the queries. The column counts code points: in valid UTF-8 these are the bytes
// that are not continuation bytes (10xxxxxx). Counting them from the line start on every query
// made a long one-line template quadratic, so the count up to every kBlock-th byte is kept.
class LineIndex {
 public:
  explicit LineIndex(std::string_view source) : source_(source) {
    starts_.push_back(0);
    lead_counts_.reserve(source.size() / kBlock + 1);
    size_t leads = 0;
    for (size_t i = 0; i < source.size(); ++i) {
      if (i % kBlock == 0) lead_counts_.push_back(leads);
      if (!is_continuation(source[i])) ++leads;
      if (source[i] == '\n') starts_.push_back(i + 1);
    }
    lead_counts_.push_back(leads);  // for an offset at the end when the size is a multiple of kBlock
  }

  SourceLocation at(size_t offset) const {
    offset = std::min(offset, source_.size());
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    size_t line = static_cast<size_t>(it - starts_.begin());
    size_t column = code_points_before(offset) - code_points_before(starts_[line - 1]) + 1;
    return {clamp_int(line), clamp_int(column)};
  }

 private:
  static constexpr size_t kBlock = 64;

  static bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
  static int clamp_int(size_t value) {
    return static_cast<int>(std::min<size_t>(value, std::numeric_limits<int>::max()));
  }

  // Code points that start before `offset`.
  size_t code_points_before(size_t offset) const {
    size_t block = offset / kBlock;
    size_t count = lead_counts_[block];
    for (size_t i = block * kBlock; i < offset; ++i) count += is_continuation(source_[i]) ? 0 : 1;
    return count;
  }

  std::string_view source_;
  std::vector<size_t> starts_;
  std::vector<size_t> lead_counts_;  // [i]: code points before byte i * kBlock
};

// Python's str.splitlines-free newline normalization plus the dropped trailing newline.
std::string normalize_newlines(std::string_view source, bool keep_trailing_newline) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '\r') {
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      out += '\n';
    } else {
      out += c;
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// \w in Python's Unicode regexes, plus the combining marks Jinja2's name pattern adds.
bool is_name_char(char32_t c) {
  if (c < 0x80) return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_PC: return true;
    default: return false;
  }
}

class Lexer {
 public:
  Lexer(std::string source, const LexerOptions& options)
      : source_(std::move(source)), options_(options), lines_(source_) {}

  Result<std::vector<Token>> run() {
    while (pos_ < source_.size()) SINTER_TRY(lex_root());
    push(TokenType::kEof, "", source_.size());
    return std::move(tokens_);
  }

 private:
  enum class Tag { kBlock, kVariable, kComment, kRaw };

  Error fail(size_t offset, const std::string& message) const {
    return syntax_error(lines_.at(offset), message);
  }

  void push(TokenType type, std::string text, size_t offset) {
    Token token;
    token.type = type;
    token.text = std::move(text);
    token.where = lines_.at(offset);
    tokens_.push_back(std::move(token));
  }

  bool starts_with(size_t at, std::string_view prefix) const {
    return source_.compare(at, prefix.size(), prefix) == 0;
  }

  // Python whitespace (\s) at `at`: its length in bytes, or 0.
  size_t whitespace_at(size_t at) const {
    if (at >= source_.size()) return 0;
    size_t next = at;
    char32_t c = utf8_decode(source_, &next);
    return py::is_space(c) ? next - at : 0;
  }

  size_t skip_whitespace(size_t at) const {
    while (size_t n = whitespace_at(at)) at += n;
    return at;
  }

  // `{%- raw -%}`: the length of the whole opening tag at `at`, or 0 if it is not one.
  size_t raw_begin_length(size_t at) const {
    size_t p = at + 2;
    if (p < source_.size() && (source_[p] == '-' || source_[p] == '+')) ++p;
    p = skip_whitespace(p);
    if (!starts_with(p, "raw")) return 0;
    p = skip_whitespace(p + 3);
    if (starts_with(p, "-%}")) return skip_whitespace(p + 3) - at;
    if (starts_with(p, "%}")) return p + 2 - at;
    return 0;
  }

  // Text before a tag, with the tag's whitespace control applied (Jinja2's OptionalLStrip).
  void push_data_before_tag(size_t begin, size_t end, char sign, bool variable) {
    std::string_view text(source_.data() + begin, end - begin);
    if (sign == '-') {
      text = rstrip_whitespace(text);
    } else if (sign != '+' && options_.lstrip_blocks && !variable) {
      size_t newline = text.rfind('\n');
      size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
      bool line_starting = begin == 0 || source_[begin - 1] == '\n';
      if ((line_start > 0 || line_starting) && line_start < text.size() &&
          all_whitespace(text.substr(line_start))) {
        text = text.substr(0, line_start);
      }
    }
    if (!text.empty()) push(TokenType::kData, std::string(text), begin);
  }

  static std::string_view rstrip_whitespace(std::string_view text) {
    std::u32string decoded = py::decode(text);
    size_t keep = decoded.size();
    while (keep > 0 && py::is_space(decoded[keep - 1])) --keep;
    return text.substr(0, py::encode(std::u32string_view(decoded).substr(0, keep)).size());
  }

  static bool all_whitespace(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
      if (!py::is_space(utf8_decode(text, &pos))) return false;
    }
    return true;
  }

  Status lex_root() {
    size_t tag = pos_;
    Tag kind = Tag::kBlock;
    while (true) {
      tag = source_.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= source_.size()) {
        push(TokenType::kData, source_.substr(pos_), pos_);
        pos_ = source_.size();
        return ok_status();
      }
      char next = source_[tag + 1];
      if (next == '%') {
        kind = raw_begin_length(tag) ? Tag::kRaw : Tag::kBlock;
        break;
      }
      if (next == '{') {
        kind = Tag::kVariable;
        break;
      }
      if (next == '#') {
        kind = Tag::kComment;
        break;
      }
      ++tag;
    }
    char sign = tag + 2 < source_.size() && (source_[tag + 2] == '-' || source_[tag + 2] == '+')
                    ? source_[tag + 2]
                    : 0;
    push_data_before_tag(pos_, tag, sign, kind == Tag::kVariable);
    size_t after = tag + 2 + (sign ? 1 : 0);
    switch (kind) {
      case Tag::kRaw: return lex_raw(tag, tag + raw_begin_length(tag));
      case Tag::kComment: return lex_comment(tag, after);
      case Tag::kBlock:
        push(TokenType::kBlockBegin, "{%", tag);
        pos_ = after;
        return lex_tag(/*block=*/true);
      case Tag::kVariable:
        push(TokenType::kVariableBegin, "{{", tag);
        pos_ = after;
        return lex_tag(/*block=*/false);
    }
    return ok_status();
  }

  // After a block or comment end: trim_blocks eats one newline; `-` eats all whitespace.
  size_t after_tag_end(size_t end_start, char sign, size_t delimiter_length) const {
    size_t p = end_start + (sign ? 1 : 0) + delimiter_length;
    if (sign == '-') return skip_whitespace(p);
    if (sign == 0 && options_.trim_blocks && p < source_.size() && source_[p] == '\n') return p + 1;
    return p;
  }

  Status lex_comment(size_t tag, size_t p) {
    for (; p < source_.size(); ++p) {
      if (starts_with(p, "+#}")) {
        pos_ = after_tag_end(p, '+', 2);
        return ok_status();
      }
      if (starts_with(p, "-#}")) {
        pos_ = after_tag_end(p, '-', 2);
        return ok_status();
      }
      if (starts_with(p, "#}")) {
        pos_ = after_tag_end(p, 0, 2);
        return ok_status();
      }
    }
    return fail(tag, "Missing end of comment tag");
  }

  Status lex_raw(size_t tag, size_t content) {
    for (size_t p = source_.find("{%", content); p != std::string::npos; p = source_.find("{%", p + 1)) {
      size_t q = p + 2;
      char sign = q < source_.size() && (source_[q] == '-' || source_[q] == '+') ? source_[q] : 0;
      if (sign) ++q;
      q = skip_whitespace(q);
      if (!starts_with(q, "endraw")) continue;
      q = skip_whitespace(q + 6);
      char end_sign = 0;
      if (starts_with(q, "+%}") || starts_with(q, "-%}")) {
        end_sign = source_[q];
      } else if (!starts_with(q, "%}")) {
        continue;
      }
      push_data_before_tag(content, p, sign, /*variable=*/false);
      pos_ = after_tag_end(q, end_sign, 2);
      return ok_status();
    }
    return fail(tag, "Missing end of raw directive");
  }

  // Inside {% %} or {{ }}: names, literals and operators up to the closing delimiter.
  Status lex_tag(bool block) {
    std::vector<char> balance;
    while (true) {
      if (pos_ >= source_.size()) return ok_status();  // the parser reports the missing end
      if (balance.empty()) {
        if (block) {
          char sign = source_[pos_] == '-' || source_[pos_] == '+' ? source_[pos_] : 0;
          if (starts_with(pos_ + (sign ? 1 : 0), "%}")) {
            push(TokenType::kBlockEnd, "%}", pos_);
            pos_ = after_tag_end(pos_, sign, 2);
            return ok_status();
          }
        } else {
          bool dash = source_[pos_] == '-';
          if (starts_with(pos_ + (dash ? 1 : 0), "}}")) {
            push(TokenType::kVariableEnd, "}}", pos_);
            pos_ += (dash ? 1 : 0) + 2;
            if (dash) pos_ = skip_whitespace(pos_);
            return ok_status();
          }
        }
      }
      if (size_t n = whitespace_at(pos_)) {
        pos_ += n;
        continue;
      }
      if (lex_float()) continue;
      SINTER_ASSIGN(bool integer, lex_integer());
      if (integer) continue;
      if (lex_name()) continue;
      SINTER_ASSIGN(bool string, lex_string());
      if (string) continue;
      SINTER_ASSIGN(bool op, lex_operator(&balance));
      if (op) continue;
      size_t next = pos_;
      utf8_decode(source_, &next);
      return fail(pos_, "unexpected char " + py::repr(source_.substr(pos_, next - pos_)));
    }
  }

  // Digits with single underscores between them ("1_000"); returns the end, or `at` if none.
  size_t digits_end(size_t at) const {
    size_t p = at;
    if (p >= source_.size() || !is_ascii_digit(source_[p])) return at;
    while (p < source_.size()) {
      if (is_ascii_digit(source_[p])) {
        ++p;
      } else if (source_[p] == '_' && p + 1 < source_.size() && is_ascii_digit(source_[p + 1])) {
        p += 2;
      } else {
        break;
      }
    }
    return p;
  }

  static std::string without_underscores(std::string_view text) {
    std::string out;
    for (char c : text) {
      if (c != '_') out += c;
    }
    return out;
  }

  bool lex_float() {
    if (pos_ > 0 && source_[pos_ - 1] == '.') return false;
    size_t p = digits_end(pos_);
    if (p == pos_) return false;
    bool fraction = false;
    if (p + 1 < source_.size() && source_[p] == '.' && is_ascii_digit(source_[p + 1])) {
      p = digits_end(p + 1);
      fraction = true;
    }
    bool exponent = false;
    if (p < source_.size() && (source_[p] == 'e' || source_[p] == 'E')) {
      size_t q = p + 1;
      if (q < source_.size() && (source_[q] == '+' || source_[q] == '-')) ++q;
      size_t end = digits_end(q);
      if (end != q) {
        p = end;
        exponent = true;
      }
    }
    if (!fraction && !exponent) return false;
    std::string text = without_underscores(source_.substr(pos_, p - pos_));
    Token token;
    token.type = TokenType::kFloat;
    token.text = text;
    token.number = std::strtod(text.c_str(), nullptr);
    token.where = lines_.at(pos_);
    tokens_.push_back(std::move(token));
    pos_ = p;
    return true;
  }

  Result<bool> lex_integer() {
    if (pos_ >= source_.size() || !is_ascii_digit(source_[pos_])) return false;
    size_t p = pos_;
    int base = 10;
    char prefix = p + 1 < source_.size() ? static_cast<char>(source_[p + 1] | 0x20) : 0;
    auto valid = [&](char c) {
      switch (base) {
        case 2: return c == '0' || c == '1';
        case 8: return c >= '0' && c <= '7';
        case 16: return is_hex_digit(c);
        default: return is_ascii_digit(c);
      }
    };
    std::string digits;
    if (source_[p] == '0' && (prefix == 'b' || prefix == 'o' || prefix == 'x')) {
      base = prefix == 'b' ? 2 : prefix == 'o' ? 8 : 16;
      size_t q = p + 2;
      while (q < source_.size()) {
        if (source_[q] == '_' && q + 1 < source_.size() && valid(source_[q + 1])) {
          ++q;
        } else if (!valid(source_[q])) {
          break;
        }
        digits += source_[q++];
      }
      if (digits.empty()) {
        digits.assign(1, '0');  // "0x" without digits lexes as the integer 0 followed by a name
        q = p + 1;
        base = 10;
      }
      p = q;
    } else if (source_[p] == '0') {
      ++p;
      while (p < source_.size()) {
        if (source_[p] == '0') {
          ++p;
        } else if (source_[p] == '_' && p + 1 < source_.size() && source_[p + 1] == '0') {
          p += 2;
        } else {
          break;
        }
      }
      digits = "0";
    } else {
      size_t end = digits_end(p);
      digits = without_underscores(source_.substr(p, end - p));
      p = end;
    }
    Token token;
    token.type = TokenType::kInteger;
    token.text = source_.substr(pos_, p - pos_);
    auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), token.integer, base);
    if (parsed.ec != std::errc())
      return fail(pos_, "integer literal " + token.text + " does not fit in 64 bits");
    token.where = lines_.at(pos_);
    tokens_.push_back(std::move(token));
    pos_ = p;
    return true;
  }

  bool lex_name() {
    size_t p = pos_;
    while (p < source_.size()) {
      size_t next = p;
      char32_t c = utf8_decode(source_, &next);
      if (!is_name_char(c)) break;
      p = next;
    }
    if (p == pos_) return false;
    push(TokenType::kName, source_.substr(pos_, p - pos_), pos_);
    pos_ = p;
    return true;
  }

  // Python's unicode-escape decoding of a string literal's body, applied to the template text
  // after non-ASCII characters were escaped with backslashreplace (as Jinja2 does): a backslash
  // before a non-ASCII character therefore yields a literal "\xe9"-style text.
  Result<std::string> decode_string(size_t start, size_t end) const {
    std::string out;
    size_t p = start;
    auto hex_value = [&](size_t at, int count, uint32_t* value) {
      if (at + static_cast<size_t>(count) > end) return false;
      *value = 0;
      for (int i = 0; i < count; ++i) {
        char c = source_[at + static_cast<size_t>(i)];
        if (!is_hex_digit(c)) return false;
        *value = *value * 16 + static_cast<uint32_t>(is_ascii_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
      }
      return true;
    };
    while (p < end) {
      char c = source_[p];
      if (c != '\\') {
        out += c;
        ++p;
        continue;
      }
      if (p + 1 >= end) {
        out += '\\';
        ++p;
        continue;
      }
      char e = source_[p + 1];
      p += 2;
      switch (e) {
        case '\n': break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          int count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t value = 0;
          if (!hex_value(p, count, &value)) {
            return fail(p - 2,
                        concat("(unicode error) 'unicodeescape' codec can't decode bytes: truncated \\",
                               e == 'x'   ? "xXX"
                               : e == 'u' ? "uXXXX"
                                          : "UXXXXXXXX",
                               " escape"));
          }
          if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
            return fail(p - 2, "illegal Unicode character in string literal");
          }
          utf8_append(&out, value);
          p += static_cast<size_t>(count);
          break;
        }
        case 'N': return fail(p - 2, "\\N{...} escapes in string literals are not supported by sinter");
        default:
          if (e >= '0' && e <= '7') {
            uint32_t value = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && p < end && source_[p] >= '0' && source_[p] <= '7'; ++i, ++p) {
              value = value * 8 + static_cast<uint32_t>(source_[p] - '0');
            }
            utf8_append(&out, value);
          } else if (static_cast<unsigned char>(e) >= 0x80) {
            size_t q = p - 1;
            uint32_t cp = utf8_decode(source_, &q);
            char buffer[16];
            std::snprintf(buffer, sizeof buffer,
                          cp <= 0xFF     ? "\\x%02x"
                          : cp <= 0xFFFF ? "\\u%04x"
                                         : "\\U%08x",
                          cp);
            out += buffer;
            p = q;
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    return out;
  }

  Result<bool> lex_string() {
    char quote = source_[pos_];
    if (quote != '\'' && quote != '"') return false;
    size_t p = pos_ + 1;
    while (p < source_.size() && source_[p] != quote) p += source_[p] == '\\' ? 2 : 1;
    if (p >= source_.size())
      return fail(pos_, "unexpected char " + py::repr(std::string(1, quote)) + " (unterminated string)");
    SINTER_ASSIGN(std::string value, decode_string(pos_ + 1, p));
    push(TokenType::kString, std::move(value), pos_);
    pos_ = p + 1;
    return true;
  }

  Result<bool> lex_operator(std::vector<char>* balance) {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (std::string_view op : kTwo) {
      if (starts_with(pos_, op)) {
        push(TokenType::kOperator, std::string(op), pos_);
        pos_ += 2;
        return true;
      }
    }
    char c = source_[pos_];
    if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) return false;
    if (c == '(' || c == '[' || c == '{') balance->push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (balance->empty()) return fail(pos_, concat("unexpected '", c, "'"));
      char expected = balance->back();
      balance->pop_back();
      if (expected != c) return fail(pos_, concat("unexpected '", c, "', expected '", expected, "'"));
    }
    push(TokenType::kOperator, std::string(1, c), pos_);
    ++pos_;
    return true;
  }

  std::string source_;
  LexerOptions options_;
  LineIndex lines_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source, const LexerOptions& options) {
  if (!utf8_is_valid(source)) {
    size_t pos = 0;
    while (pos < source.size()) {
      size_t start = pos;
      uint32_t c = utf8_decode(source, &pos);
      if (c == 0xFFFD && !utf8_is_valid(source.substr(start, pos - start))) {
        return Error(ErrorCode::kFormat, concat("template is not valid UTF-8 (byte offset ", start, ")"));
      }
    }
    return Error(ErrorCode::kFormat, "template is not valid UTF-8");
  }
  Lexer lexer(normalize_newlines(source, options.keep_trailing_newline), options);
  return lexer.run();
}

std::string describe_token(const Token& token) {
  switch (token.type) {
    case TokenType::kData: return "template data / text";
    case TokenType::kBlockBegin: return "begin of statement block";
    case TokenType::kBlockEnd: return "end of statement block";
    case TokenType::kVariableBegin: return "begin of print statement";
    case TokenType::kVariableEnd: return "end of print statement";
    case TokenType::kName: return token.text;
    case TokenType::kString: return "string";
    case TokenType::kInteger: return "integer";
    case TokenType::kFloat: return "float";
    case TokenType::kOperator: return token.text;
    case TokenType::kEof: return "end of template";
  }
  return "token";
}

}  // namespace sinter::chat::jinja
