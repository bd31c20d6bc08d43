// Renaming a grammar's rules, so that several converted grammars can share one.

#include "chat/tools/tool_grammar.h"

namespace sinter::chat::tools {
namespace {

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// Offset one past the literal or class starting at text[pos] (its opening `open`), or npos.
size_t skip_quoted(std::string_view text, size_t pos, char close) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == close) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Result<std::string> prefix_gbnf_rules(std::string_view gbnf, std::string_view prefix) {
  std::string out;
  out.reserve(gbnf.size() + gbnf.size() / 4);
  size_t i = 0;
  while (i < gbnf.size()) {
    char c = gbnf[i];
    size_t end = i + 1;
    if (c == '"' || c == '[') {
      end = skip_quoted(gbnf, i, c == '"' ? '"' : ']');
      if (end == std::string_view::npos) {
        return make_error(ErrorCode::kInvalidArgument, "unterminated ",
                          c == '"' ? "literal" : "character class", " at byte ", i, " of the grammar");
      }
    } else if (c == '#') {
      end = gbnf.find('\n', i);
      if (end == std::string_view::npos) end = gbnf.size();
    } else if (c == '{') {
      end = gbnf.find('}', i);
      end = end == std::string_view::npos ? gbnf.size() : end + 1;
    } else if (is_word_char(c)) {
      while (end < gbnf.size() && is_word_char(gbnf[end])) ++end;
      out += prefix;
    }
    out += gbnf.substr(i, end - i);
    i = end;
  }
  return out;
}

}  // namespace sinter::chat::tools
