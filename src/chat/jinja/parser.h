// The Jinja parser: tokens to a syntax tree, following Jinja2's grammar (parser.py) and its
// compile-time checks (unknown filters and tests, `break` outside a loop, assignment targets).
#pragma once

#include <string_view>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

struct ParseLimits {
  int max_nesting = 200;  // nested expressions and blocks, a guard for the C++ stack
};

Result<Body> parse_template(std::string_view source, const LexerOptions& lexer_options = {},
                            const ParseLimits& limits = {});

}  // namespace sinter::chat::jinja
