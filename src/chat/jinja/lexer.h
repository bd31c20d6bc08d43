// The Jinja lexer: template source to tokens, with Jinja2's whitespace rules as Hugging Face
// configures them: `{%- -%}` strip all whitespace on that side, trim_blocks removes the newline
// after a block or comment tag, lstrip_blocks removes spaces and tabs before a block or comment
// tag at the start of a line, `{%+` / `+%}` opt out, and one trailing newline of the template is
// dropped. Newlines (\r\n, \r) are normalized to \n first. Comments produce no tokens; a
// `{% raw %}` block produces one data token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/errors.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

enum class TokenType {
  kData,           // template text outside tags
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kName,
  kString,  // text holds the decoded value
  kInteger,
  kFloat,
  kOperator,  // text holds the spelling: "+", "//", "==", "(", ...
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::string text;
  int64_t integer = 0;
  double number = 0;
  SourceLocation where;
};

struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Tokens ending with kEof. Invalid UTF-8, an unterminated comment/string/raw block or an
// unexpected character is a TemplateSyntaxError with its line and column.
Result<std::vector<Token>> tokenize(std::string_view source, const LexerOptions& options = {});

// "'name'", "end of template", "'}}'": how Jinja2 describes a token in messages.
std::string describe_token(const Token& token);

}  // namespace sinter::chat::jinja
