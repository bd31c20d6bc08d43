#include "sample/grammar/canonical_positions.h"

#include <unordered_map>
#include <unordered_set>

namespace sinter {
namespace {

// A rest of an alternative: its first element and the id of the rest after it (0: empty).
struct Rest {
  GrammarElementType type;
  uint32_t value;
  uint32_t next;
  bool operator==(const Rest&) const = default;
};

struct RestHash {
  size_t operator()(const Rest& r) const {
    uint64_t h = (uint64_t{r.value} << 32 | r.next) * 0x9E3779B97F4A7C15u;
    h ^= static_cast<uint64_t>(r.type) * 0xBF58476D1CE4E5B9u;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace

std::vector<uint32_t> canonical_positions(const Grammar& grammar) {
  const std::vector<GrammarElement>& el = grammar.elements;
  const size_t n = el.size();
  std::vector<uint32_t> canonical(n);
  // Ids of rests, interned from each alternative's end backwards: equal rests, equal ids.
  std::vector<uint32_t> rest_id(n, 0);
  std::vector<uint32_t> first_at{0};  // [id] → the smallest position with that rest
  std::unordered_map<Rest, uint32_t, RestHash> ids;
  ids.reserve(n);
  for (size_t k = n; k-- > 0;) {
    if (ends_alternative(el[k])) {
      canonical[k] = static_cast<uint32_t>(k);
      continue;
    }
    const uint32_t next = k + 1 < n ? rest_id[k + 1] : 0;
    const auto [it, added] =
        ids.try_emplace(Rest{el[k].type, el[k].value, next}, static_cast<uint32_t>(first_at.size()));
    if (added) first_at.push_back(0);
    rest_id[k] = it->second;
    first_at[it->second] = static_cast<uint32_t>(k);  // walking backwards: the last one set is the first
  }
  for (size_t k = 0; k < n; ++k) {
    if (!ends_alternative(el[k])) canonical[k] = first_at[rest_id[k]];
  }
  return canonical;
}

std::vector<std::vector<uint32_t>> distinct_alternatives(const Grammar& grammar,
                                                         const std::vector<uint32_t>& canonical) {
  const std::vector<GrammarElement>& el = grammar.elements;
  std::vector<std::vector<uint32_t>> alternatives(grammar.rule_start.size());
  std::unordered_set<uint32_t> seen;
  for (size_t rule = 0; rule < alternatives.size(); ++rule) {
    seen.clear();
    for (uint32_t i = grammar.rule_start[rule];;) {
      const uint32_t start = ends_alternative(el[i]) ? kEmptyAlternative : canonical[i];
      if (seen.insert(start).second) alternatives[rule].push_back(start);
      while (!ends_alternative(el[i])) ++i;
      if (el[i].type == GrammarElementType::kEnd) break;
      ++i;
    }
  }
  return alternatives;
}

}  // namespace sinter
