// Tools and reasoning as the two APIs ask for them, checked before any model is loaded: OpenAI's
// `tools`, `tool_choice`, `parallel_tool_calls`, llama-server's `reasoning_format`,
// `chat_template_kwargs` and `enable_thinking`; Ollama's `tools` and `think`. JSON only, like the
// other request parsers (docs/TOOL_CALLS.md says what the server does with them).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sinter/result.h"

namespace sinter::server {

enum class ToolChoice { kAuto, kNone, kRequired, kNamed };

struct ChatToolOptions {
  // null, or [{"type": "function", "function": {"name", "description"?, "parameters"}}] with
  // `parameters` defaulted to an empty object schema; what the chat template receives.
  nlohmann::ordered_json tools;
  ToolChoice choice = ToolChoice::kAuto;
  std::string named_tool;  // kNamed: the function the reply must call
  bool parallel_calls = true;
  // Ollama's think, OpenAI's enable_thinking (or chat_template_kwargs.enable_thinking):
  // nullopt leaves the template's default.
  std::optional<bool> think;
  std::string think_level;  // Ollama's think: "high" | "medium" | "low"
  // Reasoning apart from the answer (reasoning_content / thinking); llama-server's
  // reasoning_format "none" keeps it in the content.
  bool separate_reasoning = true;
  // More variables for the chat template (chat_template_kwargs; enable_thinking when think is set).
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();

  bool has_tools() const { return tools.is_array() && !tools.empty(); }
  // The reply may call tools: they are given and tool_choice is not "none".
  bool calls_tools() const { return has_tools() && choice != ToolChoice::kNone; }
};

// /v1/chat/completions: tools, tool_choice, parallel_tool_calls, reasoning_format,
// chat_template_kwargs, enable_thinking. The legacy `functions` is refused.
Result<ChatToolOptions> read_openai_tool_options(const nlohmann::ordered_json& body);

// /api/chat: tools and think (true, false, or "high" / "medium" / "low"); and, beyond Ollama's
// API, tool_choice and parallel_tool_calls as OpenAI spells them.
Result<ChatToolOptions> read_ollama_tool_options(const nlohmann::ordered_json& body);

// A request's own grammar (`grammar`, or what `format_field` asks for) cannot be combined with
// tool calls, which have their own grammar (llama-server refuses it too).
Status check_grammar_with_tools(const ChatToolOptions& tools, const std::optional<std::string>& grammar,
                                const char* format_field);

}  // namespace sinter::server
