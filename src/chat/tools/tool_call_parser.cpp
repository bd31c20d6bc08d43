#include "chat/tools/tool_call_parser.h"

#include <array>
#include <optional>

#include "chat/tools/reply_scan.h"

namespace sinter::chat::tools {
namespace {

std::string trimmed(std::string_view s) {
  size_t b = skip_json_space(s, 0);
  size_t e = s.size();
  while (e > b && is_json_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// Splits a leading reasoning block off; returns the rest of the reply, or nullopt when a partial
// parse must hold everything back (the reply may still be opening the block).
std::optional<std::string_view> split_reasoning(std::string_view text, const ParseContext& context,
                                                ReplyParts& parts) {
  const ToolFormat& format = context.format;
  if (!context.options.reasoning || format.reasoning_open.empty() || format.reasoning_close.empty())
    return text;
  size_t begin = 0;
  if (!context.options.reasoning_open_in_prompt) {
    size_t at = skip_json_space(text, 0);
    std::string_view rest = text.substr(at);
    if (rest.starts_with(format.reasoning_open)) {
      begin = at + format.reasoning_open.size();
    } else if (context.partial && std::string_view(format.reasoning_open).starts_with(rest)) {
      return std::nullopt;
    } else {
      return text;
    }
  }
  size_t close = text.find(format.reasoning_close, begin);
  if (close == std::string_view::npos) {
    std::string_view thinking = text.substr(begin);
    if (context.partial) {
      const std::array<std::string_view, 1> markers{format.reasoning_close};
      thinking.remove_suffix(held_marker_prefix(thinking, markers));
    }
    parts.reasoning += thinking;
    return std::nullopt;
  }
  parts.reasoning += text.substr(begin, close - begin);
  return text.substr(close + format.reasoning_close.size());
}

// The calls (and the content around them) of the reply after its reasoning, per family.
void parse_calls(ToolFamily family, std::string_view rest, const ParseContext& context, ReplyParts& parts) {
  switch (family) {
    case ToolFamily::kHermes: parse_hermes(rest, context, parts); break;
    case ToolFamily::kQwenXml: parse_qwen_xml(rest, context, parts); break;
    case ToolFamily::kLlama3: parse_llama3(rest, context, parts); break;
    case ToolFamily::kMistral:
    case ToolFamily::kMistralArgs: parse_mistral(rest, context, parts); break;
    case ToolFamily::kGranite:
    case ToolFamily::kPhi4Mini: parse_tool_call_tag(rest, context, parts); break;
    case ToolFamily::kDeepSeekR1:
    case ToolFamily::kDeepSeekV31: parse_deepseek(rest, context, parts); break;
    case ToolFamily::kGptOss:
    case ToolFamily::kGeneric: parse_generic(rest, context, parts); break;
  }
}

ParsedMessage parse(const ToolFormat& format, std::string_view text, const ParseOptions& options,
                    bool partial) {
  ParseContext context{partial, format, options};
  ReplyParts parts;
  if (format.family == ToolFamily::kGptOss) {
    parse_harmony(text, context, parts);
  } else if (auto rest = split_reasoning(text, context, parts)) {
    if (!options.tool_calls) {
      parts.content += *rest;
    } else {
      parse_calls(format.family, *rest, context, parts);
    }
  }
  ParsedMessage message;
  message.content = trimmed(parts.content);
  message.reasoning_content = trimmed(parts.reasoning);
  message.tool_calls = std::move(parts.calls);
  for (size_t i = 0; i < message.tool_calls.size(); ++i) {
    ToolCall& call = message.tool_calls[i];
    call.id = options.call_id_prefix + std::to_string(i);
    // Blanks at the end of arguments still arriving may be followed by more JSON or by nothing.
    if (partial) {
      while (!call.arguments.empty() && is_json_space(call.arguments.back())) call.arguments.pop_back();
    }
  }
  return message;
}

}  // namespace

ParsedMessage parse_reply(const ToolFormat& format, std::string_view text, const ParseOptions& options) {
  return parse(format, text, options, /*partial=*/false);
}

ParsedMessage parse_partial_reply(const ToolFormat& format, std::string_view text,
                                  const ParseOptions& options) {
  return parse(format, text, options, /*partial=*/true);
}

}  // namespace sinter::chat::tools
