#include "chat/tools/xml_parameters.h"

#include <algorithm>

#include "sample/json_schema_grammar.h"

namespace sinter::chat::tools {
namespace {

using Json = nlohmann::ordered_json;

const char* json_type(const Json& value) {
  if (value.is_string()) return "string";
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "boolean";
  if (value.is_null()) return "null";
  return value.is_array() ? "array" : "object";
}

// The properties of a `parameters` schema (null when it has none).
const Json* properties_of(const Json& parameters) {
  if (!parameters.is_object()) return nullptr;
  const auto properties = parameters.find("properties");
  return properties != parameters.end() && properties->is_object() ? &*properties : nullptr;
}

}  // namespace

std::vector<std::string> schema_types(const Json& schema) {
  std::vector<std::string> types;
  if (!schema.is_object()) return types;
  if (const auto type = schema.find("type"); type != schema.end()) {
    if (type->is_string()) types.push_back(type->get<std::string>());
    if (type->is_array()) {
      for (const Json& t : *type)
        if (t.is_string()) types.push_back(t.get<std::string>());
    }
  } else if (const auto values = schema.find("enum"); values != schema.end() && values->is_array()) {
    for (const Json& v : *values) {
      const std::string name = json_type(v);
      if (std::find(types.begin(), types.end(), name) == types.end()) types.push_back(name);
    }
  }
  return types;
}

std::map<std::string, std::vector<std::string>> parameter_types(const Json& parameters) {
  std::map<std::string, std::vector<std::string>> types;
  if (const Json* properties = properties_of(parameters)) {
    for (const auto& [name, schema] : properties->items()) types[name] = schema_types(schema);
  }
  return types;
}

Result<std::vector<ToolGrammarParameter>> xml_parameters(const Json& parameters, std::string_view prefix,
                                                         std::string& rules) {
  std::vector<ToolGrammarParameter> out;
  const Json* properties = properties_of(parameters);
  if (properties == nullptr) return out;
  std::vector<std::string> required;
  if (const auto list = parameters.find("required"); list != parameters.end() && list->is_array()) {
    for (const Json& name : *list)
      if (name.is_string()) required.push_back(name.get<std::string>());
  }
  size_t index = 0;
  for (const auto& [name, schema] : properties->items()) {
    ToolGrammarParameter parameter;
    parameter.name = name;
    parameter.required = std::find(required.begin(), required.end(), name) != required.end();
    const std::string rule_prefix = std::string(prefix) + std::to_string(index++) + "-";
    const std::vector<std::string> types = schema_types(schema);
    if (types.size() == 1 && types.front() == "string") {
      // Bare text; a string enum's values as they are written (no quotes).
      if (const auto values = schema.find("enum"); values != schema.end() && values->is_array()) {
        std::string alternatives;
        for (const Json& v : *values) {
          if (!v.is_string()) continue;
          alternatives += (alternatives.empty() ? "" : " | ") + gbnf_literal(v.get<std::string>());
        }
        if (!alternatives.empty()) {
          rules += rule_prefix + "root ::= " + alternatives + "\n";
          parameter.value_rule = rule_prefix + "root";
        }
      }
    } else {
      Json value_schema = schema;
      for (const char* defs : {"$defs", "definitions"}) {
        if (parameters.contains(defs) && value_schema.is_object() && !value_schema.contains(defs))
          value_schema[defs] = parameters[defs];
      }
      auto value = json_schema_to_grammar(value_schema);
      if (!value)
        return make_error(ErrorCode::kInvalidArgument, "properties.", name, ": ", value.error().message());
      SINTER_ASSIGN(std::string renamed, prefix_gbnf_rules(*value, rule_prefix));
      rules += renamed;
      parameter.value_rule = rule_prefix + "root";
    }
    out.push_back(std::move(parameter));
  }
  return out;
}

}  // namespace sinter::chat::tools
