#include "chat/jinja/template.h"

#include "chat/jinja/globals.h"

namespace sinter::chat::jinja {

Result<Template> Template::parse(std::string_view source, const TemplateOptions& options) {
  SINTER_ASSIGN(Body body, parse_template(source, options.lexer, options.parse));
  Template result;
  result.body_ = std::make_shared<const Body>(std::move(body));
  return result;
}

Result<std::string> Template::render(const Variables& variables, const RenderOptions& options) const {
  auto builtins = std::make_shared<Scope>();
  add_builtin_globals(builtins.get());
  auto globals = std::make_shared<Scope>(builtins);
  for (const auto& [name, value] : variables) globals->set(name, value);
  Interpreter interpreter(options);
  return interpreter.render(*body_, globals);
}

}  // namespace sinter::chat::jinja
