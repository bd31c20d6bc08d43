#include "sample/json_schema/converter.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "sample/json_schema/merge.h"

namespace sinter::json_schema {
namespace {

using json = nlohmann::ordered_json;

// JSON Schema keywords that constrain values and that the converter does not implement. Other
// keywords that JSON Schema does not define (vendor extensions) are ignored, as validators do.
constexpr std::array<std::string_view, 18> kUnsupported = {"not",
                                                           "if",
                                                           "then",
                                                           "else",
                                                           "patternProperties",
                                                           "propertyNames",
                                                           "dependentRequired",
                                                           "dependentSchemas",
                                                           "dependencies",
                                                           "unevaluatedItems",
                                                           "contains",
                                                           "minContains",
                                                           "maxContains",
                                                           "multipleOf",
                                                           "$dynamicRef",
                                                           "$dynamicAnchor",
                                                           "$recursiveRef",
                                                           "$recursiveAnchor"};

constexpr std::array<std::string_view, 7> kTypes = {"string", "number", "integer", "boolean",
                                                    "null",   "object", "array"};

// Keywords that say which type a schema without `type` is about.
constexpr std::array<std::string_view, 6> kObjectKeywords = {"properties",    "additionalProperties",
                                                             "required",      "minProperties",
                                                             "maxProperties", "unevaluatedProperties"};
constexpr std::array<std::string_view, 5> kArrayKeywords = {"items", "prefixItems", "minItems", "maxItems",
                                                            "uniqueItems"};
constexpr std::array<std::string_view, 4> kStringKeywords = {"minLength", "maxLength", "pattern", "format"};
constexpr std::array<std::string_view, 4> kNumberKeywords = {"minimum", "maximum", "exclusiveMinimum",
                                                             "exclusiveMaximum"};

template <size_t N>
bool has_any(const json& schema, const std::array<std::string_view, N>& keywords) {
  for (std::string_view k : keywords) {
    if (schema.contains(std::string(k))) return true;
  }
  return false;
}

std::string json_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The type a schema without `type` constrains, judged from its keywords; "" for any value.
std::string inferred_type(const json& schema) {
  if (has_any(schema, kObjectKeywords)) return "object";
  if (has_any(schema, kArrayKeywords)) return "array";
  if (has_any(schema, kStringKeywords)) return "string";
  if (has_any(schema, kNumberKeywords)) return "number";
  return "";
}

bool value_has_type(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() || (value.is_number_float() && std::isfinite(value.get<double>()) &&
                                         std::floor(value.get<double>()) == value.get<double>());
  }
  return false;
}

// The keywords other than `skip` that constrain (not annotations, not $defs): these apply
// alongside anyOf/oneOf/$ref, so each alternative is merged with them.
json constraining_siblings(const json& schema, std::string_view skip) {
  json out = json::object();
  for (const auto& [keyword, value] : schema.items()) {
    if (keyword != skip && !is_annotation_keyword(keyword)) out[keyword] = value;
  }
  return out;
}

}  // namespace

