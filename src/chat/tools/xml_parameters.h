// What Qwen3-Coder's XML tool-call format (tool_format.h: kQwenXml) needs from a tool's
// `parameters` schema: it writes each argument apart, as bare text, so the parser reads each
// value by its parameter's JSON types and the grammar constrains each value on its own.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tools/tool_grammar.h"
#include "sinter/result.h"

namespace sinter::chat::tools {

// The JSON types a schema allows: its "type" (one or a list), or the types of its "enum"
// values; empty when it says neither.
std::vector<std::string> schema_types(const nlohmann::ordered_json& schema);

// Each property of a `parameters` schema and its types (ParseOptions::parameter_types).
std::map<std::string, std::vector<std::string>> parameter_types(const nlohmann::ordered_json& parameters);

// The grammar's parameters for a `parameters` schema, in the order it lists them: a plain string
// is free text (no rule), a string enum the literal values, anything else its JSON through the
// schema converter (the schema's $defs beside it). The rules they name are appended to `rules`,
// each prefixed `prefix` + the parameter's index + "-". Errors: a property the converter refuses.
Result<std::vector<ToolGrammarParameter>> xml_parameters(const nlohmann::ordered_json& parameters,
                                                         std::string_view prefix, std::string& rules);

}  // namespace sinter::chat::tools
