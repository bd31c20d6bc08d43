// The parser of Go's text/template (text/template/parse/parse.go): builds the trees of a template
// source (the main template, named "", and those of {{define}} and {{block}}), with Go's checks
// and Go's error messages ("template: :3: unexpected \"}\" in operand").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "chat/gotemplate/ast.h"
#include "sinter/result.h"

namespace sinter::chat::gotemplate {

struct ParseOptions {
  // Whether a function name is defined (Go rejects calls of unknown functions when parsing).
  std::function<bool(std::string_view)> is_function;
  // Nesting of blocks and parentheses beyond this is an error (Go has no limit, but a deep
  // recursion must not exhaust the stack).
  int max_depth = 500;
};

// Parses `source` as the template named `name`.
Result<TreeSet> parse_template(std::string_view source, const std::string& name, const ParseOptions& options);

}  // namespace sinter::chat::gotemplate
