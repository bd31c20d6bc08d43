// Tool calls and reasoning in a chat reply, once the template is known: which format the model
// writes (detected from the template's source), the grammar that keeps its calls valid (lazy at
// the format's triggers, or from the first token when a call is required), how the reply is
// parsed, and the JSON each API answers with (docs/TOOL_CALLS.md, "How the server calls it").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tools/parsed_message.h"
#include "chat/tools/tool_format.h"
#include "runtime/sequence.h"
#include "sample/grammar/grammar_trigger.h"
#include "server/prompt.h"
#include "server/tool_request.h"
#include "sinter/result.h"

namespace sinter::server {

struct ChatReplySetup {
  // Replies are parsed (tool calls asked for, or reasoning to separate); otherwise the text is
  // the content as it is.
  bool parse = false;
  chat::tools::ToolFormat format;
  chat::tools::ParseOptions options;
  // The grammar of the calls (empty: none) and, when lazy, the words that start it (not inside
  // the reply's reasoning block).
  std::string grammar;
  GrammarTriggers triggers;
  // Special tokens are shown in the text: markers such as [TOOL_CALLS] and gpt-oss's channels
  // are control tokens.
  bool render_special = false;
};

// Whether the template renders the request's tools (Jinja's `tools`, Go's `.Tools`).
bool template_shows_tools(std::string_view template_source);

// Whether the template's model can reason apart from its answer (<think>, [THINK], gpt-oss).
bool template_can_think(const chat::tools::ToolFormat& format);

// The setup for a request's tools and reasoning, given the template that rendered the prompt.
// Errors: a tool's parameters the schema converter cannot turn into a grammar, or a name the
// format cannot carry (both name the tool).
Result<ChatReplySetup> setup_chat_reply(const ChatToolOptions& request, const std::string& template_source,
                                        const std::string& prompt);

// What the template receives for these options: the tools (unless tool_choice is "none") and
// the template variables (enable_thinking, chat_template_kwargs), and Go templates' .Think.
ChatRenderOptions chat_render_options(const ChatToolOptions& request);

// The conversation rendered for a request with tools: render_chat_turn with the tools and template
// variables. A template that neither shows the tools nor has a call format of its own (the
// generic family: the reply is a JSON object) gets them described in the system message.
Result<RenderedChat> render_chat_with_tools(const ServedModel& model, const chat::Json& messages,
                                            const std::optional<std::string>& template_source,
                                            const ChatToolOptions& request);

// Thinking asked for (think / enable_thinking true) with a template that cannot think is an
// error, as in Ollama: "\"MODEL\" does not support thinking".
Status check_thinking(const ChatToolOptions& request, const ChatReplySetup& setup, const std::string& model);

// The grammar, its triggers and special-token rendering into the generation's options.
void apply_reply_setup(const ChatReplySetup& setup, GenerationOptions& options);

// OpenAI: [{"id", "type": "function", "function": {"name", "arguments": "JSON text"}}].
nlohmann::ordered_json openai_tool_calls(const std::vector<chat::tools::ToolCall>& calls);
// OpenAI's streamed tool-call deltas: [{"index", "id"?, "type"?, "function": {"name"?, "arguments"}}].
nlohmann::ordered_json openai_tool_call_deltas(const std::vector<chat::tools::ToolCallDelta>& deltas);
// Ollama: [{"id", "function": {"index", "name", "arguments": object}}] (arguments that are not a whole
// JSON object, from a call cut short, become {}).
nlohmann::ordered_json ollama_tool_calls(const std::vector<chat::tools::ToolCall>& calls);

}  // namespace sinter::server
