#include "sample/json_schema/merge.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace sinter::json_schema {
namespace {

using json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 16> kAnnotations = {
    "title",    "description", "default",     "examples",   "$schema",         "$id",
    "$comment", "deprecated",  "readOnly",    "writeOnly",  "contentEncoding", "contentMediaType",
    "$anchor",  "$defs",       "definitions", "$vocabulary"};

Error no_value(const std::string& path) {
  return make_error(ErrorCode::kInvalidArgument, "schema allOf at ", path, " admits no value");
}

Error conflict(const std::string& keyword, const std::string& path) {
  return make_error(ErrorCode::kUnsupported, "schema allOf at ", path, ": the components' '", keyword,
                    "' cannot be merged (not supported)");
}

std::vector<std::string> types_of(const json& type) {
  if (type.is_string()) return {type.get<std::string>()};
  std::vector<std::string> out;
  if (type.is_array()) {
    for (const json& t : type) {
      if (t.is_string()) out.push_back(t.get<std::string>());
    }
  }
  return out;
}

// Every property the other component names must be one of this component's properties when this
// one restricts additional properties; otherwise the merge would admit what this one rejects.
Status check_additional(const json& restricting, const json& other, const std::string& path) {
  if (!restricting.contains("additionalProperties") || restricting["additionalProperties"] == json(true))
    return ok_status();
  const json empty = json::object();
  const json& own = restricting.contains("properties") ? restricting["properties"] : empty;
  if (other.contains("properties") && other["properties"].is_object()) {
    for (const auto& [name, schema] : other["properties"].items()) {
      if (!own.is_object() || !own.contains(name)) return conflict("additionalProperties", path);
    }
  }
  return ok_status();
}

bool is_lower_bound(const std::string& keyword) {
  return keyword == "minLength" || keyword == "minItems" || keyword == "minimum" ||
         keyword == "minProperties";
}

bool is_upper_bound(const std::string& keyword) {
  return keyword == "maxLength" || keyword == "maxItems" || keyword == "maximum" ||
         keyword == "maxProperties";
}

Result<json> merge_two(json a, const json& b, const std::string& path) {
  SINTER_TRY(check_additional(a, b, path));
  SINTER_TRY(check_additional(b, a, path));
  for (const auto& [keyword, value] : b.items()) {
    if (!a.contains(keyword)) {
      a[keyword] = value;
      continue;
    }
    json& mine = a[keyword];
    if (mine == value || is_annotation_keyword(keyword)) continue;
    if (keyword == "properties" && mine.is_object() && value.is_object()) {
      for (const auto& [name, schema] : value.items()) {
        if (mine.contains(name)) {
          mine[name] = json{{"allOf", json::array({mine[name], schema})}};
        } else {
          mine[name] = schema;
        }
      }
    } else if (keyword == "required" && mine.is_array() && value.is_array()) {
      for (const json& name : value) {
        if (std::find(mine.begin(), mine.end(), name) == mine.end()) mine.push_back(name);
      }
    } else if (keyword == "type") {
      const std::vector<std::string> theirs = types_of(value);
      json common = json::array();
      for (const std::string& t : types_of(mine)) {
        const bool integer_in_number = t == "integer" && std::count(theirs.begin(), theirs.end(), "number");
        std::string kept;
        if (std::count(theirs.begin(), theirs.end(), t) || integer_in_number) kept = t;
        // "number" ∧ "integer" is "integer".
        if (t == "number" && std::count(theirs.begin(), theirs.end(), "integer")) kept = "integer";
        if (!kept.empty() && std::find(common.begin(), common.end(), kept) == common.end())
          common.push_back(kept);
      }
      if (common.empty()) return no_value(path);
      mine = common.size() == 1 ? common[0] : common;
    } else if (is_lower_bound(keyword) && mine.is_number() && value.is_number()) {
      if (value.get<double>() > mine.get<double>()) mine = value;
    } else if (is_upper_bound(keyword) && mine.is_number() && value.is_number()) {
      if (value.get<double>() < mine.get<double>()) mine = value;
    } else if (keyword == "enum" && mine.is_array() && value.is_array()) {
      json common = json::array();
      for (const json& v : mine) {
        if (std::find(value.begin(), value.end(), v) != value.end()) common.push_back(v);
      }
      if (common.empty()) return no_value(path);
      mine = common;
    } else if (keyword == "additionalProperties" && (mine == json(false) || value == json(false))) {
      mine = false;
    } else if (keyword == "additionalProperties" && mine == json(true)) {
      mine = value;
    } else if ((keyword == "additionalProperties" && value == json(true))) {
      continue;
    } else if (keyword == "additionalProperties" || keyword == "items") {
      mine = json{{"allOf", json::array({mine, value})}};
    } else if (keyword == "const") {
      return no_value(path);  // two different constants
    } else {
      return conflict(keyword, path);
    }
  }
  return a;
}

Result<json> flatten(const json& component, const std::string& path, const RefResolver& resolve, int budget) {
  if (budget <= 0)
    return make_error(ErrorCode::kUnsupported, "schema at ", path, ": $ref/allOf nested too deeply");
  if (component.is_boolean()) {
    if (!component.get<bool>()) return no_value(path);
    return json::object();
  }
  if (!component.is_object())
    return make_error(ErrorCode::kInvalidArgument, "schema at ", path, " is not an object or a boolean");
  json out = component;
  if (out.contains("$ref")) {
    if (!out["$ref"].is_string())
      return make_error(ErrorCode::kInvalidArgument, "schema $ref at ", path, " is not a string");
    const std::string ref = out["$ref"].get<std::string>();
    out.erase("$ref");
    SINTER_ASSIGN(const json* target, resolve(ref, path + "/$ref"));
    SINTER_ASSIGN(json resolved, flatten(*target, path + "/$ref", resolve, budget - 1));
    SINTER_ASSIGN(out, merge_two(std::move(resolved), out, path));
  }
  if (out.contains("allOf")) {
    SINTER_ASSIGN(out, merge_all_of(out, path, resolve, budget - 1));
  }
  return out;
}

}  // namespace

bool is_annotation_keyword(const std::string& keyword) {
  return std::find(kAnnotations.begin(), kAnnotations.end(), keyword) != kAnnotations.end();
}

Result<json> merge_all_of(const json& schema, const std::string& path, const RefResolver& resolve,
                          int budget) {
  if (budget <= 0)
    return make_error(ErrorCode::kUnsupported, "schema at ", path, ": $ref/allOf nested too deeply");
  const json& components = schema["allOf"];
  if (!components.is_array() || components.empty())
    return make_error(ErrorCode::kInvalidArgument, "schema allOf at ", path, " is not a non-empty array");
  json merged = schema;
  merged.erase("allOf");
  for (size_t i = 0; i < components.size(); ++i) {
    const std::string component_path = path + "/allOf/" + std::to_string(i);
    SINTER_ASSIGN(json component, flatten(components[i], component_path, resolve, budget - 1));
    SINTER_ASSIGN(merged, merge_two(std::move(merged), component, path));
  }
  return merged;
}

}  // namespace sinter::json_schema
