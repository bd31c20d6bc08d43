// Chat templates: turning a conversation into the prompt text a model was trained on, exactly as
// Hugging Face's tokenizer.apply_chat_template renders it.
//
//   SINTER_ASSIGN(auto tmpl, chat::ChatTemplate::from_metadata(gguf.metadata()));
//   if (tmpl.is_builtin_chatml) log_warn("chat", "model has no chat template; using ChatML");
//   chat::ChatRequest request;
//   request.messages = {{{"role", "user"}, {"content", "Hi"}}};
//   request.add_generation_prompt = true;
//   SINTER_TRY(chat::set_special_tokens(gguf.metadata(), &request));
//   SINTER_ASSIGN(std::string prompt, chat::render(tmpl, request));
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/interpreter.h"
#include "chat/jinja/template.h"
#include "gguf/metadata.h"
#include "sinter/result.h"

namespace sinter::chat {

// ordered_json keeps object keys in the order given, as Python dicts do: tojson of a tool schema
// must print its keys in their original order.
using Json = nlohmann::ordered_json;

// A conversation in the OpenAI / Hugging Face shape, passed to the template as it is:
//   messages: [{"role": "system"|"user"|"assistant"|"tool", "content": "text" or
//               [{"type": "text", "text": ...}, ...] or null,
//               "tool_calls": [{"id": ..., "type": "function",
//                               "function": {"name": ..., "arguments": {...} or "json text"}}],
//               "tool_call_id": ..., "name": ...}, ...]
//   tools:    null, or [{"type": "function", "function": {"name", "description", "parameters"}}]
struct ChatRequest {
  Json messages = Json::array();
  Json tools;      // null: no tools (the template sees None, as with Hugging Face)
  Json documents;  // null, or documents for retrieval-augmented templates
  bool add_generation_prompt = false;
  // Unset ones are undefined in the template (Hugging Face passes the tokenizer's special tokens).
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  // More variables, e.g. {"enable_thinking": false}; they override the ones above.
  Json extra_context = Json::object();
};

struct ChatTemplate {
  std::string name;    // "default", or NAME of tokenizer.chat_template.NAME, or "chatml"
  std::string source;  // the Jinja text
  // The model had no template and ChatML is used instead: callers should tell the user.
  bool is_builtin_chatml = false;
  std::shared_ptr<const jinja::Template> compiled;

  // Parses `source`; a syntax error names the line and column.
  static Result<ChatTemplate> from_source(std::string source, std::string name = "default");
  // The ChatML template (<|im_start|>role\n...<|im_end|>) used for models without one.
  static ChatTemplate chatml();
  // tokenizer.chat_template (empty `name`) or tokenizer.chat_template.<name>. A model without the
  // default template gets chatml() with is_builtin_chatml set; a missing named one is an error
  // that lists the names there are.
  static Result<ChatTemplate> from_metadata(const Metadata& metadata, std::string_view name = "");
};

// "default" (if present) and every NAME of tokenizer.chat_template.NAME.
std::vector<std::string> chat_template_names(const Metadata& metadata);

// bos_token and eos_token from tokenizer.ggml.tokens at tokenizer.ggml.bos_token_id and
// eos_token_id (each left unset when the model does not say).
Status set_special_tokens(const Metadata& metadata, ChatRequest* request);

// The rendered prompt. Errors (a template that calls raise_exception, a type error in the
// template, malformed messages) carry the template line and column.
Result<std::string> render(const ChatTemplate& chat_template, const ChatRequest& request,
                           const jinja::RenderOptions& options = {});

}  // namespace sinter::chat
