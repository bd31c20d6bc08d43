// `sinter template MODEL --messages FILE.json`: the prompt the model's chat template makes of a
// conversation, exactly as Hugging Face's apply_chat_template would render it.
//
// FILE.json is a list of messages, or an object {"messages": [...], "tools": [...], "documents": [...]}
// (documents: for retrieval templates such as Command R's `rag`). Instead of a model,
// --template-file renders a Jinja file (for trying templates out).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"
#include "cli/command.h"
#include "core/log.h"
#include "gguf/gguf_file.h"

namespace sinter::cli {
namespace {

struct Options {
  std::string model;
  std::string messages_file;
  std::string tools_file;
  std::string documents_file;
  std::string template_file;
  std::string template_name;
  std::string bos_token;
  std::string eos_token;
  std::vector<std::string> variables;
  bool add_generation_prompt = false;
  bool allow_mutation = false;
};

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kIo, "cannot read ", path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

Result<chat::Json> read_json_file(const std::string& path) {
  SINTER_ASSIGN(std::string text, read_file(path));
  chat::Json json = chat::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return make_error(ErrorCode::kFormat, path, ": not valid JSON");
  return json;
}

Result<chat::ChatTemplate> load_template(const Options& options, chat::ChatRequest* request) {
  if (!options.template_file.empty()) {
    SINTER_ASSIGN(std::string source, read_file(options.template_file));
    return chat::ChatTemplate::from_source(std::move(source), options.template_file);
  }
  if (options.model.empty()) return Error(ErrorCode::kInvalidArgument, "give a MODEL or --template-file");
  SINTER_ASSIGN(GgufFile file, GgufFile::open(options.model));
  SINTER_TRY(chat::set_special_tokens(file.metadata(), request));
  SINTER_ASSIGN(chat::ChatTemplate chat_template,
                chat::ChatTemplate::from_metadata(file.metadata(), options.template_name));
  if (chat_template.is_builtin_chatml) {
    log_warn("chat", options.model, " has no chat template (tokenizer.chat_template); using ChatML");
  }
  return chat_template;
}

Status build_request(const Options& options, chat::ChatRequest* request) {
  SINTER_ASSIGN(chat::Json messages, read_json_file(options.messages_file));
  if (messages.is_object()) {
    if (messages.contains("tools")) request->tools = messages["tools"];
    if (messages.contains("documents")) request->documents = messages["documents"];
    messages = messages.value("messages", chat::Json());
  }
  if (!messages.is_array()) {
    return make_error(ErrorCode::kInvalidArgument, options.messages_file,
                      ": expected a list of messages or {\"messages\": [...]}");
  }
  request->messages = std::move(messages);
  if (!options.tools_file.empty()) {
    SINTER_ASSIGN(request->tools, read_json_file(options.tools_file));
  }
  if (!options.documents_file.empty()) {
    SINTER_ASSIGN(request->documents, read_json_file(options.documents_file));
  }
  request->add_generation_prompt = options.add_generation_prompt;
  if (!options.bos_token.empty()) request->bos_token = options.bos_token;
  if (!options.eos_token.empty()) request->eos_token = options.eos_token;
  for (const std::string& variable : options.variables) {
    size_t equals = variable.find('=');
    if (equals == std::string::npos || equals == 0) {
      return make_error(ErrorCode::kInvalidArgument, "--var expects NAME=JSON, got ", variable);
    }
    chat::Json value = chat::Json::parse(variable.substr(equals + 1), nullptr, false);
    if (value.is_discarded()) value = variable.substr(equals + 1);  // a bare word is a string
    request->extra_context[variable.substr(0, equals)] = std::move(value);
  }
  return ok_status();
}

int run(const Options& options) {
  chat::ChatRequest request;
  auto chat_template = load_template(options, &request);
  if (!chat_template) return fail(chat_template.error().message());
  Status built = build_request(options, &request);
  if (!built) return fail(built.error().message());
  chat::jinja::RenderOptions render_options;
  render_options.allow_mutation = options.allow_mutation;
  auto prompt = chat::render(*chat_template, request, render_options);
  if (!prompt) return fail(prompt.error().message());
  std::fwrite(prompt->data(), 1, prompt->size(), stdout);
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto options = std::make_shared<Options>();
  app->add_option("model", options->model, "GGUF model whose tokenizer.chat_template is used");
  app->add_option("--messages", options->messages_file,
                  "JSON file: a list of messages, or {\"messages\", \"tools\", \"documents\"}")
      ->required();
  app->add_option("--tools", options->tools_file, "JSON file with the tool schemas");
  app->add_option("--documents", options->documents_file,
                  "JSON file with documents for retrieval templates (e.g. --template-name rag)");
  app->add_flag("--add-generation-prompt", options->add_generation_prompt,
                "End with the start of an assistant turn");
  app->add_option("--template-file", options->template_file,
                  "Render this Jinja file instead of a model's template");
  app->add_option("--template-name", options->template_name,
                  "Use tokenizer.chat_template.NAME (e.g. tool_use) instead of the default");
  app->add_option("--bos", options->bos_token, "bos_token text (default: the model's)");
  app->add_option("--eos", options->eos_token, "eos_token text (default: the model's)");
  app->add_option("--var", options->variables,
                  "Extra template variable NAME=JSON (e.g. enable_thinking=false)");
  app->add_flag("--allow-mutation", options->allow_mutation,
                "Allow list.append and dict.update (Hugging Face's sandbox forbids them)");
  return [options] { return run(*options); };
}

const CommandRegistration kTemplate{"template", "Print the prompt a chat template makes of a conversation",
                                    setup};

}  // namespace
}  // namespace sinter::cli
