// Top-p (nucleus): keep the most likely tokens until their probability reaches p.
#include <algorithm>

#include "sample/stages.h"

namespace sinter {

void apply_top_p(CandidateSet& set, float p, size_t min_keep) {
  if (p >= 1.0f || set.size() <= 1) return;
  if (!compute_probabilities(set)) return;

  const size_t floor = std::max(min_keep, size_t{1});
  const double target = p;
  // Sort a prefix, walk it, and sort further only if the nucleus is longer: a peaked
  // distribution over 150k tokens needs a few hundred of them sorted, not all.
  const size_t n = set.size();
  double cumulative = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (i == set.sorted_count) sort_leading(set, std::max<size_t>(256, i * 4));
    cumulative += set.entries[i].p;
    if (cumulative >= target && i + 1 >= floor) {
      keep_first(set, i + 1);
      return;
    }
  }
  // Rounding left the sum short of p: keep everything.
}

}  // namespace sinter
