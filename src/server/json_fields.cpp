#include "server/json_fields.h"

#include <cmath>

#include "core/json_parse.h"

namespace sinter::server {

Result<Json> parse_json_object(const std::string& body, bool empty_is_object) {
  if (body.empty() && empty_is_object) return Json::object();
  if (body.empty())
    return make_error(ErrorCode::kInvalidArgument, "the request body is empty (expected a JSON object)");
  SINTER_ASSIGN(Json value, parse_json<Json>(body, "the request body"));
  if (!value.is_object()) {
    return make_error(ErrorCode::kInvalidArgument, "the request body must be a JSON object, got ",
                      describe_json(value));
  }
  return value;
}

std::string describe_json(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: {
      std::string text = value.get<std::string>();
      if (text.size() > 40) text = text.substr(0, 40) + "...";
      return "string " + dump_json(Json(text));
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "number " + value.dump();
    case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    default: return value.type_name();
  }
}

std::string dump_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* JsonFields::find(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonFields::has(std::string_view key) const { return find(key) != nullptr; }

Error JsonFields::wrong_type(std::string_view key, const char* expected, const Json& value) const {
  return make_error(ErrorCode::kInvalidArgument, path(key), " must be ", expected, ", got ",
                    describe_json(value));
}

Result<std::optional<double>> JsonFields::number(std::string_view key) const {
  const Json* value = find(key);
  if (value == nullptr) return std::optional<double>();
  if (!value->is_number()) return wrong_type(key, "a number", *value);
  return std::optional<double>(value->get<double>());
}

Result<std::optional<int64_t>> JsonFields::integer(std::string_view key, int64_t min, int64_t max) const {
  const Json* value = find(key);
  if (value == nullptr) return std::optional<int64_t>();
  int64_t result = 0;
  if (value->is_number_unsigned()) {
    const uint64_t u = value->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      return make_error(ErrorCode::kInvalidArgument, path(key), " is out of range: ", u);
    }
    result = static_cast<int64_t>(u);
  } else if (value->is_number_integer()) {
    result = value->get<int64_t>();
  } else if (value->is_number_float()) {
    // JavaScript clients send 3.0 for 3; anything with a fraction is not an integer.
    const double d = value->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15)
      return wrong_type(key, "an integer", *value);
    result = static_cast<int64_t>(d);
  } else {
    return wrong_type(key, "an integer", *value);
  }
  if (result < min || result > max) {
    return make_error(ErrorCode::kInvalidArgument, path(key), " must be between ", min, " and ", max,
                      ", got ", result);
  }
  return std::optional<int64_t>(result);
}

Result<std::optional<bool>> JsonFields::boolean(std::string_view key) const {
  const Json* value = find(key);
  if (value == nullptr) return std::optional<bool>();
  if (!value->is_boolean()) return wrong_type(key, "true or false", *value);
  return std::optional<bool>(value->get<bool>());
}

Result<std::optional<std::string>> JsonFields::string(std::string_view key) const {
  const Json* value = find(key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) return wrong_type(key, "a string", *value);
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::optional<std::vector<std::string>>> JsonFields::strings(std::string_view key) const {
  const Json* value = find(key);
  if (value == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> result;
  if (value->is_string()) {
    result.push_back(value->get<std::string>());
  } else if (value->is_array()) {
    for (size_t i = 0; i < value->size(); ++i) {
      const Json& item = (*value)[i];
      if (!item.is_string()) {
        return make_error(ErrorCode::kInvalidArgument, path(key), "[", i, "] must be a string, got ",
                          describe_json(item));
      }
      result.push_back(item.get<std::string>());
    }
  } else {
    return wrong_type(key, "a string or an array of strings", *value);
  }
  return std::optional<std::vector<std::string>>(std::move(result));
}

Result<const Json*> JsonFields::object(std::string_view key) const {
  const Json* value = find(key);
  if (value != nullptr && !value->is_object()) return wrong_type(key, "an object", *value);
  return value;
}

Result<const Json*> JsonFields::array(std::string_view key) const {
  const Json* value = find(key);
  if (value != nullptr && !value->is_array()) return wrong_type(key, "an array", *value);
  return value;
}

Result<std::optional<float>> JsonFields::number_in(std::string_view key, double min, double max,
                                                   std::string_view range_text) const {
  SINTER_ASSIGN(const std::optional<double> value, number(key));
  if (!value) return std::optional<float>();
  if (!std::isfinite(*value) || *value < min || *value > max) {
    return make_error(ErrorCode::kInvalidArgument, path(key), " must be ", range_text, ", got ", *value);
  }
  return std::optional<float>(static_cast<float>(*value));
}

}  // namespace sinter::server
