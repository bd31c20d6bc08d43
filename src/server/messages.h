// Chat messages of a request (Ollama's and OpenAI's shapes) checked and brought into the shape
// chat templates render. Depends on JSON only, so it is fuzzed with the other request parsers.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "sinter/result.h"

namespace sinter::server {

// Checks `messages` (an array of {"role": ..., "content": ...}) and brings it into the template's
// shape: content given as an array of text parts becomes one string; null content becomes "".
// Images and other non-text parts are refused. `field` names the array in errors.
Result<nlohmann::ordered_json> read_messages(const nlohmann::ordered_json& messages, std::string_view field);

}  // namespace sinter::server
