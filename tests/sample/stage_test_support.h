// Builds CandidateSets over small hand-made vocabularies for the stage tests.
#pragma once

#include <cmath>
#include <vector>

#include "sample/candidates.h"

namespace sinter::testing {

// Owns the buffers of a CandidateSet made from logits (token i has logits[i]).
struct OwnedSet {
  explicit OwnedSet(const std::vector<float>& logits) : buffer(logits.size()), scratch(logits.size()) {
    for (size_t i = 0; i < logits.size(); ++i) buffer[i] = {static_cast<TokenId>(i), logits[i], 0.0f};
    set = CandidateSet{buffer, 0, true, scratch};
  }
  // The set with its entries in the given order of ids (not in id order any more).
  OwnedSet(const std::vector<float>& logits, const std::vector<TokenId>& order) : OwnedSet(logits) {
    for (size_t i = 0; i < order.size(); ++i)
      buffer[i] = {order[i], logits[static_cast<size_t>(order[i])], 0.0f};
    set.in_id_order = false;
  }

  std::vector<TokenId> ids() const {
    std::vector<TokenId> result;
    for (const Candidate& c : set.entries) result.push_back(c.id);
    return result;
  }
  std::vector<float> logits() const {
    std::vector<float> result;
    for (const Candidate& c : set.entries) result.push_back(c.logit);
    return result;
  }

  std::vector<Candidate> buffer;
  std::vector<Candidate> scratch;
  CandidateSet set;
};

// Logits whose softmax is exactly proportional to the given weights.
inline std::vector<float> logits_for(const std::vector<double>& weights) {
  std::vector<float> logits;
  for (double w : weights) logits.push_back(static_cast<float>(std::log(w)));
  return logits;
}

}  // namespace sinter::testing
