// The last step of the chain: pick one token, greedily or by a seeded draw.
#include <limits>

#include "sample/stages.h"

namespace sinter {

bool keep_argmax(CandidateSet& set) {
  if (set.entries.empty()) return false;
  size_t best = 0;
  for (size_t i = 1; i < set.size(); ++i) {
    if (ranks_before(set.entries[i], set.entries[best])) best = i;
  }
  if (set.entries[best].logit == -std::numeric_limits<float>::infinity()) return false;
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
