#include "server/prompt.h"

#include "chat/gotemplate/ollama_template.h"
#include "server/json_fields.h"

namespace sinter::server {

namespace {

Result<chat::ChatTemplate> template_for(const ServedModel& model, const std::optional<std::string>& source) {
  if (!source || source->empty()) return model.chat_template;
  auto compiled = chat::ChatTemplate::from_source(*source, "request");
  if (!compiled) {
    return make_error(ErrorCode::kInvalidArgument,
                      "template (a Jinja chat template): ", compiled.error().message());
  }
  return compiled;
}

// A Go template (Ollama's syntax: a request's "template", or a Modelfile's) renders as Ollama's
// text/template does.
Result<std::string> render_go_template(const std::string& source, const chat::Json& messages,
                                       const ChatRenderOptions& options) {
  auto parsed = chat::OllamaTemplate::parse(source);
  if (!parsed)
    return make_error(ErrorCode::kInvalidArgument, "template (a Go template): ", parsed.error().message());
  chat::OllamaTemplateData data;
  SINTER_ASSIGN(data.messages, chat::ollama_messages_from_json(messages));
  data.tools = options.tools;
  data.is_think_set = options.think.has_value();
  data.think = options.think.value_or(false);
  data.think_level = options.think_level;
  auto rendered = parsed->render(data);
  if (!rendered)
    return make_error(ErrorCode::kInvalidArgument, "template (a Go template): ", rendered.error().message());
  return rendered;
}

// The template of a store model's Modelfile (empty: none, and the GGUF file's own is used).
const std::string* modelfile_template(const ServedModel& model) {
  const Modelfile* modelfile = model.modelfile();
  if (modelfile == nullptr || !modelfile->template_source || modelfile->template_source->empty())
    return nullptr;
  return &*modelfile->template_source;
}

// The system prompt of a store model's Modelfile, if it has one.
const std::string* modelfile_system(const ServedModel& model) {
  const Modelfile* modelfile = model.modelfile();
  if (modelfile == nullptr || !modelfile->system || modelfile->system->empty()) return nullptr;
  return &*modelfile->system;
}

void append_modelfile_messages(const ServedModel& model, chat::Json& messages) {
  if (const Modelfile* modelfile = model.modelfile()) {
    for (const ModelfileMessage& message : modelfile->messages)
      messages.push_back({{"role", message.role}, {"content", message.content}});
  }
}

// `messages` rendered with the template in force: the request's (Jinja, or Go syntax), else the
// Modelfile's (Go syntax), else the model's own (ChatML when it has none).
Result<RenderedChat> render_messages(const ServedModel& model, const chat::Json& messages,
                                     const std::optional<std::string>& template_source,
                                     const ChatRenderOptions& options = {}) {
  if (template_source && chat::looks_like_go_template(*template_source)) {
    SINTER_ASSIGN(std::string text, render_go_template(*template_source, messages, options));
    return RenderedChat{std::move(text), *template_source};
  }
  if (const std::string* source = modelfile_template(model);
      source && (!template_source || template_source->empty())) {
    auto rendered = render_go_template(*source, messages, options);
    // The model's template failed: not the request's fault, but a model sinter cannot serve.
    if (!rendered)
      return make_error(ErrorCode::kUnsupported, "the Modelfile's template of ", model.file.name,
                        " failed: ", rendered.error().message());
    return RenderedChat{std::move(rendered).value(), *source};
  }
  SINTER_ASSIGN(const chat::ChatTemplate chat_template, template_for(model, template_source));
  chat::ChatRequest request;
  request.messages = messages;
  request.add_generation_prompt = true;
  request.tools = options.tools;
  request.extra_context = options.extra_context;
  SINTER_TRY(chat::set_special_tokens(model.model->file().metadata(), &request));
  auto rendered = chat::render(chat_template, request);
  // The template refused these messages (roles out of order, a raise_exception): the request's
  // fault; a render that the request's memory could not hold keeps its code (413, or 503).
  if (!rendered) {
    const ErrorCode code = rendered.error().code();
    return make_error(
        code == ErrorCode::kBusy || code == ErrorCode::kTooLarge ? code : ErrorCode::kInvalidArgument,
        "the chat template failed: ", rendered.error().message());
  }
  return RenderedChat{std::move(rendered).value(), chat_template.source};
}

}  // namespace

// A store model's Modelfile adds its messages before the conversation's, and its system prompt
// in front when the conversation does not start with one (Ollama's ChatHandler).
Result<std::string> render_chat(const ServedModel& model, const chat::Json& messages,
                                const std::optional<std::string>& template_source) {
  SINTER_ASSIGN(RenderedChat rendered, render_chat_turn(model, messages, template_source, {}));
  return std::move(rendered.text);
}

Result<RenderedChat> render_chat_turn(const ServedModel& model, const chat::Json& messages,
                                      const std::optional<std::string>& template_source,
                                      const ChatRenderOptions& options) {
  if (model.modelfile() == nullptr) return render_messages(model, messages, template_source, options);
  chat::Json all = chat::Json::array();
  const bool starts_with_system = !messages.empty() && messages[0].is_object() &&
                                  messages[0].contains("role") && messages[0]["role"].is_string() &&
                                  messages[0]["role"].get_ref<const std::string&>() == "system";
  if (const std::string* system = modelfile_system(model); system && !starts_with_system)
    all.push_back({{"role", "system"}, {"content", *system}});
  append_modelfile_messages(model, all);
  for (const auto& message : messages) all.push_back(message);
  return render_messages(model, all, template_source, options);
}

// The request's system text, else the Modelfile's; then the Modelfile's messages and the prompt
// (Ollama's GenerateHandler).
Result<std::string> render_generate_prompt(const ServedModel& model, const std::string& prompt,
                                           const std::optional<std::string>& system,
                                           const std::optional<std::string>& template_source) {
  SINTER_ASSIGN(RenderedChat rendered, render_generate_turn(model, prompt, system, template_source, {}));
  return std::move(rendered.text);
}

Result<RenderedChat> render_generate_turn(const ServedModel& model, const std::string& prompt,
                                          const std::optional<std::string>& system,
                                          const std::optional<std::string>& template_source,
                                          const ChatRenderOptions& options) {
  std::optional<std::string> system_text;
  if (system && !system->empty()) {
    system_text = system;
  } else if (const std::string* modelfile = modelfile_system(model)) {
    system_text = *modelfile;
  }
  const bool templated = model.has_chat_template || (template_source && !template_source->empty()) ||
                         modelfile_template(model) != nullptr;
  if (!templated) {
    if (system_text) return RenderedChat{*system_text + "\n\n" + prompt, ""};
    return RenderedChat{prompt, ""};
  }
  chat::Json messages = chat::Json::array();
  if (system_text) messages.push_back({{"role", "system"}, {"content", *system_text}});
  append_modelfile_messages(model, messages);
  messages.push_back({{"role", "user"}, {"content", prompt}});
  return render_messages(model, messages, template_source, options);
}

Result<PromptTokens> tokenize_prompt(const ServedModel& model, const std::string& text, bool add_special) {
  const Tokenizer& tokenizer = *model.tokenizer;
  SINTER_ASSIGN(std::vector<TokenId> tokens, tokenizer.encode(text, EncodeOptions{add_special, true}));
  const TokenId bos = tokenizer.bos();
  if (tokens.size() >= 2 && tokens[0] == bos && tokens[1] == bos) tokens.erase(tokens.begin());
  PromptTokens prompt;
  prompt.has_bos = !tokens.empty() && tokens.front() == bos;
  prompt.tokens = std::move(tokens);
  return prompt;
}

Result<PromptTokens> prompt_from_ids(const ServedModel& model, const nlohmann::ordered_json& ids,
                                     std::string_view field) {
  PromptTokens prompt;
  for (size_t i = 0; i < ids.size(); ++i) {
    const nlohmann::ordered_json& id = ids[i];
    if (!id.is_number_integer() && !id.is_number_unsigned()) {
      return make_error(ErrorCode::kInvalidArgument, field, "[", i, "] must be a token id, got ",
                        describe_json(id));
    }
    const int64_t value = id.get<int64_t>();
    if (value < 0 || value >= model.tokenizer->vocab_size()) {
      return make_error(ErrorCode::kInvalidArgument, field, "[", i, "]: token ", value,
                        " is outside the vocabulary [0, ", model.tokenizer->vocab_size(), ")");
    }
    prompt.tokens.push_back(static_cast<TokenId>(value));
  }
  prompt.has_bos = !prompt.tokens.empty() && prompt.tokens.front() == model.tokenizer->bos();
  return prompt;
}

}  // namespace sinter::server
