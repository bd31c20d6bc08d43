// Min-p: drop tokens less likely than p times the most likely one.
#include <algorithm>
#include <cmath>

#include "sample/stages.h"

namespace sinter {

void apply_min_p(CandidateSet& set, float p, size_t min_keep) {
  if (p <= 0.0f || set.size() <= 1) return;
  // p_i >= p * p_max  <=>  logit_i >= max_logit + ln(p): no softmax needed.
  const float threshold = max_logit(set) + std::log(p);
  size_t passing = 0;
  for (const Candidate& c : set.entries) passing += c.logit >= threshold ? 1 : 0;

  const size_t floor = std::max(min_keep, size_t{1});
  if (passing >= floor) {
    keep_where(set, [&](size_t i) { return set.entries[i].logit >= threshold; });
  } else {
    keep_top(set, floor);
  }
}

}  // namespace sinter
