#include "sample/sampler_chain.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace sinter {
namespace {

bool has_stage(const SamplerOptions& options, SamplerStage stage) {
  return std::find(options.order.begin(), options.order.end(), stage) != options.order.end();
}

// Sorted by token, duplicates summed (so -inf plus anything stays a ban).
std::vector<LogitBias> merge_biases(std::vector<LogitBias> biases) {
  std::stable_sort(biases.begin(), biases.end(),
                   [](const LogitBias& a, const LogitBias& b) { return a.token < b.token; });
  std::vector<LogitBias> merged;
  for (const LogitBias& b : biases) {
    if (!merged.empty() && merged.back().token == b.token) {
      merged.back().bias += b.bias;
    } else {
      merged.push_back(b);
    }
  }
  return merged;
}

PenaltyOptions penalty_options(const SamplerOptions& options) {
  return {options.repeat_penalty, options.frequency_penalty, options.presence_penalty};
}

// The window only needs to exist when some penalty will read it.
int32_t window_length(const SamplerOptions& options) {
  const bool used = has_stage(options, SamplerStage::kPenalties) && penalty_options(options).active();
  return used ? options.repeat_last_n : 0;
}

}  // namespace

Result<SamplerChain> SamplerChain::create(const SamplerOptions& options, int32_t vocab_size) {
  SINTER_TRY(options.validate(vocab_size));
  const uint64_t seed = options.seed.has_value() ? *options.seed : random_seed();
  return SamplerChain(options, vocab_size, seed);
}

SamplerChain::SamplerChain(const SamplerOptions& options, int32_t vocab_size, uint64_t seed)
    : options_(options),
      vocab_size_(vocab_size),
      seed_(seed),
      generator_(seed),
      bias_by_token_(merge_biases(options.logit_bias)),
      penalties_(penalty_options(options)),
      window_(vocab_size, window_length(options)),
      candidates_(static_cast<size_t>(vocab_size)),
      sort_scratch_(static_cast<size_t>(vocab_size)) {
  if (options.typical_p < 1.0f && has_stage(options, SamplerStage::kTypicalP)) {
    typical_scratch_.resize(static_cast<size_t>(vocab_size));
  }
}

Status SamplerChain::run_stages(std::span<const float> logits, CandidateSet& set) {
  if (logits.size() != candidates_.size()) {
    return make_error(ErrorCode::kInvalidArgument, "sampler: got ", logits.size(),
                      " logits for a vocabulary of ", vocab_size_, " tokens");
  }
  // One branch-free pass: `logit < inf` is false exactly for NaN and +inf.
  bool all_usable = true;
  for (size_t i = 0; i < logits.size(); ++i) {
    const float logit = logits[i];
    all_usable &= logit < std::numeric_limits<float>::infinity();
    candidates_[i] = {static_cast<TokenId>(i), logit, 0.0f};
  }
  if (!all_usable) {
    const auto bad = std::find_if(logits.begin(), logits.end(),
                                  [](float l) { return !(l < std::numeric_limits<float>::infinity()); });
    return make_error(ErrorCode::kInvalidArgument, "sampler: the logit of token ", bad - logits.begin(),
                      " is ", *bad, " (the model produced a non-number)");
  }
  set = CandidateSet{candidates_, 0, true, sort_scratch_};

  const bool greedy = options_.temperature <= 0.0f;
  const auto min_keep = static_cast<size_t>(options_.min_keep);
  for (SamplerStage stage : options_.order) {
    switch (stage) {
      case SamplerStage::kLogitBias: apply_logit_bias(set, bias_by_token_); break;
      case SamplerStage::kPenalties: apply_penalties(set, window_, penalties_); break;
      // Greedy takes the argmax of the adjusted logits: truncation and temperature cannot
      // change it (except typical sampling, which may drop the argmax and is skipped on purpose).
      case SamplerStage::kTopK:
        if (!greedy) apply_top_k(set, options_.top_k, min_keep);
        break;
      case SamplerStage::kTypicalP:
        if (!greedy) apply_typical(set, options_.typical_p, min_keep, typical_scratch_);
        break;
      case SamplerStage::kTopP:
        if (!greedy) apply_top_p(set, options_.top_p, min_keep);
        break;
      case SamplerStage::kMinP:
        if (!greedy) apply_min_p(set, options_.min_p, min_keep);
        break;
      case SamplerStage::kTemperature:
        if (!greedy) apply_temperature(set, options_.temperature);
        break;
    }
  }

  const bool chosen = greedy ? keep_argmax(set) : compute_probabilities(set);
  if (!chosen) {
    return make_error(ErrorCode::kInvalidArgument,
                      "sampler: every token has probability zero (all logits are -inf after logit bias and "
                      "penalties)");
  }
  return ok_status();
}

Result<std::span<const Candidate>> SamplerChain::distribution(std::span<const float> logits) {
  if (grammar_active()) {
    GrammarBudget budget(matcher_->grammar().limits);
    SINTER_TRY(mask_logits(logits, budget));
    logits = masked_logits_;
  }
  CandidateSet set;
  SINTER_TRY(run_stages(logits, set));
  return std::span<const Candidate>(set.entries);
}

Result<TokenId> SamplerChain::pick(std::span<const float> logits) {
  CandidateSet set;
  SINTER_TRY(run_stages(logits, set));
  if (options_.temperature <= 0.0f) return set.entries[0].id;
  return draw(set, generator_.next_double());
}

