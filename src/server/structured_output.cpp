#include "server/structured_output.h"

#include "sample/json_schema_grammar.h"
#include "server/json_fields.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;

// A schema's grammar, its errors named after the request field that held it.
Result<std::optional<std::string>> schema_grammar(const Json& schema, const char* field) {
  auto grammar = json_schema_to_grammar(schema);
  if (!grammar) {
    return make_error(ErrorCode::kInvalidArgument, field, ": ", grammar.error().message());
  }
  return std::optional<std::string>(std::move(grammar).value());
}

}  // namespace

Result<std::optional<std::string>> ollama_format_grammar(const Json* format) {
  if (format == nullptr || format->is_null()) return std::optional<std::string>();
  if (format->is_string()) {
    const auto& text = format->get_ref<const std::string&>();
    if (text.empty()) return std::optional<std::string>();
    if (text == "json") return std::optional<std::string>(json_object_grammar());
    return make_error(ErrorCode::kInvalidArgument, "format must be \"json\" or a JSON schema object, got \"",
                      text.size() > 64 ? text.substr(0, 64) + "..." : text, "\"");
  }
  if (format->is_object()) return schema_grammar(*format, "format");
  return make_error(ErrorCode::kInvalidArgument, "format must be \"json\" or a JSON schema object, got ",
                    describe_json(*format));
}

Result<std::optional<std::string>> openai_response_format_grammar(const Json* response_format) {
  if (response_format == nullptr || response_format->is_null()) return std::optional<std::string>();
  if (!response_format->is_object()) {
    return make_error(ErrorCode::kInvalidArgument, "response_format must be an object, got ",
                      describe_json(*response_format));
  }
  JsonFields fields(*response_format, "response_format.");
  SINTER_ASSIGN(const auto type, fields.string("type"));
  const std::string given = type.value_or("text");
  if (given == "text") return std::optional<std::string>();
  if (given == "json_object") return std::optional<std::string>(json_object_grammar());
  if (given != "json_schema") {
    return make_error(ErrorCode::kInvalidArgument, "response_format.type '", given,
                      "' is not supported (text, json_object, json_schema)");
  }
  SINTER_ASSIGN(const Json* described, fields.object("json_schema"));
  if (described == nullptr) {
    return make_error(ErrorCode::kInvalidArgument,
                      "response_format.json_schema is required for type json_schema");
  }
  JsonFields schema_fields(*described, "response_format.json_schema.");
  SINTER_ASSIGN(const auto name, schema_fields.string("name"));
  SINTER_ASSIGN(const auto strict, schema_fields.boolean("strict"));
  (void)name;    // the schema's name only labels it
  (void)strict;  // output always follows the schema (strict or not)
  SINTER_ASSIGN(const Json* schema, schema_fields.object("schema"));
  // No schema: any JSON value, as llama-server does.
  if (schema == nullptr) return std::optional<std::string>(json_value_grammar());
  return schema_grammar(*schema, "response_format.json_schema.schema");
}

Result<std::optional<std::string>> request_grammar(const Json* grammar,
                                                   std::optional<std::string> from_format,
                                                   const char* format_field) {
  if (grammar == nullptr || grammar->is_null()) return from_format;
  if (!grammar->is_string()) {
    return make_error(ErrorCode::kInvalidArgument, "grammar must be a string (GBNF), got ",
                      describe_json(*grammar));
  }
  const auto& text = grammar->get_ref<const std::string&>();
  if (text.empty()) return from_format;
  if (from_format) {
    return make_error(ErrorCode::kInvalidArgument, "give either grammar or ", format_field, ", not both");
  }
  return std::optional<std::string>(text);
}

}  // namespace sinter::server
