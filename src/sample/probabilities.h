// Probabilities from logits at temperature 1 with no other sampler: what `sinter probs` prints
// and what the differential tests compare with llama.cpp.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/token.h"

namespace sinter {

// p_i = exp(l_i - max) / sum_j exp(l_j - max), all in double, rounded to float at the end.
// -inf logits get 0; if some logits are +inf they share the probability equally; if any is NaN,
// or every logit is -inf, every probability is NaN (there is no distribution).
// out.size() must equal logits.size().
void softmax(std::span<const float> logits, std::span<float> out);
std::vector<float> softmax(std::span<const float> logits);

struct TokenProbability {
  TokenId token;
  float probability;
};

// The top_n most probable tokens (all of them when top_n is 0 or at least the vocabulary),
// most probable first, ties by lower id: the shape of the oracle's `probs` output.
std::vector<TokenProbability> top_probabilities(std::span<const float> logits, size_t top_n);

}  // namespace sinter
