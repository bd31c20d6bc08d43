#include "sample/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinter {

namespace {

// Writes the top `count` of entries[sorted_count, size) in ranks_before order to scratch[0, count)
// and returns that unsorted part. count >= 1.
std::span<Candidate> select_into_scratch(CandidateSet& set, size_t count) {
  const std::span<Candidate> rest = set.entries.subspan(set.sorted_count);
  std::partial_sort_copy(rest.begin(), rest.end(), set.scratch.begin(),
                         set.scratch.begin() + static_cast<std::ptrdiff_t>(count), ranks_before);
  return rest;
}

}  // namespace

void sort_leading(CandidateSet& set, size_t k) {
  k = std::min(k, set.size());
  if (set.sorted_count >= k) return;
  // Everything behind the sorted prefix ranks below it, so only the rest needs ordering.
  const size_t count = k - set.sorted_count;
  const std::span<Candidate> rest = set.entries.subspan(set.sorted_count);
  if (count * 8 >= rest.size()) {
    // Most of the rest: a full sort is faster than a heap, and with a strict total order its
    // result does not depend on the library either.
    std::sort(rest.begin(), rest.end(), ranks_before);
    set.sorted_count = set.size();
    set.in_id_order = false;
    return;
  }
  select_into_scratch(set, count);
  // The others follow in their old order: exactly those ranking below the last one selected.
  const Candidate last_selected = set.scratch[count - 1];
  size_t written = count;
  for (const Candidate& c : rest) {
    if (ranks_before(last_selected, c)) set.scratch[written++] = c;
  }
  std::copy(set.scratch.begin(), set.scratch.begin() + static_cast<std::ptrdiff_t>(written), rest.begin());
  set.sorted_count = k;
  set.in_id_order = false;
}

void keep_top(CandidateSet& set, size_t k) {
  k = std::max<size_t>(k, 1);
  if (k >= set.size()) {
    sort_leading(set, k);
    return;
  }
  if (set.sorted_count < k) {
    const size_t count = k - set.sorted_count;
    const std::span<Candidate> rest = select_into_scratch(set, count);
    std::copy(set.scratch.begin(), set.scratch.begin() + static_cast<std::ptrdiff_t>(count), rest.begin());
  }
  set.entries = set.entries.first(k);
  set.sorted_count = k;
  set.in_id_order = false;
}

void keep_first(CandidateSet& set, size_t k) {
  if (k >= set.size()) return;
  set.entries = set.entries.first(k);
  set.sorted_count = std::min(set.sorted_count, k);
  set.in_id_order = false;
}

float max_logit(const CandidateSet& set) {
  if (set.sorted_count > 0) return set.entries[0].logit;
  float largest = -std::numeric_limits<float>::infinity();
  for (const Candidate& c : set.entries) largest = std::max(largest, c.logit);
  return largest;
}

bool compute_probabilities(CandidateSet& set) {
  const float largest = max_logit(set);
  if (set.entries.empty() || largest == -std::numeric_limits<float>::infinity()) return false;

  if (largest == std::numeric_limits<float>::infinity()) {
    size_t infinite = 0;
    for (const Candidate& c : set.entries) infinite += c.logit == largest ? 1 : 0;
    const float share = static_cast<float>(1.0 / static_cast<double>(infinite));
    for (Candidate& c : set.entries) c.p = c.logit == largest ? share : 0.0f;
    return true;
  }

  const double shift = largest;
  double sum = 0.0;
  for (Candidate& c : set.entries) {
    const double e = std::exp(static_cast<double>(c.logit) - shift);
    c.p = static_cast<float>(e);  // the weight, normalized below
    sum += e;
  }
  for (Candidate& c : set.entries) c.p = static_cast<float>(static_cast<double>(c.p) / sum);
  return true;
}

}  // namespace sinter
