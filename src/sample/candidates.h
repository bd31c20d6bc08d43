// The candidate tokens of one position as the sampler stages see them, and the helpers every stage
// shares: ranking, partial sorting, in-place filtering and the softmax over what is left.
//
// A stage works on a CandidateSet: a view of a buffer the SamplerChain owns (one entry per
// vocabulary token), which stages shrink and reorder in place, so that sampling a token never
// allocates.
//
// Reproducibility: every arrangement of the candidates is a function of the logits alone, never
// of the standard library. Sorting uses a strict total order (ranks_before), and a partial sort
// leaves the unsorted rest in its previous relative order (std::partial_sort would leave it in
// an implementation-defined order, which would change sums and draws between libraries).
#pragma once

#include <cstddef>
#include <span>

#include "core/token.h"

namespace sinter {

struct Candidate {
  TokenId id;
  float logit;  // the model's logit after the stages so far (penalties, bias, temperature)
  float p;      // probability; valid only after compute_probabilities()
};

// The order every sort uses: higher logit first, and on equal logits the lower id first, so that
// the order (and with it every draw) is the same with any standard library.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

struct CandidateSet {
  // The live candidates. Stages drop candidates by shrinking the span (after moving the kept ones
  // to the front).
  std::span<Candidate> entries;
  // entries[0, sorted_count) are the largest logits of the set in ranks_before order (logits
  // non-increasing). Stages that change logits reset it; removing candidates keeps it valid for
  // the survivors (every entry behind the prefix ranks below every entry in it).
  size_t sorted_count = 0;
  // entries[i].id == i for every i: the whole vocabulary in id order, untouched. Lets stages
  // that adjust a few known ids (logit bias) index directly.
  bool in_id_order = false;
  // Working space for sorting, at least as long as entries.
  std::span<Candidate> scratch;

  size_t size() const { return entries.size(); }
};

// Makes entries[0, min(k, size)) the top of the set in ranks_before order, reusing a prefix that
// is already sorted. The other candidates keep their relative order, or, when k is more than an
// eighth of the unsorted rest, get sorted too (faster than a heap). O(n log k).
void sort_leading(CandidateSet& set, size_t k);

// Keeps only the top k candidates (at least one), sorted. O(n log k).
void keep_top(CandidateSet& set, size_t k);

// Keeps the first k candidates (k <= size).
void keep_first(CandidateSet& set, size_t k);

// Keeps the candidates for which keep(index) is true, in their current order.
template <class Keep>
void keep_where(CandidateSet& set, Keep&& keep) {
  size_t kept = 0;
  size_t sorted_kept = 0;
  for (size_t i = 0; i < set.entries.size(); ++i) {
    if (!keep(i)) continue;
    if (i < set.sorted_count) ++sorted_kept;
    set.entries[kept++] = set.entries[i];
  }
  if (kept != set.entries.size()) set.in_id_order = false;
  set.entries = set.entries.first(kept);
  set.sorted_count = sorted_kept;
}

// The largest logit of the set (-inf for an empty set).
float max_logit(const CandidateSet& set);

// Softmax of the logits into p, in double with the largest logit subtracted:
//   e_i = exp(double(logit_i) - max),  p_i = float(double(float(e_i)) / sum_j e_j)
// (the sum in double, in entry order; one exp per candidate).
// Tokens at -inf get p = 0. If some logits are +inf (an overflowing bias or a tiny
// temperature), they share the probability equally. Returns false, leaving p untouched, when
// the set is empty or every logit is -inf: there is no distribution to draw from.
bool compute_probabilities(CandidateSet& set);

}  // namespace sinter
