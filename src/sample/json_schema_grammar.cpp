#include "sample/json_schema_grammar.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "core/json_parse.h"
#include "sample/json_schema/converter.h"
#include "sample/json_schema/primitives.h"

namespace sinter {
namespace {

// `root ::= <primitive>` and the primitives it uses, for the fixed grammars.
std::string primitive_grammar(std::string_view primitive, JsonWhitespace whitespace) {
  json_schema::GbnfRules rules(JsonSchemaLimits{}, whitespace);
  auto name = rules.primitive(primitive);
  // The fixed rules are far below every limit: these cannot fail.
  if (!name || !rules.set_root(*name)) return std::string();
  return rules.text().value_or(std::string());
}

}  // namespace

Result<std::string> json_schema_to_grammar(const nlohmann::ordered_json& schema,
                                           const JsonSchemaOptions& options) {
  // Copying, comparing and printing JSON recurse; a document deeper than any schema the limits
  // admit is refused before any of that (the walk here keeps its own stack).
  const int max_nesting = 4 * options.limits.max_depth + 8;  // a schema level nests 1-3 JSON levels
  std::vector<std::pair<const nlohmann::ordered_json*, int>> stack = {{&schema, 0}};
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    if (depth > max_nesting)
      return make_error(ErrorCode::kUnsupported, "schema is nested deeper than ", max_nesting,
                        " JSON levels");
    if (value->is_structured()) {
      for (const auto& child : *value) stack.emplace_back(&child, depth + 1);
    }
  }
  return json_schema::Converter(schema, options).run();
}

Result<std::string> json_schema_text_to_grammar(std::string_view schema_json,
                                                const JsonSchemaOptions& options) {
  if (schema_json.size() > options.limits.max_schema_bytes)
    return make_error(ErrorCode::kUnsupported, "schema of ", schema_json.size(),
                      " bytes is above the limit of ", options.limits.max_schema_bytes);
  SINTER_ASSIGN(const nlohmann::ordered_json schema,
                parse_json<nlohmann::ordered_json>(schema_json, "schema"));
  return json_schema_to_grammar(schema, options);
}

std::string json_object_grammar(JsonWhitespace whitespace) { return primitive_grammar("object", whitespace); }

std::string json_value_grammar(JsonWhitespace whitespace) { return primitive_grammar("value", whitespace); }

}  // namespace sinter
