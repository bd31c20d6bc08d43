// SamplerChain: one sequence's sampler. Turns one position's logits into a token by running the
// configured stages over the candidates and then a greedy pick or a seeded draw.
//
//   SINTER_ASSIGN(SamplerChain chain, SamplerChain::create(options, vocab_size));
//   for (...) {
//     SINTER_ASSIGN(TokenId token, chain.sample(logits));   // logits: [vocab_size]
//     SINTER_TRY(chain.accept(token));                      // history for the penalties
//   }
//
// Reproducible: the same options, seed, logits and accepted tokens give the same tokens on every
// run, machine and thread count (see sample/random.h and docs/SAMPLING.md). sample() allocates
// nothing; the chain owns buffers sized to the vocabulary. Not thread-safe: one chain per
// sequence.
//
// With a grammar (set_grammar), only tokens the grammar allows are sampled, by llama.cpp's fast
// path: the unconstrained chain picks a token first, and it is kept when the grammar allows it;
// only otherwise are the disallowed tokens' logits set to -inf (the mask, one walk of the
// vocabulary trie) and the chain run again. Greedy gives exactly the argmax over the allowed
// tokens either way; a draw consumes one random number when the first pick is allowed and two
// when it is not (still reproducible: same seed, same tokens). accept() advances the grammar.
// End-of-generation tokens are allowed only where the grammar can be complete. With a grammar,
// sample() allocates (the matcher's stacks), and the grammar's work for one sample() (and for one
// accept()) is bounded by its GrammarLimits: past them the call is an error saying so
// (sample/grammar/grammar_budget.h).
//
// A lazy grammar (set_grammar with triggers, sample/grammar/grammar_trigger.h) leaves the text
// free until it contains a trigger; the text from the trigger's first byte must then match, and
// every later token is constrained. A token that would complete a trigger whose text the grammar
// rejects is not sampled (it is banned and the pick repeated).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/token.h"
#include "sample/candidates.h"
#include "sample/grammar/grammar_mask.h"
#include "sample/grammar/grammar_matcher.h"
#include "sample/grammar/grammar_trigger.h"
#include "sample/grammar/token_trie.h"
#include "sample/penalties.h"
#include "sample/random.h"
#include "sample/sampler_options.h"
#include "sinter/result.h"

namespace sinter {

class SamplerChain {
 public:
  // Validates the options (the first problem is the error) and sizes the buffers.
  static Result<SamplerChain> create(const SamplerOptions& options, int32_t vocab_size);

  // The next token. logits.size() must equal the vocabulary size; a NaN or +inf logit is an
  // error naming the token (a broken model must not turn into a plausible token), as is a
  // position where every token has been banned. Greedy (temperature 0) consumes no random
  // number; every other successful call consumes exactly one.
  Result<TokenId> sample(std::span<const float> logits);

  // The candidates the draw chooses among and their probabilities, after every stage of the
  // chain, without drawing (for reporting post-sampling probabilities). Greedy gives the argmax
  // alone with p = 1. The span is valid until the next call on this chain.
  Result<std::span<const Candidate>> distribution(std::span<const float> logits);

  // Records a token of the sequence for the penalties (call it for the prompt's tokens too if
  // they should count). An id outside the vocabulary is an error. With a grammar, the token also
  // advances it, and a token the grammar does not allow is an error (nothing recorded then).
  Status accept(TokenId token);

  // Constrains the tokens sampled from now on (the prompt's tokens, accepted before, are not
  // matched). `vocabulary` must have the chain's vocabulary size.
  // With trigger words, the grammar is lazy: off until the generated text contains one.
  Status set_grammar(std::shared_ptr<const CompiledGrammar> grammar,
                     std::shared_ptr<const GrammarVocabulary> vocabulary, GrammarTriggers triggers = {});
  const GrammarMatcher* grammar() const { return matcher_ ? &*matcher_ : nullptr; }
  // A grammar is set and constrains the tokens (not a lazy one still waiting for its trigger).
  bool grammar_active() const { return matcher_ && (!lazy_ || lazy_->triggered()); }
  // Off: always mask before sampling (tests compare both ways; the tokens are the same for greedy).
  void set_grammar_fast_path(bool on) { grammar_fast_path_ = on; }

  // Forgets the history and restarts the generator from the seed: the chain then repeats the
  // tokens it produced since creation, given the same logits.
  void reset();

  // The seed in use: the one asked for, or the random one drawn when none was.
  uint64_t seed() const { return seed_; }
  const SamplerOptions& options() const { return options_; }
  int32_t vocab_size() const { return vocab_size_; }

 private:
  SamplerChain(const SamplerOptions& options, int32_t vocab_size, uint64_t seed);

  // Fills the candidates from the logits and runs the stages; `set` is what is left.
  Status run_stages(std::span<const float> logits, CandidateSet& set);
  // The stages and the pick (argmax or draw) over the logits.
  Result<TokenId> pick(std::span<const float> logits);
  // masked_logits_ = logits, with -inf for every token the grammar does not allow now.
  Status mask_logits(std::span<const float> logits, GrammarBudget& budget);
  // A lazy grammar waiting for its trigger: an unconstrained pick, except tokens that would
  // start the grammar on text it rejects.
  Result<TokenId> pick_before_trigger(std::span<const float> logits, GrammarBudget& budget);
  // Whether token `id` would trigger the lazy grammar on text it rejects.
  Result<bool> triggers_rejected_text(TokenId id, GrammarBudget& budget) const;

  SamplerOptions options_;
  int32_t vocab_size_;
  uint64_t seed_;
  Xoshiro256StarStar generator_;
  std::vector<LogitBias> bias_by_token_;  // the options' biases, sorted by token, one per token
  PenaltyOptions penalties_;
  TokenWindow window_;
  std::vector<Candidate> candidates_;          // [vocab_size]
  std::vector<Candidate> sort_scratch_;        // [vocab_size]
  std::vector<TypicalScore> typical_scratch_;  // [vocab_size] when typical sampling is on
  // Grammar (optional).
  std::shared_ptr<const GrammarVocabulary> grammar_vocabulary_;
  std::optional<GrammarMatcher> matcher_;
  std::optional<TriggerScan> lazy_;  // set for a lazy grammar
  bool grammar_fast_path_ = true;
  std::vector<uint8_t> allowed_;      // [vocab_size]
  std::vector<float> masked_logits_;  // [vocab_size]
  GrammarMaskScratch mask_scratch_;
};

}  // namespace sinter
