// Qwen3-Coder's and Qwen 3.5 / 3.6's XML tool calls (their templates show this format):
//
//   <tool_call>
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   <parameter=days>
//   3
//   </parameter>
//   </function>
//   </tool_call>
//
// A value is the text between its tags less the newline the template writes on each side. It
// becomes a JSON string or a JSON value by the parameter's types (ParseOptions::parameter_types).
// The arguments JSON is built as the parameters close, "{" first and "}" at </function>, so a
// stream shows each parameter once it is whole and never takes text back.
#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "chat/tools/markers.h"
#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {
namespace {

using Json = nlohmann::ordered_json;

std::string json_string(std::string_view text) {
  return Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

const std::vector<std::string>* types_of(const ParseOptions& options, const std::string& tool,
                                         const std::string& parameter) {
  const auto of_tool = options.parameter_types.find(tool);
  if (of_tool == options.parameter_types.end()) return nullptr;
  const auto of_parameter = of_tool->second.find(parameter);
  return of_parameter == of_tool->second.end() ? nullptr : &of_parameter->second;
}

// Whether a parsed value is of one of `types` (JSON schema's type names).
bool takes(const std::vector<std::string>& types, const Json& value) {
  for (const std::string& type : types) {
    if ((type == "integer" && value.is_number_integer()) || (type == "number" && value.is_number()) ||
        (type == "boolean" && value.is_boolean()) || (type == "null" && value.is_null()) ||
        (type == "object" && value.is_object()) || (type == "array" && value.is_array()))
      return true;
  }
  return false;
}

// The JSON text of a parameter's value.
std::string argument_value(std::string_view value, const std::vector<std::string>* types) {
  const bool only_string = types != nullptr && types->size() == 1 && types->front() == "string";
  // The templates write a value with Jinja's `string` filter, which spells booleans True/False.
  const bool boolean = types != nullptr && std::find(types->begin(), types->end(), "boolean") != types->end();
  if (boolean && (value == "True" || value == "False")) return value == "True" ? "true" : "false";
  if (!only_string) {
    Json parsed = Json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded() && (types == nullptr || types->empty() || takes(*types, parsed)))
      return parsed.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return json_string(value);
}

bool blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t skip_blanks(std::string_view text, size_t pos) {
  while (pos < text.size() && blank(text[pos])) ++pos;
  return pos;
}

// A name between `<tag=` and `>`: ends at '>', and holds no newline or '<'. npos when the text
// ends first; the name's end otherwise (a bad name: its length is 0 or it hits a bad byte).
struct TagName {
  size_t end = std::string_view::npos;
  bool ok = false;
};
TagName read_tag_name(std::string_view text, size_t pos) {
  for (size_t i = pos; i < text.size(); ++i) {
    if (text[i] == '>') return {i, i > pos};
    if (text[i] == '\n' || text[i] == '<') return {i, false};
  }
  return {};
}

// The parameters and </function> after <function=NAME>, from `pos`.
Block read_function_body(std::string_view text, size_t pos, bool wrapped, const ParseContext& context,
                         ToolCall& call) {
  call.arguments = "{";
  bool first = true;
  while (true) {
    const size_t at = skip_blanks(text, pos);
    const std::string_view rest = text.substr(at);
    if (rest.starts_with(kXmlFunctionClose)) {
      call.arguments += '}';
      call.complete = true;
      size_t end = at + kXmlFunctionClose.size();
      if (wrapped) end = skip_markers(text, end, {kHermesClose});
      return {CallOutcome::kCall, end, false};
    }
    if (!rest.starts_with(kXmlParameterOpen)) {
      // The reply ends (or goes astray) inside the call: it stays incomplete; a stream waits.
      const bool may_continue =
          kXmlFunctionClose.starts_with(rest) || kXmlParameterOpen.starts_with(rest) || rest.empty();
      call.complete = false;
      return {CallOutcome::kCall, may_continue ? text.size() : at, may_continue && context.partial};
    }
    const size_t name_begin = at + kXmlParameterOpen.size();
    const TagName name = read_tag_name(text, name_begin);
    if (name.end == std::string_view::npos || !name.ok) {
      call.complete = false;
      const bool may_continue = name.end == std::string_view::npos;
      return {CallOutcome::kCall, may_continue ? text.size() : at, may_continue && context.partial};
    }
    size_t value_begin = name.end + 1;
    const size_t close = text.find(kXmlParameterClose, value_begin);
    if (close == std::string_view::npos) {
      call.complete = false;
      return {CallOutcome::kCall, text.size(), context.partial};
    }
    if (value_begin < close && text[value_begin] == '\n') ++value_begin;
    size_t value_end = close;
    if (value_end > value_begin && text[value_end - 1] == '\n') --value_end;
    const std::string parameter(text.substr(name_begin, name.end - name_begin));
    if (!first) call.arguments += ',';
    first = false;
    call.arguments += json_string(parameter);
    call.arguments += ':';
    call.arguments += argument_value(text.substr(value_begin, value_end - value_begin),
                                     types_of(context.options, call.name, parameter));
    pos = close + kXmlParameterClose.size();
  }
}

// At <tool_call> (then <function=...>, or Hermes' JSON object) or at a bare <function=.
Block read_xml_block(std::string_view text, size_t at, std::string_view trigger, const ParseContext& context,
                     ReplyParts& parts) {
  const Block pending{context.partial ? CallOutcome::kPending : CallOutcome::kNotACall, at, false};
  size_t p = at + trigger.size();
  const bool wrapped = trigger == kHermesOpen;
  if (wrapped) {
    p = skip_blanks(text, p);
    const std::string_view rest = text.substr(p);
    if (rest.starts_with("{")) return read_hermes_block(text, at, trigger, context, parts);
    if (!rest.starts_with(kXmlFunctionOpen)) return kXmlFunctionOpen.starts_with(rest) ? pending : Block{};
    p += kXmlFunctionOpen.size();
  }
  const TagName name = read_tag_name(text, p);
  if (name.end == std::string_view::npos) return pending;
  if (!name.ok) return {};
  ToolCall call;
  call.name = std::string(text.substr(p, name.end - p));
  const Block block = read_function_body(text, name.end + 1, wrapped, context, call);
  parts.calls.push_back(std::move(call));
  return block;
}

}  // namespace

void parse_qwen_xml(std::string_view text, const ParseContext& context, ReplyParts& parts) {
  const std::array<std::string_view, 2> triggers{kHermesOpen, kXmlFunctionOpen};
  read_marked_calls(text, 0, triggers, read_xml_block, context, parts);
}

}  // namespace sinter::chat::tools
