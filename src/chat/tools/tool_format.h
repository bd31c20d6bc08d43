// Which tool-call format a model speaks, told from its chat template's source as llama.cpp tells
// it (docs/TOOL_CALLS.md lists the families, the markers each template is recognised by and what
// the model's output looks like).
//
//   ToolFormat format = detect_tool_format(chat_template.source);
//   // format.triggers: where a lazy grammar starts; format.reasoning_open: "<think>" or empty
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::chat::tools {

enum class ToolFamily {
  kGeneric,      // no known format: the whole reply is {"tool_call(s)": ...} or {"response": ...}
  kHermes,       // Hermes 2/3, Qwen 2.5, Qwen3, QwQ, SmolLM3: <tool_call>{json}</tool_call>
  kQwenXml,      // Qwen3-Coder, Qwen 3.5 / 3.6: <tool_call><function=name><parameter=p>v</parameter>...
  kLlama3,       // Llama 3.1-3.3: {"name": ..., "parameters": ...}; <|python_tag|> built-in tools
  kMistral,      // Mistral Nemo / Small 3.1: [TOOL_CALLS][{"name": ..., "arguments": ...}, ...]
  kMistralArgs,  // Mistral Small 3.2, Devstral, Magistral: [TOOL_CALLS]name[ARGS]{...}
  kGranite,      // Granite 3.x: <|tool_call|>[{"name": ..., "arguments": ...}]
  kPhi4Mini,     // Phi-4-mini: <|tool_call|>{...}<|/tool_call|> or functools[{...}]
  kDeepSeekR1,  // DeepSeek V3 / R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{...}\n```
  kDeepSeekV31,  // DeepSeek V3.1: <｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
  kGptOss,       // gpt-oss harmony: <|channel|>commentary to=functions.name ... <|message|>{...}<|call|>
};

std::string_view tool_family_name(ToolFamily family);
// The family named by tool_family_name ("hermes", "gpt-oss", ...), e.g. from a user's override.
std::optional<ToolFamily> tool_family_from_name(std::string_view name);

// Where a tool call starts in the model's output. A lazy grammar is off until one of these is
// generated and constrains the text from the trigger on (the trigger included).
struct ToolTrigger {
  std::string word;
  bool at_start = false;  // only a trigger as the first non-blank text of the reply (Llama 3's {")
};

struct ToolFormat {
  ToolFamily family = ToolFamily::kGeneric;
  std::vector<ToolTrigger> triggers;
  // Reasoning delimiters at the start of a reply ("<think>" / "</think>", Magistral's "[THINK]");
  // empty when the template shows none. gpt-oss reasons in its analysis channel instead.
  std::string reasoning_open;
  std::string reasoning_close;
  bool python_tag = false;  // Llama 3: <|python_tag|> built-in tools (brave_search.call(...), code)
};

// The format a template's model was trained on, from markers in the template's text.
ToolFormat detect_tool_format(std::string_view template_source);

// A family's format with its default triggers, without reasoning tags.
ToolFormat tool_format_for(ToolFamily family);

// Whether the rendered prompt (with the generation prompt) already opened the reasoning block
// (DeepSeek-R1's "<｜Assistant｜><think>\n", Qwen3 variants): the reply then starts inside it.
bool prompt_opens_reasoning(const ToolFormat& format, std::string_view prompt);

}  // namespace sinter::chat::tools
