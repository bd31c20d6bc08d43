#include "backend/placement.h"

#include <algorithm>

namespace sinter {
namespace {

// The backend that holds a node's weight, if the node consumes one.
Backend* weight_owner(const Tensor& node, Backend& primary, Backend* fallback) {
  if (node.op != Op::kMatMul && node.op != Op::kMulMatId && node.op != Op::kGetRows) return nullptr;
  const Tensor* weight = node.src[0];
  if (weight->role != TensorRole::kPersistent || weight->buffer == nullptr) return nullptr;
  if (weight->buffer->backend() == primary.name()) return &primary;
  if (fallback != nullptr && weight->buffer->backend() == fallback->name()) return fallback;
  return nullptr;
}

}  // namespace

Result<Placement> Placement::place(const Graph& graph, Backend& primary, Backend* fallback) {
  if (fallback == &primary) fallback = nullptr;
  Placement placement;
  const auto& nodes = graph.nodes();
  std::vector<Backend*> owner(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor& node = *nodes[i];
    if (node.op == Op::kLeaf || node.op == Op::kView) continue;  // computes nothing
    Backend* backend = weight_owner(node, primary, fallback);
    if (backend == nullptr) backend = primary.supports(node) || fallback == nullptr ? &primary : fallback;
    if (!backend->supports(node)) return unsupported_node(backend->name(), node).error();
    for (const Tensor* source : node.src) {
      if (source != nullptr && source->buffer != nullptr && !source->buffer->host_visible() &&
          source->buffer->backend() != backend->name()) {
        return make_error(ErrorCode::kUnsupported, op_name(node.op), " (", node.name, ") on the ",
                          backend->name(), " backend reads ", source->name, " from ",
                          source->buffer->backend(), " memory it cannot address");
      }
    }
    owner[i] = backend;
  }
  // Leaves and views join the segment around them.
  placement.backends_.push_back(&primary);
  placement.node_backends_.assign(nodes.size(), 0);
  Backend* current = &primary;
  size_t begin = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (owner[i] != nullptr && owner[i] != current) {
      if (i > begin) placement.segments_.push_back({current, std::span(nodes).subspan(begin, i - begin)});
      current = owner[i];
      begin = i;
      if (std::find(placement.backends_.begin(), placement.backends_.end(), current) ==
          placement.backends_.end())
        placement.backends_.push_back(current);
    }
    const auto position = std::find(placement.backends_.begin(), placement.backends_.end(), current);
    placement.node_backends_[i] = static_cast<int>(position - placement.backends_.begin());
  }
  if (nodes.size() > begin) placement.segments_.push_back({current, std::span(nodes).subspan(begin)});
  return placement;
}

size_t Placement::nodes_on(const Backend& backend) const {
  size_t count = 0;
  for (const GraphSegment& segment : segments_) {
    if (segment.backend != &backend) continue;
    for (const Tensor* node : segment.nodes) count += node->op != Op::kLeaf && node->op != Op::kView ? 1 : 0;
  }
  return count;
}

Status Placement::compute(const Graph& graph) const {
  for (const GraphSegment& segment : segments_) SINTER_TRY(segment.backend->compute(graph, segment.nodes));
  return ok_status();
}

}  // namespace sinter
