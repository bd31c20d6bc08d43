// Log-probabilities of the model's own distribution at one position: the log-softmax of the raw
// logits (temperature 1; no logit bias, penalties, truncation or temperature), which is what
// OpenAI's `logprobs` and llama.cpp's server report and what clients expect. The sampler may draw
// from a different (adjusted, truncated) distribution; these values describe the model.
//
//   std::vector<LogprobValue> top;                      // reused between positions
//   float lp = log_softmax_top(logits, sampled, 5, top);  // top: 5 most likely, most likely first
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/token.h"

namespace sinter {

struct LogprobValue {
  TokenId token = kNoToken;
  float logprob = 0.0f;  // natural log; -inf for a token whose logit is -inf
};

// Returns log p(token) and fills `top` with the min(k, vocabulary) most likely tokens, most
// likely first (ties: lower id first, as the sampler ranks), each with its log-probability.
//   logprob_i = (l_i - max) - log(sum_j exp(l_j - max)), in double, rounded to float at the end.
// The logits must be finite or -inf (the sampler has rejected NaN and +inf before); if every
// logit is -inf, every log-probability is -inf. `top` is cleared first; with k = 0 it stays empty
// and nothing is allocated. O(vocabulary · log k) time.
float log_softmax_top(std::span<const float> logits, TokenId token, size_t k, std::vector<LogprobValue>& top);

}  // namespace sinter
