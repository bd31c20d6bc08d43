// Typed reading of request fields. Every problem is an kInvalidArgument error naming the field
// by its path in the request ("options.top_k must be an integer, got string \"forty\""). A
// field that is absent or null reads as nullopt.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sinter/result.h"

namespace sinter::server {

using Json = nlohmann::ordered_json;

// The request body as a JSON object: "the request body is not valid JSON: ..." or "... must be
// a JSON object" otherwise. An empty body reads as {} when `empty_is_object`.
Result<Json> parse_json_object(const std::string& body, bool empty_is_object = false);

// A short description of a value for error messages: `string "abc"`, `array`, `number 1.5`.
std::string describe_json(const Json& value);

// Dumps without throwing on invalid UTF-8 (which a model may generate): bad bytes become U+FFFD.
std::string dump_json(const Json& value);

class JsonFields {
 public:
  // `object` must outlive the reader. `prefix` is put before field names in errors ("options.").
  JsonFields(const Json& object, std::string prefix = "") : object_(object), prefix_(std::move(prefix)) {}

  std::string path(std::string_view key) const { return prefix_ + std::string(key); }
  bool has(std::string_view key) const;          // present and not null
  const Json* find(std::string_view key) const;  // nullptr when absent or null

  Result<std::optional<double>> number(std::string_view key) const;
  // An integer in [min, max]; a number with a fractional part is an error.
  Result<std::optional<int64_t>> integer(std::string_view key, int64_t min = INT64_MIN,
                                         int64_t max = INT64_MAX) const;
  Result<std::optional<bool>> boolean(std::string_view key) const;
  Result<std::optional<std::string>> string(std::string_view key) const;
  // A string or an array of strings ("stop": "\n" or ["\n", "User:"]).
  Result<std::optional<std::vector<std::string>>> strings(std::string_view key) const;
  // An object (nullptr when absent or null).
  Result<const Json*> object(std::string_view key) const;
  // An array (nullptr when absent or null).
  Result<const Json*> array(std::string_view key) const;

  // A number that must lie in [min, max] (the range is part of the message).
  Result<std::optional<float>> number_in(std::string_view key, double min, double max,
                                         std::string_view range_text) const;

 private:
  Error wrong_type(std::string_view key, const char* expected, const Json& value) const;
  const Json& object_;
  std::string prefix_;
};

}  // namespace sinter::server
