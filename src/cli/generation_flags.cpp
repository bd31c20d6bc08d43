#include "cli/generation_flags.h"

#include <fstream>
#include <sstream>

#include "cli/common.h"
#include "cli/flag_bounds.h"
#include "sample/grammar/grammar_matcher.h"
#include "sample/json_schema_grammar.h"

namespace sinter::cli {

void EngineFlags::add_to(CLI::App* app) {
  app->add_option("-m,--model", model, "GGUF model file")->required();
  add_backend_flag(app, backend);
  add_threads_flag(app, threads);
  add_context_flag(app, n_ctx, "context size in tokens (0: the model's, at most 4096)");
  add_batch_flag(app, n_batch);
  app->add_option("--kv-type", kv_type, "KV cache type: f16, bf16 or f32");
  add_state_checkpoints_flag(app, state_checkpoints_mib);
  app->add_option("--force-pre", force_pre, "use this BPE pre-tokenizer instead of the file's");
}

Result<EngineOptions> EngineFlags::to_options() const {
  EngineOptions options;
  options.backend = backend;
  options.threads = threads;
  options.n_ctx = n_ctx;
  options.n_batch = n_batch;
  SINTER_ASSIGN(options.kv_type, parse_kv_type(kv_type));
  options.tokenizer.force_pre = force_pre;
  options.state_checkpoint_bytes = static_cast<size_t>(state_checkpoints_mib) << 20;
  return options;
}

void GenerationFlags::add_to(CLI::App* app) {
  app->add_option("-n,--n-predict", max_tokens, "tokens to generate");
  app->add_option("--temp", temperature, "temperature (0: greedy)");
  app->add_option("--top-k", top_k, "top-k (0: off)");
  app->add_option("--top-p", top_p, "top-p in (0, 1] (1: off)");
  app->add_option("--min-p", min_p, "min-p in [0, 1] (0: off)");
  app->add_option("--typical", typical_p, "typical-p in (0, 1] (1: off)");
  app->add_option("--repeat-penalty", repeat_penalty, "repetition penalty (1: off)");
  app->add_option("--repeat-last-n", repeat_last_n, "tokens the penalties look back on (-1: all, 0: off)");
  app->add_option("--frequency-penalty", frequency_penalty, "frequency penalty");
  app->add_option("--presence-penalty", presence_penalty, "presence penalty");
  app->add_option("-s,--seed", seed, "sampling seed (-1: random)");
  app->add_option("--samplers", samplers, "sampler order, e.g. penalties;top_k;top_p;min_p;temperature");
  app->add_option("--overflow", overflow, "when the context is full: error or shift");
  app->add_option("--keep", keep, "prompt tokens kept on a context shift");
  app->add_option("--stop", stop, "stop string (repeatable)");
  app->add_flag("--ignore-eos", ignore_eos, "keep generating after an end-of-generation token");
  auto* grammar = app->add_option("--grammar-file", grammar_file,
                                  "constrain the output to this GBNF grammar (llama.cpp syntax)");
  auto* schema = app->add_option("--json-schema", json_schema_file,
                                 "constrain the output to JSON valid under this schema file");
  auto* object = app->add_flag("--json", json, "constrain the output to a JSON object");
  grammar->excludes(schema)->excludes(object);
  schema->excludes(object);
}

Result<GenerationOptions> GenerationFlags::to_options() const {
  GenerationOptions options;
  options.max_tokens = max_tokens;
  if (max_tokens <= 0)
    return make_error(ErrorCode::kInvalidArgument, "-n must be positive, got ", max_tokens);
  SamplerOptions& s = options.sampling;
  s.temperature = temperature;
  s.top_k = top_k;
  s.top_p = top_p;
  s.min_p = min_p;
  s.typical_p = typical_p;
  s.repeat_penalty = repeat_penalty;
  s.repeat_last_n = repeat_last_n;
  s.frequency_penalty = frequency_penalty;
  s.presence_penalty = presence_penalty;
  if (seed < -1)
    return make_error(ErrorCode::kInvalidArgument, "--seed must be -1 (random) or a non-negative number");
  if (seed >= 0) s.seed = static_cast<uint64_t>(seed);
  if (!samplers.empty()) {
    SINTER_ASSIGN(s.order, parse_sampler_order(samplers));
  }
  if (overflow == "error") {
    options.overflow = OverflowPolicy::kError;
  } else if (overflow == "shift") {
    options.overflow = OverflowPolicy::kShift;
  } else {
    return make_error(ErrorCode::kInvalidArgument, "--overflow must be error or shift, not '", overflow, "'");
  }
  options.keep = keep;
  options.stop = stop;
  options.ignore_eos = ignore_eos;
  const auto read_text = [](const std::string& path, const char* flag) -> Result<std::string> {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (!in || !(text << in.rdbuf()))
      return make_error(ErrorCode::kNotFound, flag, ": cannot read '", path, "'");
    return text.str();
  };
  if (!grammar_file.empty()) {
    SINTER_ASSIGN(options.grammar, read_text(grammar_file, "--grammar-file"));
  } else if (!json_schema_file.empty()) {
    SINTER_ASSIGN(const std::string schema, read_text(json_schema_file, "--json-schema"));
    auto converted = json_schema_text_to_grammar(schema);
    if (!converted) return converted.error().with_context(json_schema_file);
    options.grammar = std::move(converted).value();
  } else if (json) {
    options.grammar = json_object_grammar();
  }
  if (!options.grammar.empty()) {
    // Checked here so that a bad grammar is reported before the model loads, with the file name.
    auto compiled = compile_grammar(options.grammar);
    if (!compiled)
      return compiled.error().with_context(grammar_file.empty() ? json_schema_file : grammar_file);
  }
  return options;
}

}  // namespace sinter::cli
