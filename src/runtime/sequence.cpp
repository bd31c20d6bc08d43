#include "runtime/sequence.h"

#include <algorithm>
#include <mutex>

#include "sample/grammar/grammar_matcher.h"
#include "sample/grammar/token_trie.h"

namespace sinter {
namespace {

// The grammar's view of the tokenizer's vocabulary (pieces with special tokens rendered, as
// llama.cpp's grammar sees them), built once and shared by the sequences alive at the same time.
// The cache holds it weakly: while an entry is alive some sequence holds it, and with it a
// reference to its tokenizer, so the address cannot be reused by another tokenizer meanwhile.
std::shared_ptr<const GrammarVocabulary> grammar_vocabulary_for(const Tokenizer& tokenizer) {
  static std::mutex mutex;
  static std::vector<std::pair<const Tokenizer*, std::weak_ptr<const GrammarVocabulary>>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::erase_if(cache, [](const auto& entry) { return entry.second.expired(); });
  for (const auto& [owner, vocabulary] : cache) {
    if (owner == &tokenizer) {
      if (auto alive = vocabulary.lock()) return alive;
    }
  }
  std::vector<std::string> pieces(static_cast<size_t>(tokenizer.vocab_size()));
  std::vector<bool> end_of_generation(pieces.size());
  for (TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
    pieces[static_cast<size_t>(id)] = tokenizer.token_to_piece(id, /*render_special=*/true);
    end_of_generation[static_cast<size_t>(id)] = tokenizer.is_end_of_generation(id);
  }
  auto built = GrammarVocabulary::build(std::move(pieces), std::move(end_of_generation));
  cache.emplace_back(&tokenizer, built);
  return built;
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "none";
    case StopReason::kMaxTokens: return "length";
    case StopReason::kEndOfGeneration: return "stop";
    case StopReason::kStopString: return "stop";
    case StopReason::kContextFull: return "context";
    case StopReason::kCancelled: return "cancelled";
  }
  return "?";
}

Result<SequenceState> SequenceState::create(SequenceId id, std::vector<TokenId> prompt, bool prompt_has_bos,
                                            const GenerationOptions& options, const Tokenizer& tokenizer,
                                            int32_t n_ctx) {
  if (prompt.empty()) return make_error(ErrorCode::kInvalidArgument, "the prompt is empty");
  if (options.max_tokens <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "the number of tokens to generate must be positive, got ",
                      options.max_tokens);
  }
  if (options.keep < 0) return make_error(ErrorCode::kInvalidArgument, "keep must not be negative");
  if (options.top_logprobs < 0 || options.top_logprobs > kMaxTopLogprobs) {
    return make_error(ErrorCode::kInvalidArgument, "top_logprobs must be between 0 and ", kMaxTopLogprobs,
                      ", got ", options.top_logprobs);
  }
  SINTER_TRY(tokenizer.check_ids(prompt));
  const int32_t kept =
      std::min<int32_t>(static_cast<int32_t>(prompt.size()), (prompt_has_bos ? 1 : 0) + options.keep);
  const auto length = static_cast<int32_t>(prompt.size());
  if (length >= n_ctx) {
    if (options.overflow == OverflowPolicy::kError) {
      return make_error(ErrorCode::kContextFull, "the prompt has ", length, " tokens but the context holds ",
                        n_ctx, " (with room for at least one generated token)");
    }
    // Shift policy: keep the prefix and the most recent tokens, leaving a quarter of the
    // context for generation.
    const int32_t tail = std::max<int32_t>(1, n_ctx - n_ctx / 4 - kept);
    if (kept + tail >= n_ctx) {
      return make_error(ErrorCode::kContextFull, "the kept prefix of ", kept,
                        " tokens leaves no room in a context of ", n_ctx);
    }
    prompt.erase(prompt.begin() + kept, prompt.end() - tail);
  }
  SINTER_ASSIGN(SamplerChain sampler, SamplerChain::create(options.sampling, tokenizer.vocab_size()));
  for (TokenId token : prompt) SINTER_TRY(sampler.accept(token));
  // Set after the prompt's tokens: the grammar constrains what is generated.
  if (!options.grammar.empty()) {
    SINTER_ASSIGN(std::shared_ptr<const CompiledGrammar> grammar,
                  compile_grammar(options.grammar, options.grammar_limits));
    SINTER_TRY(
        sampler.set_grammar(std::move(grammar), grammar_vocabulary_for(tokenizer), options.grammar_triggers));
  }
  return SequenceState(id, std::move(prompt), kept, options, tokenizer, n_ctx, std::move(sampler));
}

SequenceState::SequenceState(SequenceId id, std::vector<TokenId> prompt, int32_t kept,
                             const GenerationOptions& options, const Tokenizer& tokenizer, int32_t n_ctx,
                             SamplerChain sampler)
    : id_(id),
      prompt_(std::move(prompt)),
      kept_(kept),
      options_(options),
      tokenizer_(&tokenizer),
      n_ctx_(n_ctx),
      sampler_(std::move(sampler)),
      detokenizer_(tokenizer, options.render_special),
      stops_(options.stop) {}

