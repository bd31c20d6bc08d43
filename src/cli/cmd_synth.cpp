// `sinter synth ARCH OUT.gguf`: a random-weight model of any registered architecture.
#include <cstdio>

#include "cli/command.h"
#include "cli/progress.h"
#include "model/synth.h"

namespace sinter::cli {
namespace {

struct SynthArgs {
  SynthOptions options;
  std::string output;
  std::string type = "f32";
};

int run(SynthArgs& args) {
  const auto type = dtype_from_name(args.type);
  if (!type) return fail("unknown tensor type '" + args.type + "'");
  args.options.type = *type;
  ProgressBar bar("synth");
  if (auto status = synthesize(args.options, args.output, [&](size_t done, size_t total) { bar.update(done, total); }); !status) {
    return fail(status.error().message());
  }
  bar.finish();
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<SynthArgs>();
  SynthOptions& o = args->options;
  app->add_option("architecture", o.architecture, "architecture, e.g. llama")->required();
  app->add_option("output", args->output, "the GGUF file to write")->required();
  app->add_option("--dims", o.preset, "named dimensions (tiny, small, medium, 1b)");
  app->add_option("--n-embd", o.dims.n_embd, "embedding length");
  app->add_option("--n-layer", o.dims.n_layer, "blocks");
  app->add_option("--n-head", o.dims.n_head, "attention heads");
  app->add_option("--n-head-kv", o.dims.n_head_kv, "key/value heads");
  app->add_option("--n-ff", o.dims.n_ff, "feed-forward length");
  app->add_option("--n-vocab", o.dims.n_vocab, "vocabulary size");
  app->add_option("--n-ctx", o.dims.n_ctx, "training context length");
  app->add_option("--type", args->type, "type of the matrices (f32, f16, bf16, q8_0, q4_0, q4_K, ...)");
  app->add_option("--seed", o.seed, "seed: the same seed gives the same file");
  app->add_option("--vocab", o.vocab_file, "copy the tokenizer of this GGUF file");
  return [args] { return run(*args); };
}

const CommandRegistration kSynth{"synth", "Write a random-weight model (tests, benchmarks)", setup};

}  // namespace
}  // namespace sinter::cli
