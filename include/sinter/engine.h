// sinter's library API: load a model, tokenize, generate (all at once or streamed), and read
// logits. Every call returns a Result: nothing throws across this API or exits the process.
//
//   SINTER_ASSIGN(auto engine, sinter::Engine::load("model.gguf"));
//   sinter::GenerationOptions options;
//   options.max_tokens = 64;
//   options.sampling.temperature = 0;  // greedy
//   SINTER_ASSIGN(auto result, engine->generate("Once upon a time", options));
//   std::puts(result.text.c_str());
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/context.h"
#include "runtime/sequence.h"
#include "sinter/result.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

struct EngineOptions {
  std::string backend = "cpu";
  int threads = 0;        // 0: all cores
  int32_t n_ctx = 0;      // 0: the model's training context, capped at 4096
  int32_t n_batch = 512;  // most tokens per forward pass
  DType kv_type = DType::F16;
  // Host memory for a recurrent state's checkpoints (0: eight sequence states, at most 1 GiB).
  size_t state_checkpoint_bytes = 0;
  TokenizerOptions tokenizer;
};

struct PromptOptions {
  bool add_special = true;    // BOS (as the model's add_bos flag says)
  bool parse_special = true;  // special-token text in the prompt becomes special tokens
};

struct Generation {
  std::string text;             // everything generated (stop string excluded)
  std::vector<TokenId> tokens;  // generated tokens (end-of-generation token excluded)
  // With options.logprobs: one entry per reported token, in order: every generated token but
  // those wholly inside a stop string (runtime/token_logprobs.h).
  std::vector<TokenLogprob> logprobs;
  int32_t prompt_tokens = 0;
  StopReason stop_reason = StopReason::kNone;
  int32_t context_shifts = 0;
  uint64_t seed = 0;              // the sampler seed used
  double prompt_seconds = 0;      // prefill
  double generation_seconds = 0;  // sampling and decoding after the prompt
};

// Receives text as it is generated; return false to stop.
using TextCallback = std::function<bool(std::string_view text)>;

class Engine {
 public:
  // Loads and diagnoses the model; refuses a file that cannot run, saying why.
  static Result<std::unique_ptr<Engine>> load(const std::string& path, const EngineOptions& options = {});
  ~Engine();

  Result<std::vector<TokenId>> tokenize(std::string_view text, const PromptOptions& options = {}) const;
  Result<std::string> detokenize(std::span<const TokenId> ids, bool render_special = false) const;

  Result<Generation> generate(std::string_view prompt, const GenerationOptions& options,
                              const PromptOptions& prompt_options = {});
  // As generate(), calling on_text with each piece of text as soon as it is complete.
  Result<Generation> stream(std::string_view prompt, const GenerationOptions& options,
                            const TextCallback& on_text, const PromptOptions& prompt_options = {});
  Result<Generation> generate_tokens(std::vector<TokenId> prompt, const GenerationOptions& options,
                                     const TextCallback& on_text = {});

  // Logits ([n_vocab] each) after the tokens at `positions` of `tokens`, evaluated from an
  // empty context in passes of at most n_batch tokens.
  Result<std::vector<std::vector<float>>> eval(std::span<const TokenId> tokens,
                                               std::span<const int32_t> positions);

  // Moves the model to another backend (its weights adopted, copied or repacked there) while
  // the context keeps every sequence's cells: a generation may switch between two tokens (from
  // a TextCallback) and continue where it was. On error nothing changed.
  Status switch_backend(std::string_view name);

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  Context& context() { return *context_; }
  const LoadedModel& model() const { return *model_; }

 private:
  Engine() = default;
  std::shared_ptr<const LoadedModel> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Context> context_;
  EngineOptions options_;
};

}  // namespace sinter
