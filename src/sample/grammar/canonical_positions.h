// Positions that mean the same to the matcher, merged.
//
// A stack entry is a position in Grammar::elements, and all the matcher ever reads from it is
// the rest of its alternative. Two positions whose rests are equal element for element (up to
// the kAlt or kEnd that ends each) therefore behave alike, and the matcher pushes one of them,
// the first: then parses that differ only in which of two equal alternatives or tails they took
// are the same stack, and the stack set merges them.
//
//   x ::= "ab" | "ab" | "cb"       positions of the 2nd alternative → those of the 1st;
//                                  "b" of the 3rd → "b" of the 1st
//
// Without this, ("x" | "x" | ... 1000 times)* keeps 1000 stacks per character, each expanding
// into 1000 more: seconds per token for a 6 KB grammar.
#pragma once

#include <cstdint>
#include <vector>

#include "sample/grammar/grammar.h"

namespace sinter {

// [position] → the first position with the same rest of its alternative (itself for the
// elements that end one). O(elements) expected time.
std::vector<uint32_t> canonical_positions(const Grammar& grammar);

// An empty alternative in distinct_alternatives().
inline constexpr uint32_t kEmptyAlternative = UINT32_MAX;

// [rule] → the canonical first positions of its alternatives, each once, in order
// (kEmptyAlternative for an empty one): what expanding a reference to the rule pushes.
std::vector<std::vector<uint32_t>> distinct_alternatives(const Grammar& grammar,
                                                         const std::vector<uint32_t>& canonical);

}  // namespace sinter
