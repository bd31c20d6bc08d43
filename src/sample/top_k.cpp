// Top-k: keep the k most likely tokens.
#include <algorithm>

#include "sample/stages.h"

namespace sinter {

void apply_top_k(CandidateSet& set, int32_t k, size_t min_keep) {
  if (k <= 0) return;
  const size_t keep = std::max({static_cast<size_t>(k), min_keep, size_t{1}});
  if (keep >= set.size()) return;
  keep_top(set, keep);
}

}  // namespace sinter
