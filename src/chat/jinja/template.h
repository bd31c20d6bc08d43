// A parsed Jinja template, rendered as Hugging Face renders chat templates: Jinja2's
// ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the loop controls extension,
// tojson without HTML escaping, and the raise_exception and strftime_now globals.
//
//   SINTER_ASSIGN(auto tmpl, jinja::Template::parse("{{ greeting }}, {{ name | upper }}!"));
//   SINTER_ASSIGN(std::string text, tmpl.render({{"greeting", "Hello"}, {"name", "sinter"}}));
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/lexer.h"
#include "chat/jinja/parser.h"
#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

struct TemplateOptions {
  LexerOptions lexer;
  ParseLimits parse;
};

using Variables = std::vector<std::pair<std::string, Value>>;

class Template {
 public:
  // Syntax errors, unknown filters and tests, and `break` outside a loop are errors here, with
  // "line L, column C: TemplateSyntaxError: ..." in the message.
  static Result<Template> parse(std::string_view source, const TemplateOptions& options = {});

  // Renders with `variables` visible to the template (they shadow the built-in globals).
  Result<std::string> render(const Variables& variables, const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace sinter::chat::jinja
