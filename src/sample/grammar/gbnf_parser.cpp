#include "sample/grammar/gbnf_parser.h"

#include <cstdio>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sinter {
namespace {

using Type = GrammarElementType;
using Rule = std::vector<GrammarElement>;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class GbnfParser {
 public:
  GbnfParser(std::string_view text, const GbnfLimits& limits) : text_(text), limits_(limits) {}

  Result<Grammar> parse() {
    if (text_.size() > limits_.max_text_bytes) {
      return make_error(ErrorCode::kInvalidArgument, "grammar: the text has ", text_.size(),
                        " bytes, more than the limit of ", limits_.max_text_bytes);
    }
    if (const size_t nul = text_.find('\0'); nul != std::string_view::npos) {
      return error_at(nul, "unexpected NUL byte");
    }
    skip_space(true);
    while (!at_end()) SINTER_TRY(parse_rule());
    return finish();
  }

 private:
  // ---- positions and errors ----

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // "line L, column C", C counted in characters (UTF-8 lead bytes).
  std::string location(size_t offset) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text_[i]);
      if (byte == '\n') {
        ++line;
        column = 1;
      } else if ((byte & 0xC0) != 0x80) {
        ++column;
      }
    }
    return concat("line ", line, ", column ", column);
  }

  template <class... Args>
  Error error_at(size_t offset, const Args&... args) const {
    return make_error(ErrorCode::kInvalidArgument, "grammar ", location(offset), ": ", args...);
  }

  // What stands at the current position, for messages.
  std::string found() const {
    if (at_end()) return "the end of the grammar";
    const char c = peek();
    if (c == '\n' || c == '\r') return "a line break";
    return std::string("'") + c + "'";
  }

  // Spaces, tabs and comments; line breaks too when `newline_ok` (inside parentheses and
  // between rules).
  void skip_space(bool newline_ok) {
    while (!at_end()) {
      const char c = peek();
      if (c == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
      } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  // ---- rules ----

  // The id of a user-named rule, created on first mention (definition or reference).
  Result<uint32_t> named_rule(std::string_view name, size_t offset) {
    auto it = named_.find(std::string(name));
    if (it != named_.end()) return it->second;
    SINTER_ASSIGN(const uint32_t id, new_rule(std::string(name), offset));
    named_.emplace(std::string(name), id);
    return id;
  }

  Result<uint32_t> new_rule(std::string name, size_t offset) {
    if (rules_.size() >= limits_.max_rules) {
      return error_at(offset, "the grammar needs more than ", limits_.max_rules, " rules");
    }
    rules_.emplace_back();
    names_.push_back(std::move(name));
    defined_.push_back(false);
    offsets_.push_back(offset);
    return static_cast<uint32_t>(rules_.size() - 1);
  }

  Result<uint32_t> generated_rule(uint32_t base, size_t offset) {
    return new_rule(names_[base] + "_" + std::to_string(rules_.size()), offset);
  }

  Status count_elements(size_t n, size_t offset) {
    element_count_ += n;
    if (element_count_ > limits_.max_elements) {
      return error_at(offset, "the grammar grows beyond ", limits_.max_elements,
                      " elements (repetitions are expanded; reduce the repetition counts)");
    }
    return ok_status();
  }

  Status parse_rule() {
    const size_t start = pos_;
    if (!is_name_char(peek())) return error_at(pos_, "expected a rule name, found ", found());
    while (is_name_char(peek())) ++pos_;
    const std::string_view name = text_.substr(start, pos_ - start);
    SINTER_ASSIGN(const uint32_t id, named_rule(name, start));
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") {
      return error_at(pos_, "expected '::=' after the rule name '", name, "', found ", found());
    }
    pos_ += 3;
    skip_space(true);
    defined_[id] = true;
    offsets_[id] = start;
    SINTER_TRY(parse_alternates(id, id, false, 0));
    if (peek() == '\r') {
      pos_ += peek(1) == '\n' ? 2 : 1;
    } else if (peek() == '\n') {
      ++pos_;
    } else if (!at_end()) {
      return error_at(pos_, "expected a line break or the end of the grammar after rule '", name, "', found ",
                      found());
    }
    skip_space(true);
    return ok_status();
  }

  // alternatives of rule `id`; generated rules are named after `base`.
  Status parse_alternates(uint32_t id, uint32_t base, bool nested, int depth) {
    Rule rule;
    SINTER_TRY(parse_sequence(rule, base, nested, depth));
    while (peek() == '|') {
      rule.push_back({Type::kAlt, 0});
      ++pos_;
      skip_space(true);
      SINTER_TRY(parse_sequence(rule, base, nested, depth));
    }
    rule.push_back({Type::kEnd, 0});
    SINTER_TRY(count_elements(rule.size(), pos_));
    rules_[id] = std::move(rule);
    return ok_status();
  }

  Status parse_sequence(Rule& rule, uint32_t base, bool nested, int depth) {
    size_t item_start = rule.size();  // the item a repetition applies to: [item_start, end)
    bool have_item = false;
    while (!at_end()) {
      const size_t start = pos_;
      const char c = peek();
      if (c == '"') {
        ++pos_;
        item_start = rule.size();
        while (peek() != '"') {
          if (at_end()) return error_at(start, "unterminated string literal");
          SINTER_ASSIGN(const uint32_t cp, parse_char());
          rule.push_back({Type::kChar, cp});
        }
        ++pos_;
        if (rule.size() == item_start) {
          // "" matches the empty string: nothing to emit, and nothing to repeat.
          have_item = false;
          skip_space(nested);
          continue;
        }
      } else if (c == '[') {
        ++pos_;
        Type first = Type::kChar;
        if (peek() == '^') {
          first = Type::kCharNot;
          ++pos_;
        }
        item_start = rule.size();
        while (peek() != ']') {
          if (at_end()) return error_at(start, "unterminated character class");
          SINTER_ASSIGN(const uint32_t low, parse_char());
          rule.push_back({rule.size() == item_start ? first : Type::kCharAlt, low});
          if (peek() == '-' && peek(1) != ']') {
            if (pos_ + 1 >= text_.size()) return error_at(start, "unterminated character class");
            ++pos_;
            SINTER_ASSIGN(const uint32_t high, parse_char());
            rule.push_back({Type::kCharUpper, high});
          }
        }
        if (rule.size() == item_start) return error_at(start, "empty character class");
        ++pos_;
      } else if (is_name_char(c)) {
        while (is_name_char(peek())) ++pos_;
        SINTER_ASSIGN(const uint32_t ref, named_rule(text_.substr(start, pos_ - start), start));
        item_start = rule.size();
        rule.push_back({Type::kRuleRef, ref});
      } else if (c == '(') {
        if (depth >= limits_.max_nesting) {
          return error_at(start, "parentheses nested deeper than ", limits_.max_nesting);
        }
        ++pos_;
        skip_space(true);
        SINTER_ASSIGN(const uint32_t sub, generated_rule(base, start));
        defined_[sub] = true;
        SINTER_TRY(parse_alternates(sub, base, true, depth + 1));
        if (peek() != ')')
          return error_at(pos_, "expected ')' to close the '(' of ", location(start), ", found ", found());
        ++pos_;
        item_start = rule.size();
        rule.push_back({Type::kRuleRef, sub});
      } else if (c == '.') {
        ++pos_;
        item_start = rule.size();
        rule.push_back({Type::kCharAny, 0});
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!have_item) return error_at(start, "expected an item before '", c, "'");
        uint32_t min = 0, max = kUnbounded;
        ++pos_;
        if (c == '+') min = 1;
        if (c == '?') max = 1;
        if (c == '{') SINTER_TRY(parse_counts(start, nested, min, max));
        SINTER_TRY(repeat(rule, item_start, min, max, base, start));
        // A further repetition (`a*?`) applies to the rewritten item, as in llama.cpp.
        skip_space(nested);
        continue;
      } else if (c == '<' || c == '!') {
        return make_error(ErrorCode::kUnsupported, "grammar ", location(start),
                          ": token references (<...>) are not supported");
      } else {
        break;
      }
      have_item = true;
      skip_space(nested);
    }
    return ok_status();
  }

  static constexpr uint32_t kUnbounded = UINT32_MAX;

  // {m}, {m,}, {m,n}; the '{' is consumed.
  Status parse_counts(size_t start, bool nested, uint32_t& min, uint32_t& max) {
    skip_space(nested);
    SINTER_ASSIGN(min, parse_count(start));
    skip_space(nested);
    if (peek() == '}') {
      max = min;
    } else if (peek() == ',') {
      ++pos_;
      skip_space(nested);
      max = kUnbounded;
      if (is_digit(peek())) {
        SINTER_ASSIGN(max, parse_count(start));
        skip_space(nested);
      }
      if (peek() != '}') return error_at(pos_, "expected '}' to close the repetition, found ", found());
      if (max < min)
        return error_at(start, "repetition {", min, ",", max, "} has a maximum below its minimum");
    } else {
      return error_at(pos_, "expected ',' or '}' in the repetition, found ", found());
    }
    ++pos_;
    return ok_status();
  }

  Result<uint32_t> parse_count(size_t start) {
    if (!is_digit(peek())) return error_at(pos_, "expected a number in the repetition, found ", found());
    uint64_t value = 0;
    while (is_digit(peek())) {
      value = value * 10 + static_cast<uint64_t>(peek() - '0');
      ++pos_;
      if (value > limits_.max_repetition) {
        while (is_digit(peek())) ++pos_;
        return error_at(start, "repetition count above the limit of ", limits_.max_repetition);
      }
    }
    return static_cast<uint32_t>(value);
  }

  // Rewrites rule[item_start, end) = S as S{min,max}:
  //   S S ... S (min times), then R where
  //   unbounded: R ::= S R |           bounded: R_k ::= S R_(k-1) | , R_1 ::= S |  (k = max - min)
  Status repeat(Rule& rule, size_t item_start, uint32_t min, uint32_t max, uint32_t base, size_t offset) {
    const Rule item(rule.begin() + static_cast<std::ptrdiff_t>(item_start), rule.end());
    const size_t copies = max == kUnbounded ? size_t{min} + 1 : size_t{max};
    SINTER_TRY(count_elements(item.size() * (copies + 1) + 3 * (copies + 1), offset));
    rule.resize(item_start);
    for (uint32_t i = 0; i < min; ++i) rule.insert(rule.end(), item.begin(), item.end());
    if (max == kUnbounded) {
      SINTER_ASSIGN(const uint32_t r, generated_rule(base, offset));
      Rule rec = item;
      rec.push_back({Type::kRuleRef, r});
      rec.push_back({Type::kAlt, 0});
      rec.push_back({Type::kEnd, 0});
      rules_[r] = std::move(rec);
      defined_[r] = true;
      rule.push_back({Type::kRuleRef, r});
      return ok_status();
    }
    uint32_t previous = 0;
    for (uint32_t k = 1; k <= max - min; ++k) {
      SINTER_ASSIGN(const uint32_t r, generated_rule(base, offset));
      Rule opt = item;
      if (k > 1) opt.push_back({Type::kRuleRef, previous});
      opt.push_back({Type::kAlt, 0});
      opt.push_back({Type::kEnd, 0});
      rules_[r] = std::move(opt);
      defined_[r] = true;
      previous = r;
    }
    if (max > min) rule.push_back({Type::kRuleRef, previous});
    return ok_status();
  }

  // One character of a literal or class: an escape or one UTF-8 sequence (decoded as
  // llama.cpp does: the lead byte says the length, continuation bytes are not checked). Either
  // must give a Unicode scalar value: a surrogate or a value above U+10FFFF has no UTF-8 form, and
  // a grammar that asks for one would make the model write invalid UTF-8.
  Result<uint32_t> parse_char() {
    const size_t start = pos_;
    SINTER_ASSIGN(const uint32_t value, parse_code_point());
    if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
      const std::string_view what = text_.substr(start, pos_ - start);
      const char* why =
          value > 0x10FFFF ? "above U+10FFFF, the largest code point" : "a UTF-16 surrogate, not a character";
      if (what.starts_with('\\'))
        return error_at(start, "the escape '", what, "' is ", code_point_name(value), ", ", why);
      return error_at(start, "the bytes here decode to ", code_point_name(value), ", ", why,
                      " (the text is not valid UTF-8)");
    }
    return value;
  }

  static std::string code_point_name(uint32_t value) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "U+%04X", static_cast<unsigned>(value));
    return buffer;
  }

  Result<uint32_t> parse_code_point() {
    const size_t start = pos_;
    if (peek() == '\\') {
      const char e = peek(1);
      pos_ += 2;
      switch (e) {
        case 'x': return parse_hex(start, 2);
        case 'u': return parse_hex(start, 4);
        case 'U': return parse_hex(start, 8);
        case 't': return uint32_t{'\t'};
        case 'r': return uint32_t{'\r'};
        case 'n': return uint32_t{'\n'};
        case '\\':
        case '"':
        case '[':
        case ']': return static_cast<uint32_t>(e);
        default:
          if (e == '\0' && start + 1 >= text_.size()) return error_at(start, "unterminated escape");
          return error_at(start, "unknown escape '\\", e, "'");
      }
    }
    static constexpr int kLength[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    const auto lead = static_cast<unsigned char>(peek());
    const int length = kLength[lead >> 4];
    uint32_t value = lead & ((1u << (8 - length)) - 1);
    ++pos_;
    for (int i = 1; i < length && !at_end(); ++i, ++pos_) {
      value = (value << 6) + (static_cast<unsigned char>(peek()) & 0x3Fu);
    }
    return value;
  }

  Result<uint32_t> parse_hex(size_t start, int digits) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int v = hex_value(peek());
      if (v < 0) return error_at(start, "expected ", digits, " hex digits after '\\", text_[start + 1], "'");
      value = (value << 4) | static_cast<uint32_t>(v);
      ++pos_;
    }
    return value;
  }

  // ---- checks and the flat grammar ----

  Result<Grammar> finish() {
    // Undefined rules: report the one referenced first.
    size_t first_undefined = SIZE_MAX;
    for (size_t r = 0; r < rules_.size(); ++r) {
      if (!defined_[r] && (first_undefined == SIZE_MAX || offsets_[r] < offsets_[first_undefined])) {
        first_undefined = r;
      }
    }
    if (first_undefined != SIZE_MAX) {
      return error_at(offsets_[first_undefined], "undefined rule '", names_[first_undefined], "'");
    }
    const auto root = named_.find("root");
    if (root == named_.end()) {
      return make_error(ErrorCode::kInvalidArgument,
                        "grammar: there is no rule named 'root' (the start rule)");
    }
    Grammar grammar;
    grammar.root = root->second;
    for (size_t r = 0; r < rules_.size(); ++r) {
      grammar.rule_start.push_back(static_cast<uint32_t>(grammar.elements.size()));
      grammar.elements.insert(grammar.elements.end(), rules_[r].begin(), rules_[r].end());
    }
    grammar.rule_names = std::move(names_);
    SINTER_TRY(check_left_recursion(grammar));
    return grammar;
  }

  // A rule is left-recursive when it can reach itself through leftmost references, where a
  // reference is leftmost if everything before it in its alternative can match the empty string.
  // The matcher's expansion of such a rule would never end.
  Status check_left_recursion(const Grammar& g) const {
    const size_t n = g.rule_start.size();
    // Rules that can match the empty string, to a fixed point.
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        bool all_nullable = true;
        for (size_t i = g.rule_start[r];; ++i) {
          const GrammarElement& e = g.elements[i];
          if (ends_alternative(e)) {
            if (all_nullable) {
              nullable[r] = changed = true;
              break;
            }
            if (e.type == Type::kEnd) break;
            all_nullable = true;
          } else if (e.type != Type::kRuleRef || !nullable[e.value]) {
            all_nullable = false;
          }
        }
      }
    }
    // Leftmost references, then a depth-first search for a cycle (iterative: hostile grammars
    // may chain many rules).
    std::vector<std::vector<uint32_t>> leftmost(n);
    for (size_t r = 0; r < n; ++r) {
      bool at_left = true;
      for (size_t i = g.rule_start[r];; ++i) {
        const GrammarElement& e = g.elements[i];
        if (ends_alternative(e)) {
          if (e.type == Type::kEnd) break;
          at_left = true;
        } else if (e.type == Type::kRuleRef) {
          if (at_left) leftmost[r].push_back(e.value);
          at_left = at_left && nullable[e.value];
        } else {
          at_left = false;
        }
      }
    }
    enum : uint8_t { kUnseen, kOpen, kDone };
    std::vector<uint8_t> state(n, kUnseen);
    std::vector<std::pair<uint32_t, size_t>> path;  // (rule, next edge)
    for (size_t start = 0; start < n; ++start) {
      if (state[start] != kUnseen) continue;
      path.push_back({static_cast<uint32_t>(start), 0});
      state[start] = kOpen;
      while (!path.empty()) {
        auto& [rule, edge] = path.back();
        if (edge == leftmost[rule].size()) {
          state[rule] = kDone;
          path.pop_back();
          continue;
        }
        const uint32_t next = leftmost[rule][edge++];
        if (state[next] == kOpen) {
          return error_at(offsets_[next], "rule '", g.rule_names[next],
                          "' is left-recursive (it can reach itself before matching any character)");
        }
        if (state[next] == kUnseen) {
          state[next] = kOpen;
          path.push_back({next, 0});
        }
      }
    }
    return ok_status();
  }

  std::string_view text_;
  GbnfLimits limits_;
  size_t pos_ = 0;
  size_t element_count_ = 0;
  std::unordered_map<std::string, uint32_t> named_;
  std::vector<Rule> rules_;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  std::vector<size_t> offsets_;  // definition, or first reference while undefined
};

}  // namespace

Result<Grammar> parse_gbnf(std::string_view text, const GbnfLimits& limits) {
  return GbnfParser(text, limits).parse();
}

}  // namespace sinter
