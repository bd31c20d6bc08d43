#include "sample/grammar/stack_set.h"

#include <algorithm>
#include <utility>

namespace sinter {
namespace {

uint64_t hash_stack(const GrammarStack& stack) {
  uint64_t h = 0x9E3779B97F4A7C15u ^ stack.size();
  for (uint32_t position : stack) h = (h ^ position) * 0xBF58476D1CE4E5B9u;
  return h ^ (h >> 31);
}

}  // namespace

StackSet::StackSet(std::vector<GrammarStack>& stacks) : stacks_(stacks) { stacks_.clear(); }

size_t& StackSet::slot_for(const GrammarStack& stack, uint64_t hash) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const size_t entry = slots_[i];
    if (entry == 0) return slots_[i];
    if (hashes_[entry - 1] == hash && stacks_[entry - 1] == stack) return slots_[i];
  }
}

void StackSet::rebuild_index() {
  while (hashes_.size() < stacks_.size()) hashes_.push_back(hash_stack(stacks_[hashes_.size()]));
  size_t capacity = 64;
  while (capacity < 4 * stacks_.size()) capacity *= 2;  // load at most 1/2 before the next rebuild
  slots_.assign(capacity, 0);
  for (size_t k = 0; k < stacks_.size(); ++k) slot_for(stacks_[k], hashes_[k]) = k + 1;
}

bool StackSet::insert(GrammarStack&& stack) {
  if (slots_.empty()) {
    if (std::find(stacks_.begin(), stacks_.end(), stack) != stacks_.end()) return false;
    stacks_.push_back(std::move(stack));
    if (stacks_.size() > kLinear) rebuild_index();
    return true;
  }
  const uint64_t hash = hash_stack(stack);
  size_t& slot = slot_for(stack, hash);
  if (slot != 0) return false;
  slot = stacks_.size() + 1;
  hashes_.push_back(hash);
  stacks_.push_back(std::move(stack));
  if (2 * stacks_.size() > slots_.size()) rebuild_index();
  return true;
}

}  // namespace sinter
