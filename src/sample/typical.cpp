// Locally typical sampling (Meister, Pimentel, Wiher, Cotterell 2022, "Locally Typical
// Sampling"): keep the tokens whose surprise -ln p is closest to the distribution's entropy.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sample/stages.h"

namespace sinter {

void apply_typical(CandidateSet& set, float p, size_t min_keep, std::span<TypicalScore> scratch) {
  if (p >= 1.0f || set.size() <= 1) return;
  if (!compute_probabilities(set)) return;

  const size_t n = set.size();
  double entropy = 0.0;  // H = -sum p ln p, in nats; tokens with p = 0 contribute 0
  for (const Candidate& c : set.entries) {
    if (c.p > 0.0f) entropy -= static_cast<double>(c.p) * std::log(static_cast<double>(c.p));
  }
  for (size_t i = 0; i < n; ++i) {
    const double pi = set.entries[i].p;
    const float score = pi > 0.0 ? static_cast<float>(std::fabs(-std::log(pi) - entropy))
                                 : std::numeric_limits<float>::infinity();
    scratch[i] = {score, static_cast<uint32_t>(i)};
  }
  const auto more_typical = [](const TypicalScore& a, const TypicalScore& b) {
    return a.score < b.score || (a.score == b.score && a.index < b.index);
  };

  // Same growing partial sort as top-p, on the typicality score.
  const size_t floor = std::max(min_keep, size_t{1});
  const double target = p;
  const auto begin = scratch.begin();
  size_t sorted = 0;
  size_t kept = n;  // n: the cumulative probability never exceeded p, keep everything
  double cumulative = 0.0;
  for (size_t i = 0; i < n && kept == n; ++i) {
    if (i == sorted) {
      const size_t next_sorted = std::min(n, std::max<size_t>(256, sorted * 4));
      std::partial_sort(begin + static_cast<std::ptrdiff_t>(sorted),
                        begin + static_cast<std::ptrdiff_t>(next_sorted),
                        begin + static_cast<std::ptrdiff_t>(n), more_typical);
      sorted = next_sorted;
    }
    cumulative += set.entries[scratch[i].index].p;
    if (cumulative > target && i + 1 >= floor) kept = i + 1;
  }
  if (kept == n) return;

  // Keep the survivors in their current order (which preserves a logit-sorted prefix): mark
  // them by sorting their indices.
  std::sort(begin, begin + static_cast<std::ptrdiff_t>(kept),
            [](const TypicalScore& a, const TypicalScore& b) { return a.index < b.index; });
  size_t next_survivor = 0;
  keep_where(set, [&](size_t i) {
    if (next_survivor < kept && scratch[next_survivor].index == i) {
      ++next_survivor;
      return true;
    }
    return false;
  });
}

}  // namespace sinter