Result<TokenId> SamplerChain::sample(std::span<const float> logits) {
  if (!matcher_) return pick(logits);
  // All the grammar's work for this token, fast path and mask, shares one budget.
  GrammarBudget budget(matcher_->grammar().limits);
  if (!grammar_active()) return pick_before_trigger(logits, budget);
  if (grammar_fast_path_) {
    SINTER_ASSIGN(const TokenId first, pick(logits));
    SINTER_ASSIGN(const bool allowed, grammar_allows_token(*matcher_, *grammar_vocabulary_, first, budget));
    if (allowed) return first;
  }
  SINTER_TRY(mask_logits(logits, budget));
  return pick(masked_logits_);
}

Result<bool> SamplerChain::triggers_rejected_text(TokenId id, GrammarBudget& budget) const {
  if (grammar_vocabulary_->is_end_of_generation(id)) return false;
  const std::string_view piece = grammar_vocabulary_->piece(id);
  const std::optional<size_t> start = lazy_->peek(piece);
  if (!start) return false;
  std::string text = lazy_->text();
  text += piece;
  SINTER_ASSIGN(const bool allowed, matcher_->allows(std::string_view(text).substr(*start), budget));
  return !allowed;
}

Result<TokenId> SamplerChain::pick_before_trigger(std::span<const float> logits, GrammarBudget& budget) {
  SINTER_ASSIGN(TokenId token, pick(logits));
  SINTER_ASSIGN(bool rejected, triggers_rejected_text(token, budget));
  if (!rejected) return token;
  // Rare: ban such tokens one at a time and pick again.
  if (logits.size() != masked_logits_.size()) {
    return make_error(ErrorCode::kInvalidArgument, "sampler: got ", logits.size(),
                      " logits for a vocabulary of ", vocab_size_, " tokens");
  }
  std::copy(logits.begin(), logits.end(), masked_logits_.begin());
  for (int32_t tries = 0; rejected && tries < vocab_size_; ++tries) {
    masked_logits_[static_cast<size_t>(token)] = -std::numeric_limits<float>::infinity();
    SINTER_ASSIGN(token, pick(masked_logits_));
    SINTER_ASSIGN(rejected, triggers_rejected_text(token, budget));
  }
  return token;
}

Status SamplerChain::mask_logits(std::span<const float> logits, GrammarBudget& budget) {
  if (logits.size() != masked_logits_.size()) {
    return make_error(ErrorCode::kInvalidArgument, "sampler: got ", logits.size(),
                      " logits for a vocabulary of ", vocab_size_, " tokens");
  }
  SINTER_TRY(grammar_token_mask(*matcher_, *grammar_vocabulary_, allowed_, mask_scratch_, budget));
  bool any = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    masked_logits_[i] = allowed_[i] ? logits[i] : -std::numeric_limits<float>::infinity();
    any |= allowed_[i] != 0;
  }
  if (!any) {
    return make_error(ErrorCode::kInvalidArgument,
                      "sampler: the grammar allows no token of the vocabulary here (no token's text can "
                      "continue it)");
  }
  return ok_status();
}

Status SamplerChain::set_grammar(std::shared_ptr<const CompiledGrammar> grammar,
                                 std::shared_ptr<const GrammarVocabulary> vocabulary,
                                 GrammarTriggers triggers) {
  if (!grammar || !vocabulary)
    return make_error(ErrorCode::kInvalidArgument, "sampler: no grammar or vocabulary");
  if (vocabulary->size() != vocab_size_) {
    return make_error(ErrorCode::kInvalidArgument, "sampler: the grammar's vocabulary has ",
                      vocabulary->size(), " tokens, the sampler's ", vocab_size_);
  }
  grammar_vocabulary_ = std::move(vocabulary);
  matcher_.emplace(std::move(grammar));
  lazy_.reset();
  if (!triggers.empty()) lazy_.emplace(std::move(triggers));
  allowed_.assign(static_cast<size_t>(vocab_size_), 0);
  masked_logits_.assign(static_cast<size_t>(vocab_size_), 0.0f);
  return ok_status();
}

Status SamplerChain::accept(TokenId token) {
  if (token < 0 || token >= vocab_size_) {
    return make_error(ErrorCode::kInvalidArgument, "sampler: accepted token ", token,
                      " is outside the vocabulary [0, ", vocab_size_, ")");
  }
  std::optional<GrammarBudget> budget;
  if (matcher_) budget.emplace(matcher_->grammar().limits);
  if (matcher_ && !grammar_active()) {
    if (!grammar_vocabulary_->is_end_of_generation(token)) {
      const std::string_view piece = grammar_vocabulary_->piece(token);
      if (const std::optional<size_t> start = lazy_->peek(piece)) {
        std::string text = lazy_->text();
        text += piece;
        // The trigger's text must match; then the scan records it and the grammar is active.
        SINTER_TRY(matcher_->accept(std::string_view(text).substr(*start), *budget));
      }
      lazy_->feed(piece);
    }
  } else if (matcher_) {
    SINTER_TRY(grammar_accept_token(*matcher_, *grammar_vocabulary_, token, *budget));
  }
  window_.push(token);
  return ok_status();
}

void SamplerChain::reset() {
  window_.clear();
  if (matcher_) matcher_->reset();
  if (lazy_) lazy_->reset();
  generator_ = Xoshiro256StarStar(seed_);
}

}  // namespace sinter
