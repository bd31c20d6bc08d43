// A set of matcher stacks that keeps each stack once, in the order first added: the union of
// parses after a character. Duplicates are frequent (alternatives that lead to the same place),
// and a set of a thousand stacks must not cost a million comparisons, so beyond a few stacks
// an open-addressing index over the stacks' hashes finds a duplicate in O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sinter {

using GrammarStack = std::vector<uint32_t>;  // positions in Grammar::elements, top at back

class StackSet {
 public:
  // Fills `stacks` (cleared here); it must outlive the set and change only through it.
  explicit StackSet(std::vector<GrammarStack>& stacks);

  // Adds `stack` unless an equal one is there; false when it was.
  bool insert(GrammarStack&& stack);
  size_t size() const { return stacks_.size(); }

 private:
  static constexpr size_t kLinear = 8;  // up to this many stacks, a plain scan

  void rebuild_index();
  size_t& slot_for(const GrammarStack& stack, uint64_t hash);

  std::vector<GrammarStack>& stacks_;
  std::vector<uint64_t> hashes_;  // [stack], once indexed
  std::vector<size_t> slots_;     // power of two; 0 empty, else the stack's index + 1
};

}  // namespace sinter
