// `sinter synth ARCH OUT.gguf`: a random-weight model of any registered architecture.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "cli/flag_bounds.h"
#include "cli/progress.h"
#include "model/synth.h"
#include "runtime/embedding.h"
#include "tokenizer/hf_import.h"

namespace sinter::cli {
namespace {

constexpr const char* kPresetNote = "0: the preset's";

struct SynthArgs {
  SynthOptions options;
  std::string output;
  std::string type = "f32";
  std::string tokenizer_json;
  std::string tokenizer_config;
  std::string pre;
  std::string pooling;
};

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read ", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int run(SynthArgs& args) {
  const auto type = dtype_from_name(args.type);
  if (!type) return fail("unknown tensor type '" + args.type + "'");
  args.options.type = *type;
  if (!args.pooling.empty()) {
    const auto pooling = pooling_from_name(args.pooling);
    if (!pooling) return fail("unknown pooling '" + args.pooling + "' (none, mean, cls, last, rank)");
    args.options.dims.pooling_type = static_cast<int32_t>(*pooling);
  }
  if (!args.tokenizer_json.empty()) {
    auto json = read_text(args.tokenizer_json);
    if (!json) return fail(json.error().message());
    std::string config;
    if (!args.tokenizer_config.empty()) {
      auto text = read_text(args.tokenizer_config);
      if (!text) return fail(text.error().message());
      config = std::move(text).value();
    }
    auto imported = import_hf_tokenizer(*json, config, HfImportOptions{args.pre});
    if (!imported) return fail(args.tokenizer_json + ": " + imported.error().message());
    for (const auto& note : imported->notes) std::fprintf(stderr, "sinter synth: %s\n", note.c_str());
    if (args.options.dims.n_vocab == 0) {
      auto tokens = imported->metadata.get<std::vector<std::string>>("tokenizer.ggml.tokens");
      if (tokens) args.options.dims.n_vocab = static_cast<int32_t>(tokens->size());
    }
    args.options.tokenizer_metadata = std::move(imported->metadata);
  }
  ProgressBar bar("synth");
  if (auto status =
          synthesize(args.options, args.output, [&](size_t done, size_t total) { bar.update(done, total); });
      !status) {
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
  // 0 keeps the preset's value. The limits are generous for real shapes (an n_embd of 65536 is
  // 8x today's largest); more is a typing mistake.
  bounded(app->add_option("--n-embd", o.dims.n_embd, "embedding length"), 0, 1 << 16, kPresetNote);
  bounded(app->add_option("--n-layer", o.dims.n_layer, "blocks"), 0, 1 << 10, kPresetNote);
  bounded(app->add_option("--n-head", o.dims.n_head, "attention heads"), 0, 1 << 10, kPresetNote);
  bounded(app->add_option("--n-head-kv", o.dims.n_head_kv, "key/value heads"), 0, 1 << 10, kPresetNote);
  bounded(app->add_option("--n-ff", o.dims.n_ff, "feed-forward length"), 0, 1 << 18, kPresetNote);
  bounded(app->add_option("--n-vocab", o.dims.n_vocab, "vocabulary size"), 0, 1 << 22, kPresetNote);
  bounded(app->add_option("--n-expert", o.dims.n_expert, "experts (mixture-of-experts architectures)"), 0,
          1 << 12, kPresetNote);
  bounded(app->add_option("--n-expert-used", o.dims.n_expert_used, "experts each token uses"), 0, 1 << 12,
          kPresetNote);
  bounded(app->add_option("--n-ff-exp", o.dims.n_ff_exp, "an expert's feed-forward length"), 0, 1 << 18,
          kPresetNote);
  bounded(app->add_option("--n-ctx", o.dims.n_ctx, "training context length"), 0, max_context_flag(),
          kPresetNote);
  app->add_option(
      "--variant", o.dims.variant,
      "a named variant of the architecture's features (deepseek2: v2-lite); a preset's by default");
  app->add_option("--pooling", args->pooling,
                  "embedding models: the file's pooling (none, mean, cls, last, rank)");
  app->add_option("--type", args->type, "type of the matrices (f32, f16, bf16, q8_0, q4_0, q4_K, ...)");
  app->add_option("--seed", o.seed, "seed: the same seed gives the same file");
  app->add_option("--vocab", o.vocab_file, "copy the tokenizer of this GGUF file");
  app->add_option("--tokenizer", args->tokenizer_json,
                  "build the model around this Hugging Face tokenizer.json");
  app->add_option("--tokenizer-config", args->tokenizer_config,
                  "its tokenizer_config.json (special tokens, chat template)");
  app->add_option("--pre", args->pre,
                  "write this BPE pre-tokenizer name instead of recognizing it from tokenizer.json");
  return [args] { return run(*args); };
}

const CommandRegistration kSynth{"synth", "Write a random-weight model (tests, benchmarks)", setup};

}  // namespace
}  // namespace sinter::cli
