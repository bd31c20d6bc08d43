// The last step of the chain: pick one token, greedily or by a seeded draw.
#include <limits>

#include "sample/stages.h"

namespace sinter {

bool keep_argmax(CandidateSet& set) {
  // Two simple passes (a max, then the first holder of it) rather than one branchy compare.
  const float largest = max_logit(set);
  if (set.entries.empty() || largest == -std::numeric_limits<float>::infinity()) return false;
  size_t best = set.size();
  for (size_t i = 0; i < set.size(); ++i) {
    if (set.entries[i].logit != largest) continue;
    if (best == set.size() || set.entries[i].id < set.entries[best].id) best = i;
    if (set.in_id_order) break;  // the first holder has the lowest id
  }
  set.entries[0] = set.entries[best];
  set.entries[0].p = 1.0f;
  set.entries = set.entries.first(1);
  set.sorted_count = 1;
  set.in_id_order = false;
  return true;
}

TokenId draw(const CandidateSet& set, double u) {
  double total = 0.0;
  for (const Candidate& c : set.entries) total += c.p;
  const double target = u * total;
  double cumulative = 0.0;
  TokenId last_possible = set.entries.empty() ? kNoToken : set.entries[0].id;
  for (const Candidate& c : set.entries) {
    if (c.p <= 0.0f) continue;
    cumulative += c.p;
    last_possible = c.id;
    if (cumulative > target) return c.id;
  }
  // u * total rounded up to total (u within 2^-53 of 1): the last token that has probability.
  return last_possible;
}

}  // namespace sinter
