// Structured output as the two APIs ask for it, turned into a GBNF grammar (src/sample) before any
// model is loaded: Ollama's `format` ("json" or a JSON schema), OpenAI's `response_format`
// (json_object, or json_schema with a schema), and llama-server's `grammar` (GBNF text) on both.
// JSON only, like the other request parsers, so it is fuzzed with them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sinter/result.h"

namespace sinter::server {

// Ollama's `format`: null, absent or "" mean none (clients send "" always); "json" is any JSON
// object; an object is a JSON schema. nullopt: no constraint.
Result<std::optional<std::string>> ollama_format_grammar(const nlohmann::ordered_json* format);

// OpenAI's `response_format`: {"type": "text"} (none), {"type": "json_object"}, or
// {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}, "strict": bool}}.
Result<std::optional<std::string>> openai_response_format_grammar(
    const nlohmann::ordered_json* response_format);

// The request's grammar: `grammar` (GBNF text, llama-server's field) or the one its format asks
// for; both at once are an error naming the two fields. `format_field` names the API's field.
Result<std::optional<std::string>> request_grammar(const nlohmann::ordered_json* grammar,
                                                   std::optional<std::string> from_format,
                                                   const char* format_field);

}  // namespace sinter::server