void SequenceState::make_room(SequenceMemory& memory) {
  if (finished()) return;
  const int32_t needed = pending_token_ ? 1 : std::min<int32_t>(1, fill_count() - prompt_cursor_);
  if (n_past_ + needed <= n_ctx_) return;
  // A memory whose recurrent layers summarize every token seen cannot shift them out.
  if (options_.overflow == OverflowPolicy::kError || n_past_ - kept_ < 2 || !memory.can_shift()) {
    stop_ = StopReason::kContextFull;
    return;
  }
  // Drop the older half of what follows the kept prefix; later keys move back by as many
  // positions and are re-rotated before the next pass.
  const int32_t discard = (n_past_ - kept_) / 2;
  memory.remove(id_, kept_, kept_ + discard);
  memory.shift(id_, kept_ + discard, n_past_, -discard);
  n_past_ -= discard;
  ++shifts_;
}

void SequenceState::skip_prompt(int32_t count) {
  count = std::clamp<int32_t>(count, 0, fill_count() - 1);
  prompt_cursor_ = count;
  n_past_ = count;
}

std::vector<TokenId> SequenceState::fill_tokens() const {
  std::vector<TokenId> tokens(prompt_);
  tokens.insert(tokens.end(), generated_.begin(), generated_.begin() + replayed_);
  return tokens;
}

void SequenceState::suspend() {
  // Between passes a running sequence is either still prefilling or holds a sampled token that
  // is not in the cache yet (pending_token_): the cache holds the fill tokens scheduled so far.
  // Re-filling goes through every generated token, the pending one last: its logits pick the
  // next token as the pass that was due would have.
  if (pending_token_) replayed_ = static_cast<int32_t>(generated_.size());
  pending_token_ = false;
  prompt_cursor_ = 0;
  n_past_ = 0;
}

void SequenceState::adopt_computed_prompt() {
  prompt_cursor_ = prompt_token_count();
  n_past_ = prompt_token_count();
  pending_token_ = false;
  wants_logits_ = true;
}

int32_t SequenceState::schedule(int32_t max_tokens, std::vector<BatchEntry>& batch) {
  wants_logits_ = false;
  if (finished() || max_tokens <= 0) return 0;
  if (pending_token_) {
    batch.push_back({generated_.back(), n_past_, id_, true});
    ++n_past_;
    pending_token_ = false;
    wants_logits_ = true;
    return 1;
  }
  const int32_t room = n_ctx_ - n_past_;
  const int32_t count = std::min({max_tokens, fill_count() - prompt_cursor_, room});
  for (int32_t i = 0; i < count; ++i) {
    const bool last = prompt_cursor_ + 1 == fill_count();
    batch.push_back({fill_token(prompt_cursor_), n_past_, id_, last});
    ++prompt_cursor_;
    ++n_past_;
    wants_logits_ = last;
  }
  return count;
}

Result<std::string> SequenceState::accept_logits(std::span<const float> logits) {
  wants_logits_ = false;
  SINTER_ASSIGN(const TokenId token, sampler_.sample(logits));
  SINTER_TRY(sampler_.accept(token));
  if (!options_.ignore_eos && tokenizer_->is_end_of_generation(token)) {
    stop_ = StopReason::kEndOfGeneration;
    return std::string();
  }
  generated_.push_back(token);
  if (options_.logprobs) {
    const auto top_n = static_cast<size_t>(options_.top_logprobs);
    TokenLogprob entry;
    entry.token = token;
    entry.piece = tokenizer_->token_to_piece(token, options_.render_special);
    entry.logprob = log_softmax_top(logits, token, top_n, top_scratch_);
    entry.top.reserve(top_scratch_.size());
    for (const LogprobValue& v : top_scratch_) {
      entry.top.push_back({v.token, tokenizer_->token_to_piece(v.token, options_.render_special), v.logprob});
    }
    logprobs_.push(std::move(entry));
  }
  std::string text = stops_.push(detokenizer_.push(token));
  if (options_.logprobs) {
    if (stops_.stopped()) {
      logprobs_.cut(text.size());
    } else {
      logprobs_.release(text.size());
    }
  }
  if (stops_.stopped()) {
    stop_ = StopReason::kStopString;
  } else if (static_cast<int32_t>(generated_.size()) >= options_.max_tokens) {
    stop_ = StopReason::kMaxTokens;
  } else {
    pending_token_ = true;
  }
  return text;
}

std::string SequenceState::finish_text() {
  if (stops_.stopped()) return {};
  std::string text = stops_.push(detokenizer_.flush());
  if (stops_.stopped()) {  // the held-back bytes completed a stop string
    logprobs_.cut(text.size());
    return text;
  }
  text += stops_.flush();
  logprobs_.release_all();
  return text;
}

}  // namespace sinter
