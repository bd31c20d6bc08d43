// Memory planning: assigns every intermediate and input tensor of a finalized graph an offset in
// one arena, reusing the bytes of tensors whose last reader has run (liveness by node order).
#pragma once

#include <cstddef>
#include <vector>

#include "graph/graph.h"

namespace sinter {

struct MemoryPlan {
  size_t arena_bytes = 0;       // peak: what the arena must hold
  size_t unplanned_bytes = 0;   // the sum without reuse, for comparison
  std::vector<size_t> offsets;  // per node (by Tensor::index); SIZE_MAX for no storage
};

constexpr size_t kArenaAlignment = 64;

MemoryPlan plan_memory(const Graph& graph);

// Points every planned tensor (and view) of the graph into `arena` per the plan: `base` is the
// arena's first byte as tensors address it (Buffer::base(), backend/buffer.h), and each tensor
// records `arena` as its buffer; views take their source's buffer.
void bind_memory(Graph& graph, const MemoryPlan& plan, uint8_t* base, Buffer* arena);

}  // namespace sinter
