// Conversions between template values and JSON: nlohmann::ordered_json in (key order kept, as
// Python's json.loads keeps it), and Python's json.dumps out, which is what Hugging Face's
// `tojson` filter calls (ensure_ascii=False, optional indent, separators and sort_keys).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "chat/jinja/value.h"
#include "sinter/result.h"

namespace sinter::chat::jinja {

// Strings must be valid UTF-8; `where` names the input in the error ("messages[2].content").
Result<Value> from_json(const nlohmann::ordered_json& json, const std::string& where = "value");

struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;          // json.dumps(indent=...): spaces or the given string
  std::optional<std::string> item_separator;  // default ", ", or "," with an indent
  std::string key_separator = ": ";
  bool sort_keys = false;
};

Result<std::string> dump_json(const Value& value, const JsonDumpOptions& options = {});

}  // namespace sinter::chat::jinja
