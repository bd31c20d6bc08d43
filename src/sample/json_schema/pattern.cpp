#include "sample/json_schema/pattern.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/utf8.h"
#include "sample/json_schema/gbnf_rules.h"

namespace sinter::json_schema {
namespace {

using Range = std::pair<uint32_t, uint32_t>;  // inclusive
using CharSet = std::vector<Range>;

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Characters a JSON string holds unescaped: everything but controls, `"` and `\`.
bool json_plain(uint32_t c) { return c >= 0x20 && c != '"' && c != '\\'; }

CharSet normalized(CharSet set) {
  std::sort(set.begin(), set.end());
  CharSet out;
  for (const Range& r : set) {
    if (!out.empty() && r.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// The complement within printable ASCII: the sound reading of \D \W \S and of negated classes that
// contain them (Python's shorthands are Unicode-aware; their ASCII members are certain).
CharSet ascii_complement(const CharSet& set) {
  CharSet out;
  for (uint32_t c = 0x20; c <= 0x7E; ++c) {
    bool member = false;
    for (const Range& r : set) member = member || (c >= r.first && c <= r.second);
    if (!member) out.emplace_back(c, c);
  }
  return normalized(out);
}

CharSet shorthand_set(char letter) {
  switch (letter) {
    case 'd': return {{'0', '9'}};
    case 'w': return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    case 's': return {{'\t', '\r'}, {' ', ' '}};
    case 'D': return ascii_complement(shorthand_set('d'));
    case 'W': return ascii_complement(shorthand_set('w'));
    case 'S': return ascii_complement(shorthand_set('s'));
    default: return {};
  }
}

std::string class_ranges(const CharSet& set) {
  std::string out;
  for (const Range& r : set) {
    out += gbnf_class_char(r.first);
    if (r.second > r.first) out += "-" + gbnf_class_char(r.second);
  }
  return out;
}

// A positive set as GBNF: a class of its plain members, and one literal per member that JSON
// escapes.
std::string set_expression(const CharSet& set) {
  CharSet plain;
  std::vector<std::string> alternatives;
  for (const Range& r : normalized(set)) {
    uint32_t from = r.first;
    for (uint32_t c = r.first; c <= r.second && c < 0x60; ++c) {  // the escaped ones are all below 0x60
      if (!json_plain(c)) {
        alternatives.push_back(json_char_literal(c));
        if (from < c) plain.emplace_back(from, c - 1);
        from = c + 1;
      }
    }
    if (from <= r.second) plain.emplace_back(from, r.second);
  }
  if (!plain.empty()) alternatives.insert(alternatives.begin(), "[" + class_ranges(plain) + "]");
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

class PatternParser {
 public:
  PatternParser(std::string_view pattern, const JsonSchemaLimits& limits) : limits_(limits) {
    for (size_t pos = 0; pos < pattern.size();) text_.push_back(utf8_decode(pattern, &pos));
  }

  Result<std::string> parse() {
    size_t end = text_.size();
    if (pos_ < end && text_[pos_] == '^') ++pos_;
    // A final `$` that is not escaped (an odd number of backslashes before it escapes it).
    if (end > pos_ && text_[end - 1] == '$') {
      size_t backslashes = 0;
      while (end - 1 - backslashes > pos_ && text_[end - 2 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) --end;
    }
    end_ = end;
    SINTER_ASSIGN(std::string expression, alternation(0));
    if (pos_ != end_) return unsupported("unbalanced ')'");
    return expression.empty() ? std::string("\"\"") : expression;
  }

 private:
  Error unsupported(const std::string& what) const {
    return make_error(ErrorCode::kUnsupported, what, " at offset ", pos_);
  }

  bool at_end() const { return pos_ >= end_; }
  uint32_t peek() const { return text_[pos_]; }

  Result<std::string> alternation(int depth) {
    if (depth > limits_.max_depth) return unsupported("groups nested too deeply");
    std::vector<std::string> alternatives;
    while (true) {
      SINTER_ASSIGN(std::string branch, sequence(depth));
      alternatives.push_back(branch.empty() ? "\"\"" : branch);
      if (at_end() || peek() != '|') break;
      ++pos_;
    }
    if (alternatives.size() == 1) return alternatives[0];
    std::string out = "(";
    for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
    return out + ")";
  }

  // Adjacent unquantified literal characters are joined into one GBNF literal.
  Result<std::string> sequence(int depth) {
    std::string out;
    std::string pending;  // JSON-encoded text of literal characters not yet written
    auto flush = [&] {
      if (pending.empty()) return;
      out += (out.empty() ? "" : " ") + gbnf_literal(pending);
      pending.clear();
    };
    while (!at_end() && peek() != '|' && peek() != ')') {
      SINTER_ASSIGN(Atom atom, this->atom(depth));
      SINTER_ASSIGN(std::string quantifier, this->quantifier());
      if (atom.literal && quantifier.empty()) {
        pending += atom.json_text;
        continue;
      }
      flush();
      out += (out.empty() ? "" : " ") + atom.expression + quantifier;
    }
    flush();
    return out;
  }

  struct Atom {
    std::string expression = {};  // one GBNF term
    bool literal = false;         // a single character, also given as json_text
    std::string json_text = {};
  };

  static Atom literal_atom(uint32_t c) {
    Atom atom;
    atom.literal = true;
    atom.expression = json_char_literal(c);
    if (json_plain(c)) {
      utf8_append(&atom.json_text, c);
    } else {
      atom.json_text = atom.expression.substr(1, atom.expression.size() - 2);  // already escaped once
      atom.literal = false;  // escaped GBNF text cannot be re-escaped by gbnf_literal; keep it apart
    }
    return atom;
  }

  Result<Atom> atom(int depth) {
    const uint32_t c = peek();
    ++pos_;
    switch (c) {
      case '(': {
        if (!at_end() && peek() == '?') {
          ++pos_;
          if (!at_end() && peek() == ':') {
            ++pos_;
          } else if (!at_end() && (peek() == '<' || peek() == 'P')) {  // named group: (?<n>...) (?P<n>...)
            if (peek() == 'P') ++pos_;
            if (at_end() || peek() != '<') return unsupported("group syntax '(?'");
            ++pos_;
            if (!at_end() && (peek() == '=' || peek() == '!')) return unsupported("lookbehind");
            while (!at_end() && peek() != '>') ++pos_;
            if (at_end()) return unsupported("unterminated group name");
            ++pos_;
          } else {
            return unsupported("lookaround or inline flags '(?'");
          }
        }
        SINTER_ASSIGN(std::string inner, alternation(depth + 1));
        if (at_end() || peek() != ')') return unsupported("unterminated group");
        ++pos_;
        return Atom{"(" + inner + ")"};
      }
      case '[': return char_class();
      case '.': return Atom{"[^\"\\\\\\x00-\\x1F]"};  // any character JSON holds unescaped
      case '\\': return escape();
      case '^':
      case '$':
        --pos_;
        return unsupported(std::string("anchor '") + static_cast<char>(c) + "' inside the pattern");
      case '*':
      case '+':
      case '?':
      case '{': --pos_; return unsupported("quantifier without an operand");
      default: return literal_atom(c);
    }
  }

  Result<Atom> escape() {
    if (at_end()) return unsupported("trailing backslash");
    const uint32_t c = peek();
    ++pos_;
    if (c == 'd' || c == 'w' || c == 's' || c == 'D' || c == 'W' || c == 'S')
      return Atom{set_expression(shorthand_set(static_cast<char>(c)))};
    SINTER_ASSIGN(uint32_t value, escaped_char(c));
    return literal_atom(value);
  }

  // The character an escape other than a shorthand stands for.
  Result<uint32_t> escaped_char(uint32_t c) {
    switch (c) {
      case 'n': return uint32_t{'\n'};
      case 't': return uint32_t{'\t'};
      case 'r': return uint32_t{'\r'};
      case 'f': return uint32_t{'\f'};
      case 'v': return uint32_t{'\v'};
      case '0': return uint32_t{0};
      case 'x': return hex_digits(2);
      case 'u': return unicode_escape();
      default: break;
    }
    const bool word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (word) {
      --pos_;
      return unsupported(std::string("escape '\\") + static_cast<char>(c) + "'");
    }
    return c;  // an escaped punctuation character stands for itself
  }

  // \uXXXX, with pos_ just past the 'u'. A surrogate pair (\uD83D\uDE00) is the one character
  // it encodes, as ECMA-262 reads a pattern against UTF-16 text; a lone surrogate is no character
  // (it has no UTF-8 form, and a grammar asking for it would make the model write invalid UTF-8).
  Result<uint32_t> unicode_escape() {
    const size_t start = pos_ - 2;  // the backslash
    SINTER_ASSIGN(const uint32_t value, hex_digits(4));
    const auto is_high = [](uint32_t v) { return v >= 0xD800 && v <= 0xDBFF; };
    const auto is_low = [](uint32_t v) { return v >= 0xDC00 && v <= 0xDFFF; };
    if (is_high(value) && pos_ + 1 < end_ && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
      const size_t after_high = pos_;
      pos_ += 2;
      const Result<uint32_t> low = hex_digits(4);
      if (low.ok() && is_low(*low)) return 0x10000 + ((value - 0xD800) << 10) + (*low - 0xDC00);
      pos_ = after_high;
    }
    if (is_high(value) || is_low(value)) {
      std::string escape;
      for (size_t i = start; i < start + 6; ++i) escape += static_cast<char>(text_[i]);
      pos_ = start;
      return make_error(ErrorCode::kInvalidArgument, "the escape '", escape,
                        "' is a lone UTF-16 surrogate, not a character, at offset ", pos_);
    }
    return value;
  }

  Result<uint32_t> hex_digits(int count) {
    uint32_t value = 0;
    for (int i = 0; i < count; ++i) {
      if (at_end()) return unsupported("short hex escape");
      const uint32_t d = peek();
      uint32_t digit;
      if (d >= '0' && d <= '9') {
        digit = d - '0';
      } else if ((d | 0x20) >= 'a' && (d | 0x20) <= 'f') {
        digit = (d | 0x20) - 'a' + 10;
      } else {
        return unsupported("bad hex escape");
      }
      value = value * 16 + digit;
      ++pos_;
    }
    return value;
  }

  Result<Atom> char_class() {
    bool negated = false;
    if (!at_end() && peek() == '^') {
      negated = true;
      ++pos_;
    }
    CharSet set;
    bool shorthand = false;
    bool first = true;
    while (true) {
      if (at_end()) return unsupported("unterminated character class");
      uint32_t c = peek();
      if (c == ']' && !first) break;
      first = false;
      ++pos_;
      if (c == '\\') {
        if (at_end()) return unsupported("trailing backslash");
        const uint32_t e = peek();
        ++pos_;
        if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
          const CharSet members = shorthand_set(static_cast<char>(e));
          set.insert(set.end(), members.begin(), members.end());
          shorthand = true;
          continue;
        }
        if (e == 'b') {
          c = '\b';  // in a class, \b is the backspace character
        } else {
          SINTER_ASSIGN(c, escaped_char(e));
        }
      }
      uint32_t last = c;
      if (!at_end() && peek() == '-' && pos_ + 1 < end_ && text_[pos_ + 1] != ']') {
        ++pos_;
        last = peek();
        ++pos_;
        if (last == '\\') {
          if (at_end()) return unsupported("trailing backslash");
          const uint32_t e = peek();
          ++pos_;
          SINTER_ASSIGN(last, escaped_char(e));
        }
        if (last < c) return unsupported("range out of order in character class");
      }
      set.emplace_back(c, last);
    }
    ++pos_;  // ']'
    if (!negated) return Atom{set_expression(set)};
    if (shorthand) return Atom{set_expression(ascii_complement(set))};
    // Negated: everything else that JSON holds unescaped.
    return Atom{"[^" + class_ranges(normalized(set)) + "\"\\\\\\x00-\\x1F]"};
  }

  Result<int> number() {
    if (at_end() || peek() < '0' || peek() > '9') return unsupported("bad repetition count");
    int64_t value = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      value = std::min<int64_t>(value * 10 + (peek() - '0'), int64_t{1} << 40);
      ++pos_;
    }
    return static_cast<int>(std::min<int64_t>(value, INT32_MAX));
  }

  // The GBNF suffix of a quantifier ("" when there is none); lazy `?` is dropped.
  Result<std::string> quantifier() {
    if (at_end()) return std::string();
    const uint32_t c = peek();
    int min = 0;
    int max = -1;
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      min = c == '+' ? 1 : 0;
      max = c == '?' ? 1 : -1;
    } else if (c == '{') {
      ++pos_;
      SINTER_ASSIGN(min, number());
      max = min;
      if (!at_end() && peek() == ',') {
        ++pos_;
        max = -1;
        if (!at_end() && peek() != '}') {
          SINTER_ASSIGN(max, number());
        }
      }
      if (at_end() || peek() != '}') return unsupported("unterminated repetition");
      ++pos_;
      if (max >= 0 && max < min) return unsupported("repetition {m,n} with n < m");
      if (min > limits_.max_repetition) return unsupported("repetition count above the limit");
      // Fewer repetitions than allowed still match: a large upper bound is capped (a subset).
      if (max > limits_.max_repetition) max = limits_.max_repetition;
    } else {
      return std::string();
    }
    if (!at_end() && peek() == '?') ++pos_;  // lazy: the same set of strings
    if (!at_end() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{'))
      return unsupported("repeated quantifier");
    return gbnf_repeat("", min, max);
  }

  JsonSchemaLimits limits_;
  std::vector<uint32_t> text_;
  size_t pos_ = 0;
  size_t end_ = 0;
};

}  // namespace

std::string json_char_literal(uint32_t code_point) {
  std::string json;
  switch (code_point) {
    case '"': json = "\\\""; break;
    case '\\': json = "\\\\"; break;
    case '\n': json = "\\n"; break;
    case '\r': json = "\\r"; break;
    case '\t': json = "\\t"; break;
    case '\b': json = "\\b"; break;
    case '\f': json = "\\f"; break;
    default:
      if (code_point < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(code_point));
        json = buffer;
      } else {
        utf8_append(&json, std::min(code_point, kMaxCodePoint));
      }
  }
  return gbnf_literal(json);
}

Result<std::string> pattern_expression(std::string_view pattern, const JsonSchemaLimits& limits) {
  return PatternParser(pattern, limits).parse();
}

}  // namespace sinter::json_schema
