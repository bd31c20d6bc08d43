#include "sample/probabilities.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinter {

void softmax(std::span<const float> logits, std::span<float> out) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  float largest = -kInfinity;
  bool has_nan = false;
  for (float l : logits) {
    has_nan = has_nan || std::isnan(l);
    largest = std::max(largest, l);
  }
  if (has_nan || largest == -kInfinity) {
    std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    return;
  }
  if (largest == kInfinity) {
    const auto infinite = static_cast<double>(std::count(logits.begin(), logits.end(), kInfinity));
    for (size_t i = 0; i < logits.size(); ++i)
      out[i] = logits[i] == kInfinity ? static_cast<float>(1.0 / infinite) : 0.0f;
    return;
  }
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - largest);
  for (size_t i = 0; i < logits.size(); ++i) {
    out[i] = static_cast<float>(std::exp(static_cast<double>(logits[i]) - largest) / sum);
  }
}

std::vector<float> softmax(std::span<const float> logits) {
  std::vector<float> probabilities(logits.size());
  softmax(logits, probabilities);
  return probabilities;
}

std::vector<TokenProbability> top_probabilities(std::span<const float> logits, size_t top_n) {
  const std::vector<float> p = softmax(logits);
  std::vector<TokenProbability> ranked(p.size());
  for (size_t i = 0; i < p.size(); ++i) ranked[i] = {static_cast<TokenId>(i), p[i]};
  const size_t n = top_n == 0 ? ranked.size() : std::min(top_n, ranked.size());
  // Ranked by logit, not by the rounded probability, so that ties are real ties; NaN ranks last.
  const auto rank_key = [&](TokenId token) {
    const float l = logits[static_cast<size_t>(token)];
    return std::isnan(l) ? -std::numeric_limits<float>::infinity() : l;
  };
  const auto more_probable = [&](const TokenProbability& a, const TokenProbability& b) {
    const float la = rank_key(a.token);
    const float lb = rank_key(b.token);
    return la > lb || (la == lb && a.token < b.token);
  };
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end(),
                    more_probable);
  ranked.resize(n);
  return ranked;
}

}  // namespace sinter
