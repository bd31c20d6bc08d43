// `sinter run -m MODEL -p PROMPT`: generates a continuation and streams it to stdout, or with
// `--output ids` prints the generated token ids as a JSON array (the oracle's `greedy` shape).
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/generation_flags.h"
#include "sinter/engine.h"

namespace sinter::cli {
namespace {

struct RunArgs {
  EngineFlags engine;
  GenerationFlags generation;
  std::string prompt;
  std::string output = "text";
  bool verbose = false;
};

int run(const RunArgs& args) {
  if (args.output != "text" && args.output != "ids") return fail("--output must be text or ids, not '" + args.output + "'");
  if (args.prompt.empty()) return fail("the prompt is empty (give one with -p)");
  auto options = args.generation.to_options();
  if (!options) return fail(options.error().message());
  auto engine_options = args.engine.to_options();
  if (!engine_options) return fail(engine_options.error().message());
  auto engine = Engine::load(args.engine.model, *engine_options);
  if (!engine) return fail(engine.error().message());

  const bool stream_text = args.output == "text";
  auto result = (*engine)->stream(args.prompt, *options, [&](std::string_view text) {
    if (stream_text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  });
  if (!result) return fail(result.error().message());
  if (stream_text) {
    std::fputc('\n', stdout);
  } else {
    std::printf("%s\n", json_ids(result->tokens).c_str());
  }
  if (args.verbose) {
    std::fprintf(stderr, "sinter run: %d prompt tokens, %zu generated (%s), %d context shifts, seed %llu\n",
                 result->prompt_tokens, result->tokens.size(), stop_reason_name(result->stop_reason),
                 result->context_shifts, static_cast<unsigned long long>(result->seed));
    const GraphStats& graphs = (*engine)->context().stats();
    std::fprintf(stderr, "sinter run: %lld forward passes, %lld graphs built, %lld reused, %.1f MiB compute arena\n",
                 static_cast<long long>(graphs.passes), static_cast<long long>(graphs.builds),
                 static_cast<long long>(graphs.reuses), static_cast<double>(graphs.arena_bytes) / (1024.0 * 1024.0));
    std::fprintf(stderr, "sinter run: prompt %.1f t/s, generation %.1f t/s\n",
                 result->prompt_tokens / std::max(result->prompt_seconds, 1e-9),
                 static_cast<double>(result->tokens.size()) / std::max(result->generation_seconds, 1e-9));
  }
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<RunArgs>();
  args->engine.add_to(app);
  args->generation.add_to(app);
  app->add_option("-p,--prompt", args->prompt, "the prompt")->required();
  app->add_option("--output", args->output, "text (stream the continuation) or ids (JSON array of token ids)");
  app->add_flag("-v,--verbose", args->verbose, "print token counts and speed to stderr");
  return [args] { return run(*args); };
}

const CommandRegistration kRun{"run", "Generate text from a prompt", setup};

}  // namespace
}  // namespace sinter::cli
