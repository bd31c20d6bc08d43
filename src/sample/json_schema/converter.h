// The schema walk: each schema becomes a GBNF rule (or a reference to a shared one), visited
// depth-first from the root; $ref targets become one rule each, so recursive schemas give
// recursive rules. The type-specific rules (string, number, object, array) live in
// converter_types.cpp.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sample/json_schema/gbnf_rules.h"
#include "sample/json_schema_grammar.h"
#include "sinter/result.h"

namespace sinter::json_schema {

class Converter {
 public:
  using json = nlohmann::ordered_json;

  Converter(const json& root, const JsonSchemaOptions& options);
  Result<std::string> run();

 private:
  // A GBNF term for the JSON texts valid under `schema` (at JSON pointer `path`); `hint` names
  // the rules it adds.
  Result<std::string> visit(const json& schema, const std::string& path, const std::string& hint, int depth);
  Result<std::string> visit_ref(const std::string& ref, const std::string& path, int depth);
  Result<std::string> visit_alternatives(const json& schema, const std::string& keyword,
                                         const std::string& path, const std::string& hint, int depth);
  Result<std::string> visit_literals(const json& schema, const std::string& path, const std::string& hint);
  Result<std::string> visit_type(const json& schema, const std::string& type, const std::string& path,
                                 const std::string& hint, int depth);

  // converter_types.cpp
  Result<std::string> visit_string(const json& schema, const std::string& path, const std::string& hint);
  Result<std::string> visit_number(const json& schema, bool integer, const std::string& path,
                                   const std::string& hint);
  Result<std::string> visit_object(const json& schema, const std::string& path, const std::string& hint,
                                   int depth);
  Result<std::string> visit_array(const json& schema, const std::string& path, const std::string& hint,
                                  int depth);
  Result<std::string> key_excluding(const std::vector<std::string>& names, const std::string& hint);

  Status check_keywords(const json& schema, const std::string& path) const;
  Result<const json*> resolve(const std::string& ref, const std::string& path) const;

  const json& root_;
  JsonSchemaOptions options_;
  GbnfRules rules_;
  std::map<std::string, std::string> ref_rules_;  // $ref → its rule's name (reserved before visiting)
};

// "/properties/a~1b": a JSON pointer with one more reference token.
std::string pointer_append(const std::string& path, std::string_view token);
// The bound of a repetition (maxLength, maxItems): capped to the limit; or an error if the
// minimum is above it.
Status check_repetition(int64_t min, const char* keyword, const std::string& path,
                        const JsonSchemaLimits& limits);

}  // namespace sinter::json_schema
