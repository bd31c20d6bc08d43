// Memory planning: assigns every intermediate and input tensor of a finalized graph an offset in
// an arena, reusing the bytes of tensors whose last reader has run (liveness by node order).
// A graph whose nodes run on several backends has one arena per backend: each node's result is
// planned in the arena of the backend that computes it (batch inputs in arena 0).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "graph/graph.h"

namespace sinter {

struct MemoryPlan {
  size_t arena_bytes = 0;       // the peaks of all arenas together
  std::vector<size_t> arenas;   // the peak of each arena: what it must hold
  size_t unplanned_bytes = 0;   // the sum without reuse, for comparison
  std::vector<size_t> offsets;  // per node (by Tensor::index); SIZE_MAX for no storage
  std::vector<int> arena_of;    // per node: the arena its offset is in
};

constexpr size_t kArenaAlignment = 64;

// `arena_of_node` (by Tensor::index, empty: all 0) says which arena each node's result goes to.
MemoryPlan plan_memory(const Graph& graph, std::span<const int> arena_of_node = {});

// Points every planned tensor (and view) of the graph into its arena per the plan: `bases[a]` is
// arena a's first byte as tensors address it (Buffer::base(), backend/buffer.h), and each tensor
// records `arenas[a]` as its buffer; views take their source's buffer.
void bind_memory(Graph& graph, const MemoryPlan& plan, std::span<uint8_t* const> bases,
                 std::span<Buffer* const> arenas);
// The one-arena form.
inline void bind_memory(Graph& graph, const MemoryPlan& plan, uint8_t* base, Buffer* arena) {
  bind_memory(graph, plan, std::span<uint8_t* const>(&base, 1), std::span<Buffer* const>(&arena, 1));
}

}  // namespace sinter
