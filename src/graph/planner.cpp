#include "graph/planner.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace sinter {
namespace {

size_t align_up(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// The tensor whose storage `t` uses: itself, or the root of its chain of views.
const Tensor* storage_root(const Tensor* t) {
  while (t->view_source != nullptr) t = t->view_source;
  return t;
}

bool needs_storage(const Tensor* t) {
  return t->view_source == nullptr && t->role != TensorRole::kPersistent;
}

// First-fit allocator over a free list; the arena grows at its end when nothing fits.
class ArenaAllocator {
 public:
  size_t allocate(size_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size) {
        const size_t offset = it->first;
        const size_t rest = it->second - size;
        free_.erase(it);
        if (rest > 0) free_.emplace(offset + size, rest);
        return offset;
      }
    }
    // Extend: if the last free block touches the end, grow from it.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == end_) {
        const size_t offset = last->first;
        free_.erase(last);
        end_ = offset + size;
        peak_ = std::max(peak_, end_);
        return offset;
      }
    }
    const size_t offset = end_;
    end_ += size;
    peak_ = std::max(peak_, end_);
    return offset;
  }

  void release(size_t offset, size_t size) {
    auto [it, inserted] = free_.emplace(offset, size);
    (void)inserted;
    // Merge with neighbours.
    if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto previous = std::prev(it);
      if (previous->first + previous->second == it->first) {
        previous->second += it->second;
        free_.erase(it);
      }
    }
  }

  size_t peak() const { return peak_; }

 private:
  std::map<size_t, size_t> free_;  // offset -> size
  size_t end_ = 0;
  size_t peak_ = 0;
};

}  // namespace

MemoryPlan plan_memory(const Graph& graph, std::span<const int> arena_of_node) {
  const auto& nodes = graph.nodes();
  MemoryPlan plan;
  plan.offsets.assign(nodes.size(), SIZE_MAX);
  plan.arena_of.assign(nodes.size(), 0);
  int arena_count = 1;
  for (const Tensor* t : nodes) {
    if (t->role != TensorRole::kInput && static_cast<size_t>(t->index) < arena_of_node.size()) {
      plan.arena_of[t->index] = arena_of_node[t->index];
      arena_count = std::max(arena_count, arena_of_node[t->index] + 1);
    }
  }

  // Last reader of each storage root (by node index); outputs live to the end.
  std::vector<int32_t> last_use(nodes.size(), -1);
  for (const Tensor* t : nodes) {
    for (const Tensor* s : t->src) {
      if (s == nullptr) continue;
      const Tensor* root = storage_root(s);
      if (root->index >= 0 && root->index < static_cast<int32_t>(nodes.size()) &&
          nodes[root->index] == root) {
        last_use[root->index] = std::max(last_use[root->index], t->index);
      }
    }
  }
  const auto end_of_graph = static_cast<int32_t>(nodes.size());
  for (const Tensor* t : nodes) {
    if (t->is_output) {
      const Tensor* root = storage_root(t);
      if (root->index >= 0 && nodes[root->index] == root) last_use[root->index] = end_of_graph;
    }
  }

  std::vector<ArenaAllocator> arenas(static_cast<size_t>(arena_count));
  const auto arena_for = [&](const Tensor* t) -> ArenaAllocator& {
    return arenas[static_cast<size_t>(plan.arena_of[t->index])];
  };
  // Inputs are written before the first node runs: allocate them all up front.
  for (const Tensor* t : nodes) {
    if (t->role == TensorRole::kInput) {
      plan.offsets[t->index] = arena_for(t).allocate(align_up(t->bytes()));
      plan.unplanned_bytes += align_up(t->bytes());
    }
  }
  std::vector<std::vector<int32_t>> dying_at(nodes.size() + 1);
  for (const Tensor* t : nodes) {
    if (needs_storage(t) && last_use[t->index] >= 0) dying_at[last_use[t->index]].push_back(t->index);
  }
  for (const Tensor* t : nodes) {
    if (needs_storage(t) && t->role != TensorRole::kInput) {
      plan.offsets[t->index] = arena_for(t).allocate(align_up(t->bytes()));
      plan.unplanned_bytes += align_up(t->bytes());
      // A result nobody reads still needs its bytes while it is computed.
      if (last_use[t->index] < 0) dying_at[t->index].push_back(t->index);
    }
    // After this node runs, storage whose last reader it was can be reused.
    for (int32_t dead : dying_at[t->index]) {
      arena_for(nodes[dead]).release(plan.offsets[dead], align_up(nodes[dead]->bytes()));
    }
  }
  for (const ArenaAllocator& arena : arenas) {
    plan.arenas.push_back(align_up(arena.peak()));
    plan.arena_bytes += plan.arenas.back();
  }
  return plan;
}

void bind_memory(Graph& graph, const MemoryPlan& plan, std::span<uint8_t* const> bases,
                 std::span<Buffer* const> arenas) {
  for (Tensor* t : graph.nodes()) {
    if (plan.offsets[t->index] != SIZE_MAX) {
      const auto arena = static_cast<size_t>(plan.arena_of[t->index]);
      t->data = bases[arena] + plan.offsets[t->index];
      t->buffer = arenas[arena];
    }
  }
  // Views take their source's address (sources precede views in node order).
  for (Tensor* t : graph.nodes()) {
    if (t->view_source != nullptr) {
      t->data = static_cast<uint8_t*>(t->view_source->data) + t->view_offset;
      t->buffer = t->view_source->buffer;
    }
  }
}

}  // namespace sinter
