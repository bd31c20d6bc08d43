#include "sample/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinter {
namespace {

// Higher logit first; equal logits: lower id first (candidates.h's ranks_before).
bool ranks_before(float logit_a, TokenId a, float logit_b, TokenId b) {
  return logit_a > logit_b || (logit_a == logit_b && a < b);
}

}  // namespace

float log_softmax_top(std::span<const float> logits, TokenId token, size_t k,
                      std::vector<LogprobValue>& top) {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  top.clear();
  float largest = kMinusInfinity;
  for (float l : logits) largest = std::max(largest, l);
  // log(sum exp(l - max)); with every logit at -inf there is no distribution: all -inf.
  double log_sum = std::numeric_limits<double>::infinity();
  if (largest != kMinusInfinity) {
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - largest);
    log_sum = std::log(sum);
  }
  const auto logprob = [&](TokenId id) {
    const float l = logits[static_cast<size_t>(id)];
    if (l == kMinusInfinity || largest == kMinusInfinity) return kMinusInfinity;
    return static_cast<float>(static_cast<double>(l) - largest - log_sum);
  };

  // The k best as a sorted array: a new entry goes in by insertion (k is small: at most 20 for
  // the HTTP APIs; most logits fail the first comparison with the current k-th).
  k = std::min(k, logits.size());
  if (k > 0) {
    top.reserve(k);
    for (size_t i = 0; i < logits.size(); ++i) {
      const auto id = static_cast<TokenId>(i);
      const float l = logits[i];
      if (top.size() == k &&
          !ranks_before(l, id, logits[static_cast<size_t>(top.back().token)], top.back().token)) {
        continue;
      }
      if (top.size() == k) top.pop_back();
      auto at = top.end();
      while (at != top.begin() &&
             ranks_before(l, id, logits[static_cast<size_t>((at - 1)->token)], (at - 1)->token))
        --at;
      top.insert(at, {id, 0.0f});
    }
    for (LogprobValue& entry : top) entry.logprob = logprob(entry.token);
  }
  const bool known = token >= 0 && static_cast<size_t>(token) < logits.size();
  return known ? logprob(token) : kMinusInfinity;
}

}  // namespace sinter
