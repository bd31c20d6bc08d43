// Llama 3.1-3.3: a reply that is a bare JSON call ({"name": ..., "parameters": ...}, several may
// follow one another, separated by blanks or ';'), and <|python_tag|> built-in tools anywhere:
// `brave_search.call(query="...")`, a JSON call, or Python code for the code interpreter.
#include <array>
#include <nlohmann/json.hpp>
#include <optional>

#include "chat/tools/markers.h"
#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 2> kPythonTagEnds{"<|eom_id|>", "<|eot_id|>"};

bool is_identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_identifier_char(char c) { return is_identifier_start(c) || (c >= '0' && c <= '9'); }

std::string_view trim(std::string_view s) {
  size_t b = skip_json_space(s, 0);
  size_t e = s.size();
  while (e > b && is_json_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// A Python literal: a quoted string, a number, True/False/None.
std::optional<Json> python_literal(std::string_view s, size_t& i) {
  if (i >= s.size()) return std::nullopt;
  char quote = s[i];
  if (quote == '"' || quote == '\'') {
    std::string value;
    for (++i; i < s.size(); ++i) {
      if (s[i] == quote) {
        ++i;
        return Json(value);
      }
      if (s[i] == '\\' && i + 1 < s.size()) {
        char e = s[++i];
        value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        value += s[i];
      }
    }
    return std::nullopt;
  }
  for (auto [word, value] :
       {std::pair{"True", Json(true)}, std::pair{"False", Json(false)}, std::pair{"None", Json(nullptr)}}) {
    if (s.substr(i).starts_with(word)) {
      i += std::string_view(word).size();
      return value;
    }
  }
  ScanResult number = scan_json_value(s, i);
  if (number.status != ScanStatus::kComplete || (s[i] != '-' && (s[i] < '0' || s[i] > '9')))
    return std::nullopt;
  auto value = Json::parse(s.substr(i, number.end - i), nullptr, false);
  if (value.is_discarded()) return std::nullopt;
  i = number.end;
  return value;
}

// tool.call(key=value, ...) → (tool, {"key": value, ...}), or nullopt.
std::optional<ToolCall> builtin_call(std::string_view body) {
  size_t i = 0;
  while (i < body.size() && is_identifier_char(body[i])) ++i;
  if (i == 0 || !is_identifier_start(body[0]) || !body.substr(i).starts_with(".call(")) return std::nullopt;
  ToolCall call;
  call.name = std::string(body.substr(0, i));
  i += 6;
  Json args = Json::object();
  auto skip = [&] {
    while (i < body.size() && (body[i] == ' ' || body[i] == '\n' || body[i] == '\t')) ++i;
  };
  skip();
  while (i < body.size() && body[i] != ')') {
    size_t key_begin = i;
    while (i < body.size() && is_identifier_char(body[i])) ++i;
    if (i == key_begin) return std::nullopt;
    std::string key(body.substr(key_begin, i - key_begin));
    skip();
    if (i >= body.size() || body[i] != '=') return std::nullopt;
    ++i;
    skip();
    auto value = python_literal(body, i);
    if (!value) return std::nullopt;
    args[key] = *value;
    skip();
    if (i < body.size() && body[i] == ',') {
      ++i;
      skip();
    }
  }
  if (i + 1 != body.size()) return std::nullopt;  // the ')' must end the call
  call.arguments = args.dump(-1, ' ', false, Json::error_handler_t::replace);
  return call;
}

// <|python_tag|> runs to the end of the reply (or <|eom_id|>): shown only when whole.
Block read_python_tag_block(std::string_view text, size_t at, std::string_view trigger,
                            const ParseContext& context, ReplyParts& parts) {
  size_t body_begin = at + trigger.size();
  const auto [body_end, end] = find_first_marker(text, body_begin, kPythonTagEnds);
  if (context.partial && body_end == text.size()) return {CallOutcome::kPending, at, false};
  std::string_view body = trim(text.substr(body_begin, body_end - body_begin));
  if (body.empty()) return {};
  if (body.front() == '{') {
    size_t object_at = text.find('{', body_begin);
    ReplyParts scratch;
    CallRead call = read_call_object(text.substr(0, body_end), object_at, false, context, scratch);
    if (call.outcome == CallOutcome::kCall && call.complete &&
        trim(text.substr(call.end, body_end - call.end)).empty()) {
      parts.calls.push_back(std::move(scratch.calls.back()));
      return {CallOutcome::kCall, end, false};
    }
  }
  if (auto call = builtin_call(body)) {
    parts.calls.push_back(std::move(*call));
    return {CallOutcome::kCall, end, false};
  }
  // Anything else after the tag is code for the built-in code interpreter.
  ToolCall code;
  code.name = "python";
  code.arguments = Json{{"code", std::string(body)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
  parts.calls.push_back(std::move(code));
  return {CallOutcome::kCall, end, false};
}

}  // namespace

void parse_llama3(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  size_t pos = 0;
  size_t p = skip_json_space(text, 0);
  while (p < text.size() && text[p] == '{') {
    CallRead call = read_call_object(text, p, /*name_first=*/true, context, parts);
    if (call.outcome == CallOutcome::kPending) return;
    if (call.outcome == CallOutcome::kNotACall) break;
    pos = call.end;
    if (!call.complete) break;
    size_t next = skip_json_space(text, call.end);
    if (next < text.size() && text[next] == ';') next = skip_json_space(text, next + 1);
    if (next >= text.size()) {
      if (context.partial) return;  // another call may follow
      pos = text.size();
      break;
    }
    if (text[next] != '{') break;
    p = next;
  }
  if (pos >= text.size() && !parts.calls.empty()) return;
  if (!context.format.python_tag) {
    parts.content += text.substr(pos);
    return;
  }
  const std::array<std::string_view, 1> triggers{kPythonTag};
  read_marked_calls(text, pos, triggers, read_python_tag_block, context, parts);
}

}  // namespace sinter::chat::tools
