#include "sinter/engine.h"

#include <chrono>

#include "runtime/embedding.h"

namespace sinter {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::load(const std::string& path, const EngineOptions& options) {
  auto engine = std::unique_ptr<Engine>(new Engine());
  engine->options_ = options;
  SINTER_ASSIGN(auto loaded, LoadedModel::load(path, LoadOptions{options.backend, options.threads}));
  SINTER_TRY(check_generative(loaded->model().shape()));
  engine->model_ = loaded;
  auto tokenizer = Tokenizer::from_metadata(loaded->file().metadata(), options.tokenizer);
  if (!tokenizer) return tokenizer.error().with_context(path);
  engine->tokenizer_ = std::move(tokenizer).value();
  if (engine->tokenizer_->vocab_size() != loaded->model().shape().n_vocab) {
    return make_error(ErrorCode::kFormat, path, ": the tokenizer has ", engine->tokenizer_->vocab_size(),
                      " tokens but the model's vocabulary is ", loaded->model().shape().n_vocab);
  }
  ContextOptions context_options;
  context_options.n_ctx = options.n_ctx;
  context_options.n_batch = options.n_batch;
  context_options.kv_type = options.kv_type;
  context_options.state_checkpoint_bytes = options.state_checkpoint_bytes;
  SINTER_ASSIGN(engine->context_, Context::create(loaded, context_options));
  return engine;
}

Status Engine::switch_backend(std::string_view name) {
  LoadOptions options = model_->options();
  options.backend = std::string(name);
  SINTER_ASSIGN(std::shared_ptr<LoadedModel> moved, model_->on_backend(options));
  SINTER_TRY(context_->switch_model(moved));
  model_ = std::move(moved);
  options_.backend = options.backend;
  return ok_status();
}

Result<std::vector<TokenId>> Engine::tokenize(std::string_view text, const PromptOptions& options) const {
  return tokenizer_->encode(text, EncodeOptions{options.add_special, options.parse_special});
}

Result<std::string> Engine::detokenize(std::span<const TokenId> ids, bool render_special) const {
  SINTER_TRY(tokenizer_->check_ids(ids));
  return tokenizer_->decode(ids, render_special);
}

Result<Generation> Engine::generate(std::string_view prompt, const GenerationOptions& options,
                                    const PromptOptions& prompt_options) {
  return stream(prompt, options, {}, prompt_options);
}

Result<Generation> Engine::stream(std::string_view prompt, const GenerationOptions& options,
                                  const TextCallback& on_text, const PromptOptions& prompt_options) {
  if (prompt.empty()) return make_error(ErrorCode::kInvalidArgument, "the prompt is empty");
  SINTER_ASSIGN(std::vector<TokenId> tokens, tokenize(prompt, prompt_options));
  return generate_tokens(std::move(tokens), options, on_text);
}

Result<Generation> Engine::generate_tokens(std::vector<TokenId> prompt, const GenerationOptions& options,
                                           const TextCallback& on_text) {
  const bool has_bos = !prompt.empty() && prompt.front() == tokenizer_->bos();
  SINTER_ASSIGN(SequenceState sequence, SequenceState::create(0, std::move(prompt), has_bos, options,
                                                              *tokenizer_, context_->n_ctx()));
  context_->memory().clear();
  Generation result;
  result.prompt_tokens = sequence.prompt_token_count();
  result.seed = sequence.seed();
  const auto start = std::chrono::steady_clock::now();
  auto generation_start = start;
  std::vector<BatchEntry> batch;
  const auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    result.text += text;
    if (on_text && !on_text(text)) sequence.cancel();
  };
  while (!sequence.finished()) {
    sequence.make_room(context_->memory());
    batch.clear();
    if (sequence.schedule(options_.n_batch, batch) == 0) break;
    SINTER_TRY(context_->decode(batch));
    if (sequence.wants_logits()) {
      if (sequence.generated().empty()) {
        result.prompt_seconds = seconds_since(start);
        generation_start = std::chrono::steady_clock::now();
      }
      SINTER_ASSIGN(std::string text, sequence.accept_logits(context_->logits(context_->output_count() - 1)));
      sequence.take_logprobs(result.logprobs);
      emit(text);
    }
  }
  emit(sequence.finish_text());
  sequence.take_logprobs(result.logprobs);
  result.generation_seconds = seconds_since(generation_start);
  result.tokens = sequence.generated();
  result.stop_reason = sequence.stop_reason();
  result.context_shifts = sequence.context_shifts();
  return result;
}

Result<std::vector<std::vector<float>>> Engine::eval(std::span<const TokenId> tokens,
                                                     std::span<const int32_t> positions) {
  if (tokens.empty()) return make_error(ErrorCode::kInvalidArgument, "no tokens to evaluate");
  SINTER_TRY(tokenizer_->check_ids(tokens));
  std::vector<bool> wanted(tokens.size(), false);
  for (int32_t p : positions) {
    if (p < 0 || static_cast<size_t>(p) >= tokens.size()) {
      return make_error(ErrorCode::kInvalidArgument, "position ", p, " is outside the ", tokens.size(),
                        " tokens");
    }
    wanted[static_cast<size_t>(p)] = true;
  }
  context_->memory().clear();
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < tokens.size(); ++i)
    batch.push_back({tokens[i], static_cast<Position>(i), 0, wanted[i]});
  SINTER_TRY(context_->decode(batch));
  std::vector<std::vector<float>> by_position(tokens.size());
  int32_t k = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (wanted[i]) {
      const auto logits = context_->logits(k++);
      by_position[i].assign(logits.begin(), logits.end());
    }
  }
  std::vector<std::vector<float>> out;
  for (int32_t p : positions) out.push_back(by_position[static_cast<size_t>(p)]);
  return out;
}

}  // namespace sinter