std::string pointer_append(const std::string& path, std::string_view token) {
  std::string out = path + "/";
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Status check_repetition(int64_t min, const char* keyword, const std::string& path,
                        const JsonSchemaLimits& limits) {
  if (min > limits.max_repetition)
    return make_error(ErrorCode::kUnsupported, "schema keyword '", keyword, "' at ", path, " asks for ", min,
                      ", above the limit of ", limits.max_repetition);
  return ok_status();
}

Converter::Converter(const json& root, const JsonSchemaOptions& options)
    : root_(root), options_(options), rules_(options.limits, options.whitespace) {}

Result<std::string> Converter::run() {
  SINTER_ASSIGN(std::string body, visit(root_, "", "root", 0));
  SINTER_TRY(rules_.set_root(body));
  return rules_.text();
}

Status Converter::check_keywords(const json& schema, const std::string& path) const {
  for (const auto& [keyword, value] : schema.items()) {
    const bool unsupported =
        std::find(kUnsupported.begin(), kUnsupported.end(), keyword) != kUnsupported.end();
    // `unevaluatedProperties: false` holds for every object generated here: each property comes
    // from `properties` or `additionalProperties`, which evaluate it.
    const bool unevaluated = keyword == "unevaluatedProperties" && !value.is_boolean();
    if (unsupported || unevaluated)
      return make_error(ErrorCode::kUnsupported, "schema keyword '", keyword, "' at ",
                        path.empty() ? std::string("/") : path, " is not supported");
  }
  return ok_status();
}

Result<const json*> Converter::resolve(const std::string& ref, const std::string& path) const {
  if (ref.empty() || ref[0] != '#')
    return make_error(ErrorCode::kUnsupported, "schema $ref '", ref, "' at ", path,
                      " is not supported: only local references (#/$defs/...) are");
  const json* at = &root_;
  size_t pos = 1;
  if (ref.size() > 1 && ref[1] != '/')
    return make_error(ErrorCode::kUnsupported, "schema $ref '", ref, "' at ", path,
                      " is not supported: anchors are not, only JSON pointers");
  while (pos < ref.size()) {
    size_t end = ref.find('/', pos + 1);
    if (end == std::string::npos) end = ref.size();
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      if (ref[i] == '~' && i + 1 < end && (ref[i + 1] == '0' || ref[i + 1] == '1')) {
        token += ref[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += ref[i];
      }
    }
    if (at->is_object() && at->contains(token)) {
      at = &(*at)[token];
    } else if (at->is_array() && !token.empty() && token.size() < 10 &&
               token.find_first_not_of("0123456789") == std::string::npos && std::stoul(token) < at->size()) {
      at = &(*at)[std::stoul(token)];
    } else {
      return make_error(ErrorCode::kInvalidArgument, "schema $ref '", ref, "' at ", path,
                        " points to nothing");
    }
    pos = end;
  }
  return at;
}

Result<std::string> Converter::visit(const json& schema, const std::string& path, const std::string& hint,
                                     int depth) {
  const std::string where = path.empty() ? "/" : path;
  if (depth > options_.limits.max_depth)
    return make_error(ErrorCode::kUnsupported, "schema at ", where, " is nested deeper than the limit of ",
                      options_.limits.max_depth);
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return rules_.primitive("value");
    return make_error(ErrorCode::kInvalidArgument, "schema at ", where, " is false: it admits no value");
  }
  if (!schema.is_object())
    return make_error(ErrorCode::kInvalidArgument, "schema at ", where, " is not an object or a boolean");
  SINTER_TRY(check_keywords(schema, path));

  if (schema.contains("$ref")) {
    if (!schema["$ref"].is_string())
      return make_error(ErrorCode::kInvalidArgument, "schema $ref at ", where, " is not a string");
    if (constraining_siblings(schema, "$ref").empty())
      return visit_ref(schema["$ref"].get<std::string>(), pointer_append(path, "$ref"), depth);
    // Siblings of $ref constrain too (draft 2019-09 on): the target and the siblings together.
    const json combined = {
        {"allOf", json::array({{{"$ref", schema["$ref"]}}, constraining_siblings(schema, "$ref")})}};
    return visit(combined, path, hint, depth + 1);
  }
  if (schema.contains("allOf")) {
    const RefResolver resolver = [this](const std::string& ref, const std::string& at) {
      return resolve(ref, at);
    };
    SINTER_ASSIGN(json merged, merge_all_of(schema, path, resolver, options_.limits.max_depth));
    return visit(merged, path, hint, depth + 1);
  }
  if (schema.contains("anyOf") && schema.contains("oneOf"))
    return make_error(ErrorCode::kUnsupported, "schema at ", where,
                      ": anyOf together with oneOf is not supported");
  if (schema.contains("anyOf")) return visit_alternatives(schema, "anyOf", path, hint, depth);
  if (schema.contains("oneOf")) return visit_alternatives(schema, "oneOf", path, hint, depth);
  if (schema.contains("const") || schema.contains("enum")) return visit_literals(schema, path, hint);

  if (!schema.contains("type")) {
    const std::string type = inferred_type(schema);
    if (type.empty()) return rules_.primitive("value");
    return visit_type(schema, type, path, hint, depth);
  }
  const json& type = schema["type"];
  if (type.is_string()) return visit_type(schema, type.get<std::string>(), path, hint, depth);
  if (!type.is_array() || type.empty())
    return make_error(ErrorCode::kInvalidArgument, "schema type at ", where,
                      " is not a string or a non-empty array");
  std::string body;
  for (size_t i = 0; i < type.size(); ++i) {
    if (!type[i].is_string())
      return make_error(ErrorCode::kInvalidArgument, "schema type at ", where, " lists a non-string");
    SINTER_ASSIGN(std::string term, visit_type(schema, type[i].get<std::string>(), path,
                                               hint + "-" + type[i].get<std::string>(), depth));
    body += (i ? " | " : "") + term;
  }
  return rules_.add(hint, body);
}

