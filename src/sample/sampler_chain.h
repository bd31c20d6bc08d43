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
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/token.h"
#include "sample/candidates.h"
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
  // they should count). An id outside the vocabulary is an error.
  Status accept(TokenId token);

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
};

}  // namespace sinter
