// From a request to prompt tokens: chat messages in the Ollama and OpenAI shapes, rendered with
// the model's chat template (ChatML when it has none), and the tokenization of prompt text.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "server/messages.h"
#include "server/model_manager.h"

namespace sinter::server {

// The conversation rendered with the model's template (or `template_source`, a template given
// with the request: Jinja, or Go text/template syntax as Ollama's Modelfiles write it), ending
// with the assistant's turn. A model of an Ollama store renders with its Modelfile's template
// when the request gives none, gets the Modelfile's messages before the conversation, and its
// system prompt in front when the conversation does not start with a system message (Ollama's
// behaviour).
Result<std::string> render_chat(const ServedModel& model, const chat::Json& messages,
                                const std::optional<std::string>& template_source);

// What a chat turn gives the template besides the messages.
struct ChatRenderOptions {
  chat::Json tools;                                 // null: none
  chat::Json extra_context = chat::Json::object();  // more variables (enable_thinking, ...)
  std::optional<bool> think;                        // Go templates' .Think (unset: not set)
  std::string think_level;                          // Go templates' .ThinkLevel
};

struct RenderedChat {
  std::string text;
  std::string template_source;  // the template that rendered it (tells the tool-call format)
};

// render_chat with tools and template variables, and the template it used.
Result<RenderedChat> render_chat_turn(const ServedModel& model, const chat::Json& messages,
                                      const std::optional<std::string>& template_source,
                                      const ChatRenderOptions& options);

// Ollama /api/generate without "raw": the prompt (and system text) as a user turn of the chat
// template; a model without a template gets the text as it is (Ollama's default "{{ .Prompt }}"),
// with the system text in front. A store model's Modelfile gives the template and the system
// text where the request does not, and its messages go before the prompt.
Result<std::string> render_generate_prompt(const ServedModel& model, const std::string& prompt,
                                           const std::optional<std::string>& system,
                                           const std::optional<std::string>& template_source);

// render_generate_prompt with template variables (think), and the template it used (empty
// when the prompt is used as it is).
Result<RenderedChat> render_generate_turn(const ServedModel& model, const std::string& prompt,
                                          const std::optional<std::string>& system,
                                          const std::optional<std::string>& template_source,
                                          const ChatRenderOptions& options);

struct PromptTokens {
  std::vector<TokenId> tokens;
  bool has_bos = false;
};

// Tokenizes prompt text; special-token text ("<|im_start|>") becomes special tokens, and BOS is
// added as the model says (`add_special`) but never twice when the template already wrote it.
Result<PromptTokens> tokenize_prompt(const ServedModel& model, const std::string& text,
                                     bool add_special = true);

// Token ids given in a request (a list of integers), checked against the vocabulary.
Result<PromptTokens> prompt_from_ids(const ServedModel& model, const nlohmann::ordered_json& ids,
                                     std::string_view field);

}  // namespace sinter::server
