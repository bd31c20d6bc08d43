#include "chat/chat_template.h"

#include "chat/jinja/json.h"

namespace sinter::chat {
namespace {

constexpr std::string_view kTemplateKey = "tokenizer.chat_template";

// Hugging Face's former default template, also accepting content given as a list of parts.
constexpr std::string_view kChatMlSource =
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}\n"
    "{%- if message['content'] is string -%}\n"
    "{{- message['content'] -}}\n"
    "{%- elif message['content'] is iterable -%}\n"
    "{%- for part in message['content'] -%}\n"
    "{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}\n"
    "{%- endfor -%}\n"
    "{%- endif -%}\n"
    "{{- '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

Status check_messages(const Json& messages) {
  if (!messages.is_array()) return Error(ErrorCode::kInvalidArgument, "messages must be an array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& message = messages[i];
    if (!message.is_object()) {
      return make_error(ErrorCode::kInvalidArgument, "messages[", i, "] must be an object");
    }
    auto role = message.find("role");
    if (role == message.end() || !role->is_string()) {
      return make_error(ErrorCode::kInvalidArgument, "messages[", i, "].role must be a string");
    }
  }
  return ok_status();
}

Result<std::optional<std::string>> token_text(const Metadata& metadata, std::string_view id_key) {
  SINTER_ASSIGN(auto id, metadata.find<uint32_t>(id_key));
  if (!id) return std::optional<std::string>();
  SINTER_ASSIGN(auto tokens, metadata.find<std::vector<std::string>>("tokenizer.ggml.tokens"));
  if (!tokens) return std::optional<std::string>();
  if (*id >= tokens->size()) {
    return make_error(ErrorCode::kFormat, id_key, " is ", *id, " but the vocabulary has ", tokens->size(),
                      " tokens");
  }
  return std::optional<std::string>((*tokens)[*id]);
}

}  // namespace

Result<ChatTemplate> ChatTemplate::from_source(std::string source, std::string name) {
  auto compiled = jinja::Template::parse(source);
  if (!compiled) return compiled.error().with_context("chat template '" + name + "'");
  ChatTemplate result;
  result.name = std::move(name);
  result.source = std::move(source);
  result.compiled = std::make_shared<const jinja::Template>(std::move(compiled).value());
  return result;
}

ChatTemplate ChatTemplate::chatml() {
  auto result = from_source(std::string(kChatMlSource), "chatml");
  result.value().is_builtin_chatml = true;
  return std::move(result).value();
}

Result<ChatTemplate> ChatTemplate::from_metadata(const Metadata& metadata, std::string_view name) {
  std::string key =
      name.empty() || name == "default" ? std::string(kTemplateKey) : concat(kTemplateKey, ".", name);
  SINTER_ASSIGN(auto source, metadata.find<std::string>(key));
  if (!source) {
    if (key == kTemplateKey) return chatml();
    std::string available;
    for (const auto& n : chat_template_names(metadata)) available += (available.empty() ? "" : ", ") + n;
    return make_error(ErrorCode::kNotFound, "the model has no chat template named '", name, "' (", key,
                      "); it has: ", available.empty() ? "none" : available);
  }
  return from_source(std::move(*source), name.empty() ? "default" : std::string(name));
}

std::vector<std::string> chat_template_names(const Metadata& metadata) {
  std::vector<std::string> names;
  std::string prefix = std::string(kTemplateKey) + ".";
  for (const auto& [key, value] : metadata.entries()) {
    if (key == kTemplateKey) {
      names.insert(names.begin(), "default");
    } else if (key.rfind(prefix, 0) == 0 && value.type == GgufType::kString) {
      names.push_back(key.substr(prefix.size()));
    }
  }
  return names;
}

Status set_special_tokens(const Metadata& metadata, ChatRequest* request) {
  SINTER_ASSIGN(request->bos_token, token_text(metadata, "tokenizer.ggml.bos_token_id"));
  SINTER_ASSIGN(request->eos_token, token_text(metadata, "tokenizer.ggml.eos_token_id"));
  return ok_status();
}

Result<std::string> render(const ChatTemplate& chat_template, const ChatRequest& request,
                           const jinja::RenderOptions& options) {
  if (!chat_template.compiled) return Error(ErrorCode::kInvalidArgument, "chat template was not parsed");
  SINTER_TRY(check_messages(request.messages));
  if (!request.tools.is_null() && !request.tools.is_array()) {
    return Error(ErrorCode::kInvalidArgument, "tools must be null or an array");
  }
  if (!request.extra_context.is_null() && !request.extra_context.is_object()) {
    return Error(ErrorCode::kInvalidArgument, "extra context must be an object");
  }
  jinja::Variables variables;
  SINTER_ASSIGN(jinja::Value messages, jinja::from_json(request.messages, "messages"));
  SINTER_ASSIGN(jinja::Value tools, jinja::from_json(request.tools, "tools"));
  SINTER_ASSIGN(jinja::Value documents, jinja::from_json(request.documents, "documents"));
  variables.emplace_back("messages", std::move(messages));
  variables.emplace_back("tools", std::move(tools));
  variables.emplace_back("documents", std::move(documents));
  variables.emplace_back("add_generation_prompt", jinja::Value(request.add_generation_prompt));
  if (request.bos_token) variables.emplace_back("bos_token", jinja::Value(*request.bos_token));
  if (request.eos_token) variables.emplace_back("eos_token", jinja::Value(*request.eos_token));
  if (request.extra_context.is_object()) {
    for (const auto& [key, json] : request.extra_context.items()) {
      SINTER_ASSIGN(jinja::Value value, jinja::from_json(json, key));
      variables.emplace_back(key, std::move(value));
    }
  }
  auto text = chat_template.compiled->render(variables, options);
  if (!text) return text.error().with_context("chat template '" + chat_template.name + "'");
  return text;
}

}  // namespace sinter::chat
