// Finding where a JSON value ends in generated text that may stop anywhere: the tool-call parsers
// must tell a call whose JSON is still arriving (hold it, stream its arguments) from one that can
// never become valid (give the text back as content).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/json_parse.h"

namespace sinter::chat::tools {

enum class ScanStatus {
  kComplete,  // a whole value: `end` is one past its last byte
  kPartial,   // every byte up to the end of the text can still start a valid value
  kInvalid,   // `end` is the offset of the first byte no valid JSON can have there
};

struct ScanResult {
  ScanStatus status;
  size_t end;
};

// Nesting deeper than JSON from outside may have (core/json_parse.h) is invalid, so that a call
// the model wrote can come back in a request's messages (the scanner's own stack is on the heap).
constexpr size_t kMaxJsonDepth = static_cast<size_t>(sinter::kMaxJsonDepth);

bool is_json_space(char c);
size_t skip_json_space(std::string_view text, size_t pos);

// The JSON value starting exactly at text[pos] (no leading whitespace skipped). A number or a
// literal that reaches the end of the text is kPartial: more digits may follow.
ScanResult scan_json_value(std::string_view text, size_t pos);

// The string literal starting at text[pos] == '"'.
ScanResult scan_json_string(std::string_view text, size_t pos);

// The decoded value of a complete JSON string literal (quotes included), or nullopt.
std::optional<std::string> decode_json_string(std::string_view literal);

// What a tool-call object ({"name": ..., "arguments": ...}) holds so far. The keys "arguments" and
// "parameters" (Llama 3) both name the arguments; other keys ("type", "id") are skipped.
struct CallObjectScan {
  ScanResult object{ScanStatus::kPartial, 0};
  std::optional<std::string> name;  // set once the name's string is complete
  bool has_arguments = false;
  size_t arguments_begin = 0;
  ScanResult arguments{ScanStatus::kPartial, 0};
  bool arguments_is_string = false;  // "arguments": "{\"a\": 1}" (decoded when complete)
};

// Scans the object starting at text[pos] == '{'. With `name_first`, the first key must be "name"
// or "type" (Llama 3's bare JSON calls, which must not swallow ordinary JSON answers).
CallObjectScan scan_call_object(std::string_view text, size_t pos, bool name_first);

}  // namespace sinter::chat::tools
