// Logit bias: a fixed value added to chosen tokens' logits (-inf bans a token).
#include <algorithm>

#include "sample/stages.h"

namespace sinter {

void apply_logit_bias(CandidateSet& set, std::span<const LogitBias> biases) {
  if (biases.empty()) return;
  if (set.in_id_order) {
    // entries[id] is token id: touch only the biased tokens.
    for (const LogitBias& b : biases) {
      if (b.token >= 0 && static_cast<size_t>(b.token) < set.size()) set.entries[b.token].logit += b.bias;
    }
  } else {
    for (Candidate& c : set.entries) {
      const auto found = std::lower_bound(biases.begin(), biases.end(), c.id,
                                          [](const LogitBias& b, TokenId id) { return b.token < id; });
      if (found != biases.end() && found->token == c.id) c.logit += found->bias;
    }
  }
  set.sorted_count = 0;  // the logits moved, so the ranking may have changed
}

}  // namespace sinter
