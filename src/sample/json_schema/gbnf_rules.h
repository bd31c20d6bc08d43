// The rule set a schema conversion builds: named rules in the order they were added, identical
// bodies shared, the primitive JSON rules added on first use, and the limits on rule count and
// grammar size enforced as rules are added. Also the escaping of GBNF literals and classes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sample/json_schema_grammar.h"
#include "sinter/result.h"

namespace sinter::json_schema {

// "…" with GBNF escapes for `"`, `\` and control characters; other UTF-8 passes through.
std::string gbnf_literal(std::string_view text);
// One code point as it may appear inside [...] (escapes `]`, `\`, `-`, `^` and controls).
std::string gbnf_class_char(uint32_t code_point);
// `item{min,max}` in GBNF; max < 0 means unbounded. The item must be one term (a name, literal,
// class or parenthesized group).
std::string gbnf_repeat(const std::string& item, int min, int max);

class GbnfRules {
 public:
  GbnfRules(const JsonSchemaLimits& limits, JsonWhitespace whitespace);

  // A rule with `body`: the name of an identical rule added before, or a new name made from
  // `hint` (letters, digits and '-'; a number appended when taken).
  Result<std::string> add(std::string_view hint, std::string body);
  // `root ::= expression`, unless the walk already added a rule named `root` (the hint "root"
  // names the top-level rule when its body is new).
  Status set_root(const std::string& expression);
  // A name whose body comes later through define(): rules that refer to themselves ($ref cycles).
  Result<std::string> reserve(std::string_view hint);
  Status define(const std::string& name, std::string body);

  // A primitive JSON rule ("string", "number", "value", "date", ...) and the rules it uses; its
  // name, or an error if there is no such primitive.
  Result<std::string> primitive(std::string_view name);

  // The grammar: `root` first, then the others in the order they were added.
  Result<std::string> text() const;

  const JsonSchemaLimits& limits() const { return limits_; }

 private:
  std::string unique_name(std::string_view hint);
  Status check_limits(size_t added_bytes);

  JsonSchemaLimits limits_;
  JsonWhitespace whitespace_;
  std::vector<std::pair<std::string, std::string>> rules_;  // name, body ("" while reserved)
  std::map<std::string, size_t> index_of_name_;
  std::map<std::string, std::string> name_of_body_;
  size_t bytes_ = 0;
};

}  // namespace sinter::json_schema