Result<std::string> Converter::visit_ref(const std::string& ref, const std::string& path, int depth) {
  if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
  SINTER_ASSIGN(const json* target, resolve(ref, path));
  // A chain of refs that leads back to itself without content would be a rule that is only itself.
  const json* at = target;
  for (int step = 0; at->is_object() && at->size() == 1 && at->contains("$ref") && (*at)["$ref"].is_string();
       ++step) {
    if ((*at)["$ref"].get<std::string>() == ref || step > options_.limits.max_depth)
      return make_error(ErrorCode::kInvalidArgument, "schema $ref '", ref, "' at ", path, " is circular");
    SINTER_ASSIGN(at, resolve((*at)["$ref"].get<std::string>(), path));
  }
  const size_t slash = ref.find_last_of('/');
  const std::string hint =
      slash == std::string::npos || slash + 1 == ref.size() ? "ref" : ref.substr(slash + 1);
  SINTER_ASSIGN(std::string name, rules_.reserve(hint));
  ref_rules_.emplace(ref, name);
  SINTER_ASSIGN(std::string body, visit(*target, ref.substr(1), name, depth + 1));
  SINTER_TRY(rules_.define(name, body));
  return name;
}

Result<std::string> Converter::visit_alternatives(const json& schema, const std::string& keyword,
                                                  const std::string& path, const std::string& hint,
                                                  int depth) {
  const json& alternatives = schema[keyword];
  const std::string where = pointer_append(path, keyword);
  if (!alternatives.is_array() || alternatives.empty())
    return make_error(ErrorCode::kInvalidArgument, "schema ", keyword, " at ", where,
                      " is not a non-empty array");
  const json siblings = constraining_siblings(schema, keyword);
  std::string body;
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const std::string alternative_path = where + "/" + std::to_string(i);
    std::string term;
    if (siblings.empty()) {
      SINTER_ASSIGN(term,
                    visit(alternatives[i], alternative_path, hint + "-" + std::to_string(i), depth + 1));
    } else {
      const json combined = {{"allOf", json::array({siblings, alternatives[i]})}};
      SINTER_ASSIGN(term, visit(combined, alternative_path, hint + "-" + std::to_string(i), depth + 1));
    }
    body += (i ? " | " : "") + term;
  }
  return rules_.add(hint, body);
}

Result<std::string> Converter::visit_literals(const json& schema, const std::string& path,
                                              const std::string& hint) {
  const std::string where = path.empty() ? "/" : path;
  json values = json::array();
  if (schema.contains("const")) {
    values.push_back(schema["const"]);
  } else if (schema["enum"].is_array()) {
    values = schema["enum"];
  } else {
    return make_error(ErrorCode::kInvalidArgument, "schema enum at ", where, " is not an array");
  }
  // With `type` beside them, only the values of that type are valid.
  std::vector<std::string> types;
  if (schema.contains("type") && schema["type"].is_string())
    types.push_back(schema["type"].get<std::string>());
  if (schema.contains("type") && schema["type"].is_array()) {
    for (const json& t : schema["type"]) {
      if (t.is_string()) types.push_back(t.get<std::string>());
    }
  }
  std::string body;
  for (const json& value : values) {
    const bool typed = types.empty() || std::any_of(types.begin(), types.end(), [&](const std::string& t) {
                         return value_has_type(value, t);
                       });
    if (!typed) continue;
    body += (body.empty() ? "" : " | ") + gbnf_literal(json_text(value));
  }
  if (body.empty())
    return make_error(ErrorCode::kInvalidArgument, "schema enum/const at ", where, " admits no value");
  SINTER_ASSIGN(std::string space, rules_.primitive("space"));
  return rules_.add(hint, "(" + body + ") " + space);
}

Result<std::string> Converter::visit_type(const json& schema, const std::string& type,
                                          const std::string& path, const std::string& hint, int depth) {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end())
    return make_error(ErrorCode::kInvalidArgument, "schema type '", type, "' at ", path.empty() ? "/" : path,
                      " is not a JSON Schema type");
  if (type == "string") return visit_string(schema, path, hint);
  if (type == "number") return visit_number(schema, false, path, hint);
  if (type == "integer") return visit_number(schema, true, path, hint);
  if (type == "boolean") return rules_.primitive("boolean");
  if (type == "null") return rules_.primitive("null");
  if (type == "object") return visit_object(schema, path, hint, depth);
  return visit_array(schema, path, hint, depth);
}

}  // namespace sinter::json_schema
