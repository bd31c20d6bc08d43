// Placement: which backend runs each node of a graph, as ggml's scheduler decides it.
//
// A node runs on the backend that holds its weight (a mul_mat or get_rows whose first source
// is a weight in a backend's buffer: the weights were placed at load, with the op that consumes
// them); any other node on the primary backend when its op table supports the node, else on
// the fallback (the CPU). Consecutive nodes of one backend form a segment; compute() runs the
// segments in order, each backend its own.
//
// Each backend's nodes are planned in an arena of its own. Every backend sinter has today works
// on host memory, so a segment reads its sources where they are and no copies are needed; a node whose source
// lives in memory its backend cannot address is refused here, by name, until a device backend brings the copy
// nodes (docs/ADDING_A_BACKEND.md).
#pragma once

#include <span>
#include <vector>

#include "backend/backend.h"

namespace sinter {

struct GraphSegment {
  Backend* backend = nullptr;
  std::span<Tensor* const> nodes;
};

class Placement {
 public:
  // `fallback` may be null (or the primary itself): then every node must be the primary's.
  static Result<Placement> place(const Graph& graph, Backend& primary, Backend* fallback);

  const std::vector<GraphSegment>& segments() const { return segments_; }
  // The backends the graph uses, the primary first, and for each node (by Tensor::index) the
  // position of its backend in that list: the arena its result is planned in
  // (graph/planner.h).
  const std::vector<Backend*>& backends() const { return backends_; }
  std::span<const int> node_backends() const { return node_backends_; }
  // Nodes each backend runs (for tests and the diagnosis).
  size_t nodes_on(const Backend& backend) const;

  Status compute(const Graph& graph) const;

 private:
  std::vector<GraphSegment> segments_;
  std::vector<Backend*> backends_;
  std::vector<int> node_backends_;
};

}  // namespace sinter
