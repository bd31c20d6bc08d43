// `sinter chat -m MODEL`: an interactive conversation on the terminal. Each line of input is a
// user turn; the model's chat template renders the conversation (ChatML when the model has
// none, said once), the reply streams to stdout, and the conversation's cached prefix is reused
// from one turn to the next. End with an empty line, EOF or /exit.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "chat/chat_template.h"
#include "cli/command.h"
#include "cli/generation_flags.h"
#include "core/log.h"
#include "runtime/chat_prompt.h"
#include "runtime/scheduler.h"

namespace sinter::cli {
namespace {

struct ChatArgs {
  EngineFlags engine;
  GenerationFlags generation;
  std::string system;
  std::string template_name;
  bool show_prompt = false;
};

int run(const ChatArgs& args) {
  auto options = args.generation.to_options();
  if (!options) return fail(options.error().message());
  auto engine_options = args.engine.to_options();
  if (!engine_options) return fail(engine_options.error().message());
  auto model =
      LoadedModel::load(args.engine.model, LoadOptions{engine_options->backend, engine_options->threads});
  if (!model) return fail(model.error().message());
  const Metadata& metadata = (*model)->file().metadata();
  auto tokenizer = Tokenizer::from_metadata(metadata, engine_options->tokenizer);
  if (!tokenizer) return fail(tokenizer.error().message());
  auto chat_template = chat::ChatTemplate::from_metadata(metadata, args.template_name);
  if (!chat_template) return fail(chat_template.error().message());
  if (chat_template->is_builtin_chatml) {
    std::fprintf(stderr, "sinter chat: %s has no chat template; using ChatML\n", args.engine.model.c_str());
  }
  SchedulerOptions scheduler_options;
  scheduler_options.parallel = 1;
  scheduler_options.n_ctx = engine_options->n_ctx;
  scheduler_options.n_batch = engine_options->n_batch;
  scheduler_options.kv_type = engine_options->kv_type;
  std::shared_ptr<const Tokenizer> shared_tokenizer(std::move(tokenizer).value());
  auto scheduler = Scheduler::create(*model, shared_tokenizer, scheduler_options);
  if (!scheduler) return fail(scheduler.error().message());

  chat::ChatRequest request;
  if (auto status = chat::set_special_tokens(metadata, &request); !status)
    return fail(status.error().message());
  request.add_generation_prompt = true;
  if (!args.system.empty()) request.messages.push_back({{"role", "system"}, {"content", args.system}});
  const bool interactive = isatty(fileno(stdin)) != 0;
  std::string line;
  for (;;) {
    if (interactive) std::fputs("> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line) || line.empty() || line == "/exit") break;
    request.messages.push_back({{"role", "user"}, {"content", line}});
    auto prompt = chat_prompt(*chat_template, request, *shared_tokenizer);
    if (!prompt) return fail(prompt.error().message());
    if (args.show_prompt) std::fprintf(stderr, "%s", prompt->text.c_str());
    auto stream = (*scheduler)->submit(SchedulerRequest{prompt->tokens, prompt->has_bos, *options, 1, {}});
    if (!stream) return fail(stream.error().message());
    std::string reply;
    for (;;) {
      auto event = (*stream)->pop(std::chrono::milliseconds(100));
      if (!event) continue;
      if (event->kind == RequestEvent::Kind::kError) return fail(event->text);
      if (event->kind == RequestEvent::Kind::kDone) break;
      reply += event->text;
      std::fwrite(event->text.data(), 1, event->text.size(), stdout);
      std::fflush(stdout);
    }
    std::fputc('\n', stdout);
    request.messages.push_back({{"role", "assistant"}, {"content", reply}});
  }
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<ChatArgs>();
  args->engine.add_to(app);
  args->generation.add_to(app);
  app->add_option("--system", args->system, "a system message");
  app->add_option("--chat-template", args->template_name,
                  "use the model's named template tokenizer.chat_template.NAME");
  app->add_flag("--show-prompt", args->show_prompt, "print each rendered prompt to stderr");
  return [args] { return run(*args); };
}

const CommandRegistration kChat{"chat", "Chat with a model on the terminal, using its chat template", setup};

}  // namespace
}  // namespace sinter::cli
