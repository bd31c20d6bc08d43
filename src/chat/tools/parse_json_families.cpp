// The families whose calls are JSON objects behind a marker: Hermes/Qwen (<tool_call>), Mistral
// ([TOOL_CALLS], array and [ARGS] forms), Granite and Phi-4-mini (<|tool_call|>, functools[), and
// the generic JSON reply.
#include <array>
#include <nlohmann/json.hpp>

#include "chat/tools/markers.h"
#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {
namespace {

Block from_call(const CallRead& call) { return {call.outcome, call.end, false}; }

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

// [TOOL_CALLS]name[CALL_ID]id[ARGS]{json}: the name is complete once [ARGS] (or [CALL_ID]) follows.
Block read_mistral_named_call(std::string_view text, size_t at, size_t p, const ParseContext& context,
                              ReplyParts& parts) {
  const Block pending{context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, at, false};
  size_t name_end = p;
  while (name_end < text.size() && is_name_char(text[name_end])) ++name_end;
  if (name_end >= text.size()) return pending;
  if (name_end == p || text[name_end] != '[') return {};
  std::string_view rest = text.substr(name_end);
  size_t args_at;
  if (rest.starts_with(kMistralCallId)) {
    size_t id_end = name_end + kMistralCallId.size();
    while (id_end < text.size() && is_name_char(text[id_end])) ++id_end;
    std::string_view after_id = text.substr(id_end);
    if (after_id.starts_with(kMistralArgsMarker)) {
      args_at = id_end + kMistralArgsMarker.size();
    } else if (kMistralArgsMarker.starts_with(after_id)) {
      return pending;
    } else {
      return {};
    }
  } else if (rest.starts_with(kMistralArgsMarker)) {
    args_at = name_end + kMistralArgsMarker.size();
  } else if (kMistralArgsMarker.starts_with(rest) || kMistralCallId.starts_with(rest)) {
    return pending;
  } else {
    return {};
  }
  CallRead call = read_call_arguments(text, args_at, std::string(text.substr(p, name_end - p)), parts);
  return from_call(call);
}

Block read_mistral_block(std::string_view text, size_t at, std::string_view trigger,
                         const ParseContext& context, ReplyParts& parts) {
  size_t p = skip_json_space(text, at + trigger.size());
  if (p >= text.size()) return {context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, at, false};
  if (text[p] == '[') return read_call_array(text, p, context, parts);
  if (text[p] == '{') return from_call(read_call_object(text, p, false, context, parts));
  return read_mistral_named_call(text, at, p, context, parts);
}

// <|tool_call|>[...] (Granite), <|tool_call|>{...}<|/tool_call|> (Phi-4-mini), functools[...].
Block read_tool_call_tag_block(std::string_view text, size_t at, std::string_view trigger,
                               const ParseContext& context, ReplyParts& parts) {
  size_t p = trigger == kFunctools ? at + trigger.size() - 1 : skip_json_space(text, at + trigger.size());
  if (p >= text.size()) return {context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, at, false};
  Block block;
  if (text[p] == '[') {
    block = read_call_array(text, p, context, parts);
  } else if (text[p] == '{') {
    CallRead call = read_call_object(text, p, false, context, parts);
    block = from_call(call);
    if (call.outcome != CallOutcome::kCall || !call.complete) return block;
  } else {
    return {};
  }
  if (block.outcome == CallOutcome::kCall && !block.hold_rest && trigger != kFunctools) {
    const ToolCall& last = parts.calls.back();
    if (last.complete) block.end = skip_markers(text, block.end, {kPhi4ToolCallEnd});
  }
  return block;
}

}  // namespace

// <tool_call> {json} </tool_call>
Block read_hermes_block(std::string_view text, size_t at, std::string_view trigger,
                        const ParseContext& context, ReplyParts& parts) {
  size_t p = skip_json_space(text, at + trigger.size());
  if (p >= text.size()) return {context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, at, false};
  if (text[p] != '{') return {};
  CallRead call = read_call_object(text, p, false, context, parts);
  if (call.outcome != CallOutcome::kCall || !call.complete) return from_call(call);
  return {CallOutcome::kCall, skip_markers(text, call.end, {kHermesClose}), false};
}

void parse_hermes(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  const std::array<std::string_view, 1> triggers{kHermesOpen};
  read_marked_calls(text, 0, triggers, read_hermes_block, context, parts);
}

void parse_mistral(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  const std::array<std::string_view, 1> triggers{kMistralToolCalls};
  read_marked_calls(text, 0, triggers, read_mistral_block, context, parts);
}

void parse_tool_call_tag(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  if (context.format.family == ToolFamily::kPhi4Mini) {
    const std::array<std::string_view, 2> triggers{kGraniteToolCall, kFunctools};
    read_marked_calls(text, 0, triggers, read_tool_call_tag_block, context, parts);
  } else {
    const std::array<std::string_view, 1> triggers{kGraniteToolCall};
    read_marked_calls(text, 0, triggers, read_tool_call_tag_block, context, parts);
  }
}

namespace {

// A call of the generic shape {"name": ..., "arguments": {...}} as JSON values.
bool append_generic_call(const nlohmann::ordered_json& call, std::vector<ToolCall>& calls) {
  if (!call.is_object()) return false;
  auto name = call.find("name");
  if (name == call.end() || !name->is_string() || name->get<std::string>().empty()) return false;
  ToolCall out;
  out.name = name->get<std::string>();
  auto args = call.find("arguments");
  if (args == call.end()) {
    out.arguments = "{}";
  } else if (args->is_string()) {
    out.arguments = args->get<std::string>();
  } else {
    out.arguments = args->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  calls.push_back(std::move(out));
  return true;
}

}  // namespace

// The whole reply is one JSON object (the grammar makes it so from the first token):
// {"tool_calls": [{"name", "arguments"}, ...]}, {"tool_call": {...}} or {"response": ...}.
// Anything else is content. The object is shown once it is whole.
void parse_generic(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  size_t p = skip_json_space(text, 0);
  if (p >= text.size() || text[p] != '{') {
    parts.content += text;
    return;
  }
  ScanResult scan = scan_json_value(text, p);
  if (scan.status == ScanStatus::kPartial && context.partial) return;
  if (scan.status != ScanStatus::kComplete) {
    parts.content += text;
    return;
  }
  auto value = nlohmann::ordered_json::parse(text.substr(p, scan.end - p), nullptr, false);
  std::vector<ToolCall> calls;
  std::string content;
  bool understood = false;
  if (value.is_object() && value.size() == 1) {
    if (auto it = value.find("tool_calls"); it != value.end() && it->is_array() && !it->empty()) {
      understood = true;
      for (const auto& call : *it) understood = understood && append_generic_call(call, calls);
    } else if (auto one = value.find("tool_call"); one != value.end()) {
      understood = append_generic_call(*one, calls);
    } else if (auto response = value.find("response"); response != value.end()) {
      understood = true;
      content = response->is_string()
                    ? response->get<std::string>()
                    : response->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
  }
  if (!understood) {
    parts.content += text;
    return;
  }
  parts.content += content;
  parts.content += text.substr(scan.end);
  for (auto& call : calls) parts.calls.push_back(std::move(call));
}

}  // namespace sinter::chat::tools
