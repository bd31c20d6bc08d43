// The sampler stages: each turns a CandidateSet into a smaller or reshaped one, in place.
// One file per stage (top_k.cpp, top_p.cpp, ...); the semantics follow llama.cpp's samplers and
// are written out in docs/SAMPLING.md. None of them allocates.
//
// min_keep: the truncating stages never keep fewer than max(min_keep, 1) candidates (if there
// are that many).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "sample/candidates.h"

namespace sinter {

// A value added to one token's logit; -inf bans the token.
struct LogitBias {
  TokenId token;
  float bias;
};

// Adds each bias to its token's logit. `biases` is sorted by token with one entry per token
// (SamplerChain merges duplicates by summing them). O(biases) when the set is the whole
// vocabulary in id order, O(n log biases) otherwise.
void apply_logit_bias(CandidateSet& set, std::span<const LogitBias> biases);

// Keeps the k candidates with the largest logits, sorted (ties: lower id). k <= 0: no-op.
void apply_top_k(CandidateSet& set, int32_t k, size_t min_keep);

// Nucleus sampling: sorts by logit and keeps the shortest prefix whose probability (softmax over
// the set) reaches p: the candidate whose cumulative sum first reaches p is kept. p >= 1: no-op.
// Sorts only as far as needed (a growing partial sort), so a peaked distribution over a large
// vocabulary costs O(n) rather than O(n log n).
void apply_top_p(CandidateSet& set, float p, size_t min_keep);

// Keeps the candidates with probability >= p * (largest probability), i.e. with
// logit >= max_logit + ln(p). Keeps the candidates' order. p <= 0: no-op.
void apply_min_p(CandidateSet& set, float p, size_t min_keep);

// Scratch space for apply_typical, one entry per candidate (the chain owns it).
struct TypicalScore {
  float score;     // |-ln p_i - H|: how far the token's surprise is from the entropy
  uint32_t index;  // the candidate's index in the set
};

// Locally typical sampling (Meister et al. 2022): with p_i the softmax over the set and
// H = -sum p_i ln p_i, ranks candidates by |-ln p_i - H| (ascending; ties: earlier index) and
// keeps the shortest such prefix whose cumulative probability exceeds p (strictly, as
// llama.cpp). Survivors keep their current order. p >= 1: no-op.
// `scratch.size()` must be at least `set.size()`.
void apply_typical(CandidateSet& set, float p, size_t min_keep, std::span<TypicalScore> scratch);

// Divides every logit by `temperature` (> 0). Keeps the order.
void apply_temperature(CandidateSet& set, float temperature);

// Greedy decoding: the candidate with the largest logit (ties: lowest id) becomes the only one,
// with p = 1. Returns false when every logit is -inf (nothing can be chosen).
bool keep_argmax(CandidateSet& set);

// The draw: with p from compute_probabilities, total = sum of p_i (double, entry order) and
// target = u * total, returns the first candidate whose running sum exceeds target (candidates
// with p = 0 are never chosen). u in [0, 1). The set must hold a candidate with p > 0.
TokenId draw(const CandidateSet& set, double u);

}  // namespace sinter
