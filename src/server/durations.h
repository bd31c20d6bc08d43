// Durations and times as the Ollama API writes them: keep_alive values ("5m", "1h30m", 300,
// -1) and RFC 3339 timestamps ("2024-05-01T12:00:00.123456789Z").
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sinter/result.h"

namespace sinter::server {

// How long a model stays loaded after a request: negative keeps it loaded until a later request
// says otherwise, zero unloads it as soon as no request uses it.
using KeepAlive = std::chrono::nanoseconds;

// A Go duration ("300ms", "1.5h", "1h30m", "-1s"); a plain number is seconds ("300", "-1").
Result<KeepAlive> parse_duration(std::string_view text);

// A keep_alive field: a number of seconds or a duration string. `field` names it in errors.
Result<KeepAlive> parse_keep_alive(const nlohmann::ordered_json& value, std::string_view field);

// "2024-05-01T12:00:00.123456789Z" (UTC, nanoseconds).
std::string format_rfc3339(std::chrono::system_clock::time_point time);

}  // namespace sinter::server
