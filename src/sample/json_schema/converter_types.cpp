// The rules of one type: strings (lengths, patterns, formats), numbers and integers (ranges),
// objects (properties in order, optional ones, additional ones) and arrays (prefix items, item
// counts).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "core/utf8.h"
#include "sample/json_schema/converter.h"
#include "sample/json_schema/integer_range.h"
#include "sample/json_schema/pattern.h"

namespace sinter::json_schema {
namespace {

using nlohmann::ordered_json;
using json = ordered_json;

constexpr const char* kQuote = R"("\"")";  // a GBNF literal for one `"`
// Unbounded integer parts have at most 16 digits, as the `integral-part` rule.
constexpr int64_t kDefaultIntegerBound = 9'999'999'999'999'999;

std::string where(const std::string& path) { return path.empty() ? "/" : path; }

std::string json_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::optional<int64_t>> count_keyword(const json& schema, const char* keyword,
                                             const std::string& path) {
  if (!schema.contains(keyword)) return std::optional<int64_t>();
  const json& value = schema[keyword];
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
      std::floor(value.get<double>()) != value.get<double>())
    return make_error(ErrorCode::kInvalidArgument, "schema keyword '", keyword, "' at ", where(path),
                      " is not a non-negative integer");
  return std::optional<int64_t>(static_cast<int64_t>(std::min(value.get<double>(), 1e15)));
}

// [min, max] of a repetition: max < 0 is unbounded; a max above the limit is capped to it, which
// still generates only valid values.
struct Repetition {
  int min = 0;
  int max = -1;
};

Result<Repetition> repetition(const json& schema, const char* min_keyword, const char* max_keyword,
                              const std::string& path, const JsonSchemaLimits& limits) {
  SINTER_ASSIGN(std::optional<int64_t> min, count_keyword(schema, min_keyword, path));
  SINTER_ASSIGN(std::optional<int64_t> max, count_keyword(schema, max_keyword, path));
  Repetition out;
  out.min = static_cast<int>(std::min<int64_t>(min.value_or(0), INT32_MAX));
  SINTER_TRY(check_repetition(min.value_or(0), min_keyword, path, limits));
  if (max) {
    if (*max < min.value_or(0))
      return make_error(ErrorCode::kInvalidArgument, "schema at ", where(path), ": ", max_keyword, " < ",
                        min_keyword, " admits no value");
    out.max = static_cast<int>(std::min<int64_t>(*max, limits.max_repetition));
  }
  return out;
}

// The integer bounds a number's minimum/maximum keywords allow (draft 4's boolean
// exclusiveMinimum/exclusiveMaximum included); an inclusive range of integers.
struct IntegerBounds {
  std::optional<int64_t> low;
  std::optional<int64_t> high;
};

Result<IntegerBounds> integer_bounds(const json& schema, const std::string& path) {
  IntegerBounds out;
  auto read = [&](const char* keyword, bool lower) -> Status {
    if (!schema.contains(keyword) || schema[keyword].is_boolean()) return ok_status();
    const json& value = schema[keyword];
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      return make_error(ErrorCode::kInvalidArgument, "schema keyword '", keyword, "' at ", where(path),
                        " is not a number");
    const std::string name = keyword;
    const bool exclusive = name.rfind("exclusive", 0) == 0 ||
                           (schema.contains(lower ? "exclusiveMinimum" : "exclusiveMaximum") &&
                            schema[lower ? "exclusiveMinimum" : "exclusiveMaximum"] == json(true));
    const double x = value.get<double>();
    double bound = lower ? (exclusive ? std::floor(x) + 1 : std::ceil(x))
                         : (exclusive ? std::ceil(x) - 1 : std::floor(x));
    bound = std::clamp(bound, -1e18, 1e18);
    const auto integer = static_cast<int64_t>(bound);
    std::optional<int64_t>& slot = lower ? out.low : out.high;
    slot = !slot ? integer : (lower ? std::max(*slot, integer) : std::min(*slot, integer));
    return ok_status();
  };
  SINTER_TRY(read("minimum", true));
  SINTER_TRY(read("exclusiveMinimum", true));
  SINTER_TRY(read("maximum", false));
  SINTER_TRY(read("exclusiveMaximum", false));
  return out;
}

// Numbers i.f with low <= i.f <= high (0 <= low <= high integers): any fraction below high, and
// high itself with an all-zero fraction.
std::string magnitude_with_fraction(int64_t low, int64_t high) {
  std::string out = "(";
  if (low < high) out += integer_range_expression(low, high - 1) + R"( ("." [0-9]{1,16})? | )";
  out += "\"" + std::to_string(high) + R"(" ("." [0]{1,16})?))";
  return out;
}

struct TrieNode {
  std::map<uint32_t, std::unique_ptr<TrieNode>> children;
  bool terminal = false;
};

}  // namespace

Result<std::string> Converter::visit_string(const json& schema, const std::string& path,
                                            const std::string& hint) {
  SINTER_ASSIGN(std::string space, rules_.primitive("space"));
  const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
  if (schema.contains("format") && schema["format"].is_string()) {
    const std::string format = schema["format"].get<std::string>();
    if (format == "date" || format == "time" || format == "date-time" || format == "uuid") {
      if (lengths || schema.contains("pattern"))
        return make_error(ErrorCode::kUnsupported, "schema at ", where(path), ": format '", format,
                          "' together with minLength/maxLength/pattern is not supported");
      return rules_.primitive(format == "uuid" ? format : format + "-string");
    }
    // Other formats are annotations (validators do not assert them by default): a plain string.
  }
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string())
      return make_error(ErrorCode::kInvalidArgument, "schema pattern at ", where(path), " is not a string");
    if (lengths)
      return make_error(ErrorCode::kUnsupported, "schema at ", where(path),
                        ": pattern together with minLength/maxLength is not supported");
    auto expression = pattern_expression(schema["pattern"].get<std::string>(), options_.limits);
    if (!expression) {
      const bool invalid = expression.error().code() == ErrorCode::kInvalidArgument;
      return make_error(expression.error().code(), "schema pattern at ", pointer_append(path, "pattern"),
                        invalid ? " is invalid: " : " is not supported: ", expression.error().message());
    }
    return rules_.add(hint, std::string(kQuote) + " " + *expression + " " + kQuote + " " + space);
  }
  if (!lengths) return rules_.primitive("string");
  SINTER_ASSIGN(Repetition count, repetition(schema, "minLength", "maxLength", path, options_.limits));
  SINTER_ASSIGN(std::string character, rules_.primitive("char"));
  return rules_.add(hint, std::string(kQuote) + " " + gbnf_repeat(character, count.min, count.max) + " " +
                              kQuote + " " + space);
}

Result<std::string> Converter::visit_number(const json& schema, bool integer, const std::string& path,
                                            const std::string& hint) {
  SINTER_ASSIGN(IntegerBounds bounds, integer_bounds(schema, path));
  if (!bounds.low && !bounds.high) return rules_.primitive(integer ? "integer" : "number");
  SINTER_ASSIGN(std::string space, rules_.primitive("space"));
  // An open side reaches 16 digits, or the far bound's own size when that is larger.
  const int64_t low = bounds.low.value_or(
      bounds.high && *bounds.high < -kDefaultIntegerBound ? -kMaxIntegerBound : -kDefaultIntegerBound);
  const int64_t high = bounds.high.value_or(
      bounds.low && *bounds.low > kDefaultIntegerBound ? kMaxIntegerBound : kDefaultIntegerBound);
  if (low > high)
    return make_error(ErrorCode::kInvalidArgument, "schema at ", where(path), ": the ",
                      integer ? "integer" : "number", " bounds admit no value",
                      integer ? "" : " with an integer part sinter can generate");
  std::string expression;
  if (integer) {
    expression = integer_range_expression(low, high);
  } else if (low >= 0) {
    expression = magnitude_with_fraction(low, high);
  } else if (high <= 0) {
    expression = "\"-\" " + magnitude_with_fraction(-high, -low);
  } else {
    expression =
        "(\"-\" " + magnitude_with_fraction(0, -low) + " | " + magnitude_with_fraction(0, high) + ")";
  }
  return rules_.add(hint, expression + " " + space);
}

Result<std::string> Converter::key_excluding(const std::vector<std::string>& names, const std::string& hint) {
  TrieNode root;
  for (const std::string& name : names) {
    TrieNode* node = &root;
    for (size_t pos = 0; pos < name.size();) {
      auto& child = node->children[utf8_decode(name, &pos)];
      if (!child) child = std::make_unique<TrieNode>();
      node = child.get();
    }
    node->terminal = true;
  }
  SINTER_ASSIGN(std::string character, rules_.primitive("char"));
  // A key differs from every name: it stops inside the trie where no name ends, or leaves it with
  // a character no name has there (an unescaped one: an escape could spell a name's character).
  std::function<Result<std::string>(const TrieNode&, int)> expression =
      [&](const TrieNode& node, int depth) -> Result<std::string> {
    std::string excluded;
    for (const auto& [c, child] : node.children) {
      if (c >= 0x20 && c != '"' && c != '\\') excluded += gbnf_class_char(c);
    }
    std::string body = "[^" + excluded + R"("\\\x00-\x1F] )" + character + "*";
    for (const auto& [c, child] : node.children) {
      SINTER_ASSIGN(std::string rest, expression(*child, depth + 1));
      body += " | " + json_char_literal(c) + " " + rest;
    }
    std::string term = "(" + body + ")" + (node.terminal ? "" : "?");
    // Long names would nest parentheses as deep as they are long: a rule every 16 characters.
    if (depth % 16 == 15) return rules_.add(hint + "-key", term);
    return term;
  };
  SINTER_ASSIGN(std::string inner, expression(root, 0));
  SINTER_ASSIGN(std::string space, rules_.primitive("space"));
  return rules_.add(hint + "-key", std::string(kQuote) + " " + inner + " " + kQuote + " " + space);
}

Result<std::string> Converter::visit_object(const json& schema, const std::string& path,
                                            const std::string& hint, int depth) {
  const json empty = json::object();
  const json& properties = schema.contains("properties") ? schema["properties"] : empty;
  if (!properties.is_object())
    return make_error(ErrorCode::kInvalidArgument, "schema properties at ", where(path), " is not an object");
  std::vector<std::string> required;
  if (schema.contains("required")) {
    if (!schema["required"].is_array())
      return make_error(ErrorCode::kInvalidArgument, "schema required at ", where(path), " is not an array");
    for (const json& name : schema["required"]) {
      if (!name.is_string())
        return make_error(ErrorCode::kInvalidArgument, "schema required at ", where(path),
                          " lists a non-string");
      if (std::find(required.begin(), required.end(), name.get<std::string>()) == required.end())
        required.push_back(name.get<std::string>());
    }
  }
  const json* additional =
      schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
  if (additional != nullptr && !additional->is_boolean() && !additional->is_object())
    return make_error(ErrorCode::kInvalidArgument, "schema additionalProperties at ", where(path),
                      " is not a schema");
  // Like llama.cpp: without `additionalProperties`, an object with properties gets no others (a
  // valid subset); `true` or a schema allows them after the named ones.
  const bool any_additional = additional != nullptr && *additional != json(false);
  SINTER_ASSIGN(std::optional<int64_t> min_properties, count_keyword(schema, "minProperties", path));
  SINTER_ASSIGN(std::optional<int64_t> max_properties, count_keyword(schema, "maxProperties", path));
  if (properties.empty() && required.empty() && (additional == nullptr || *additional == json(true))) {
    if (min_properties.value_or(0) > 0 || max_properties)
      return make_error(ErrorCode::kUnsupported, "schema keyword '",
                        min_properties ? "minProperties" : "maxProperties", "' at ", where(path),
                        " is not supported on an object without properties");
    return rules_.primitive("object");
  }

  SINTER_ASSIGN(std::string space, rules_.primitive("space"));
  std::vector<std::string> required_kvs;
  std::vector<std::string> optional_kvs;
  std::vector<std::string> names;
  auto add_kv = [&](const std::string& name, const json& value_schema, const std::string& value_path,
                    bool is_required) -> Status {
    SINTER_ASSIGN(std::string value, visit(value_schema, value_path, hint + "-" + name, depth + 1));
    SINTER_ASSIGN(std::string kv,
                  rules_.add(hint + "-" + name + "-kv", gbnf_literal(json_text(json(name))) + " " + space +
                                                            " \":\" " + space + " " + value));
    (is_required ? required_kvs : optional_kvs).push_back(kv);
    names.push_back(name);
    return ok_status();
  };
  const std::string properties_path = pointer_append(path, "properties");
  // Required properties first, then the optional ones, each in the order of `properties`.
  for (bool pass_required : {true, false}) {
    for (const auto& [name, value_schema] : properties.items()) {
      const bool is_required = std::find(required.begin(), required.end(), name) != required.end();
      if (is_required == pass_required)
        SINTER_TRY(add_kv(name, value_schema, pointer_append(properties_path, name), is_required));
    }
    if (!pass_required) break;
    for (const std::string& name : required) {
      if (properties.contains(name)) continue;
      if (!any_additional)
        return make_error(ErrorCode::kInvalidArgument, "schema at ", where(path), ": required property '",
                          name, "' is not allowed by additionalProperties");
      SINTER_TRY(add_kv(name, additional->is_object() ? *additional : json(true),
                        pointer_append(path, "additionalProperties"), true));
    }
  }
  const size_t named = required_kvs.size() + optional_kvs.size();
  if (min_properties && static_cast<size_t>(*min_properties) > required_kvs.size())
    return make_error(ErrorCode::kUnsupported, "schema keyword 'minProperties' at ", where(path),
                      " is not supported above the number of required properties");
  if (max_properties && static_cast<size_t>(*max_properties) < named)
    return make_error(ErrorCode::kUnsupported, "schema keyword 'maxProperties' at ", where(path),
                      " is not supported below the number of named properties");
  // maxProperties bounds the additional ones to what the named ones leave (all may be present).
  int most_additional = -1;
  if (any_additional && max_properties) {
    most_additional = static_cast<int>(
        std::min<int64_t>(*max_properties - static_cast<int64_t>(named), options_.limits.max_repetition));
  }

  std::string additional_kv;
  if (any_additional && most_additional != 0) {
    SINTER_ASSIGN(std::string key, key_excluding(names, hint + "-additional"));
    SINTER_ASSIGN(std::string value, visit(*additional, pointer_append(path, "additionalProperties"),
                                           hint + "-additional", depth + 1));
    SINTER_ASSIGN(additional_kv, rules_.add(hint + "-additional-kv", key + " \":\" " + space + " " + value));
  }
  const std::string comma = "\",\" " + space + " ";
  const std::string more_additional =
      additional_kv.empty() ? "" : gbnf_repeat("(" + comma + additional_kv + ")", 0, most_additional);
  // After a first additional entry (when no named one came before it), one fewer may follow.
  const std::string after_first_additional =
      additional_kv.empty() || most_additional == 1
          ? ""
          : gbnf_repeat("(" + comma + additional_kv + ")", 0, most_additional < 0 ? -1 : most_additional - 1);
  std::string body = "\"{\" " + space + " ";
  if (!required_kvs.empty()) {
    for (size_t i = 0; i < required_kvs.size(); ++i) body += (i ? " " + comma : "") + required_kvs[i];
    for (const std::string& kv : optional_kvs) body += " (" + comma + kv + ")?";
    if (!more_additional.empty()) body += " " + more_additional;
  } else {
    // No required property: the first present one has no comma before it. tails[j]: the entries
    // that may follow optional property j - 1, as a rule so that the body stays linear in size.
    const size_t k = optional_kvs.size();
    std::vector<std::string> tails(k + 1);
    tails[k] = more_additional;
    for (size_t j = k; j-- > 1;) {
      SINTER_ASSIGN(tails[j],
                    rules_.add(hint + "-rest", "(" + comma + optional_kvs[j] + ")? " + tails[j + 1]));
    }
    std::string alternatives;
    for (size_t i = 0; i < k; ++i) alternatives += (i ? " | " : "") + optional_kvs[i] + " " + tails[i + 1];
    if (!additional_kv.empty())
      alternatives += (k ? " | " : "") + additional_kv + " " + after_first_additional;
    body += "(" + alternatives + ")?";
  }
  body += " \"}\" " + space;
  return rules_.add(hint, body);
}

Result<std::string> Converter::visit_array(const json& schema, const std::string& path,
                                           const std::string& hint, int depth) {
  if (schema.contains("uniqueItems") && schema["uniqueItems"] == json(true)) {
    const bool at_most_one = schema.contains("maxItems") && schema["maxItems"].is_number() &&
                             schema["maxItems"].get<double>() <= 1;
    if (!at_most_one)
      return make_error(ErrorCode::kUnsupported, "schema keyword 'uniqueItems' at ", where(path),
                        " is not supported");
  }
  // The tuple part: prefixItems (2020-12), or an array `items` (drafts up to 2019-09) with
  // `additionalItems` for the rest.
  const json empty = json::array();
  const json* prefix = &empty;
  std::string prefix_path;
  const json* rest = nullptr;
  std::string rest_path;
  if (schema.contains("prefixItems")) {
    prefix = &schema["prefixItems"];
    prefix_path = pointer_append(path, "prefixItems");
    if (schema.contains("items")) rest = &schema["items"], rest_path = pointer_append(path, "items");
  } else if (schema.contains("items") && schema["items"].is_array()) {
    prefix = &schema["items"];
    prefix_path = pointer_append(path, "items");
    if (schema.contains("additionalItems"))
      rest = &schema["additionalItems"], rest_path = pointer_append(path, "additionalItems");
  } else if (schema.contains("items")) {
    rest = &schema["items"], rest_path = pointer_append(path, "items");
  }
  const bool bounded = schema.contains("minItems") || schema.contains("maxItems");
  if (prefix->empty() && rest == nullptr && !bounded) return rules_.primitive("array");
  if (!prefix->is_array())
    return make_error(ErrorCode::kInvalidArgument, "schema prefixItems at ", where(path), " is not an array");
  SINTER_ASSIGN(Repetition count, repetition(schema, "minItems", "maxItems", path, options_.limits));

  SINTER_ASSIGN(std::string space, rules_.primitive("space"));
  const std::string comma = "\",\" " + space + " ";
  // All prefix items while maxItems allows them (fewer are valid too, but all are never wrong).
  const size_t prefix_count =
      count.max < 0 ? prefix->size() : std::min(prefix->size(), static_cast<size_t>(count.max));
  std::string body = "\"[\" " + space;
  for (size_t i = 0; i < prefix_count; ++i) {
    SINTER_ASSIGN(std::string item, visit((*prefix)[i], prefix_path + "/" + std::to_string(i),
                                          hint + "-" + std::to_string(i), depth + 1));
    body += " " + (i ? comma : "") + item;
  }
  const bool rest_forbidden = rest != nullptr && *rest == json(false);
  const int rest_min = std::max(0, count.min - static_cast<int>(prefix_count));
  const int rest_max = count.max < 0 ? -1 : count.max - static_cast<int>(prefix_count);
  if (rest_forbidden && rest_min > 0)
    return make_error(ErrorCode::kInvalidArgument, "schema at ", where(path),
                      ": minItems is more than the items allowed");
  if (!rest_forbidden && rest_max != 0) {
    SINTER_ASSIGN(std::string item, rest == nullptr ? rules_.primitive("value")
                                                    : visit(*rest, rest_path, hint + "-item", depth + 1));
    if (prefix_count > 0) {
      body += " " + gbnf_repeat("(" + comma + item + ")", rest_min, rest_max);
    } else {
      const std::string more = rest_max == 1
                                   ? ""
                                   : gbnf_repeat("(" + comma + item + ")", std::max(rest_min - 1, 0),
                                                 rest_max < 0 ? -1 : rest_max - 1);
      body += rest_min == 0 ? " (" + item + " " + more + ")?" : " " + item + " " + more;
    }
  }
  body += " \"]\" " + space;
  return rules_.add(hint, body);
}

}  // namespace sinter::json_schema
