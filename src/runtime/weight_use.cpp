#include "runtime/weight_use.h"

#include <exception>

#include "backend/op_table.h"
#include "model/builder.h"

namespace sinter {

Result<std::unordered_map<const Tensor*, WeightUse>> weight_uses(const Model& model) {
  std::unordered_map<const Tensor*, WeightUse> uses;
  SINTER_ASSIGN(auto cache, KvCache::create(model.shape().kv_layers, 1, DType::F16, /*backend=*/nullptr));
  Graph graph;
  ForwardContext forward(graph, BatchShape{1, 1, 1}, *cache);
  try {
    graph.mark_output(model.build_forward(forward));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal, "building the forward graph failed: ", e.what());
  }
  graph.finalize();
  for (const Tensor* node : graph.nodes()) {
    for (const Tensor* source : node->src) {
      if (source != nullptr && source->role == TensorRole::kPersistent)
        uses.try_emplace(source, WeightUse{node->op, op_key_type(*node)});
    }
  }
  return uses;
}

}  // namespace sinter

namespace sinter {

const Backend* backend_for_weight(const WeightUse& use, const Backend& primary, const Backend* fallback) {
  if (primary.ops().supports(use.op, use.key)) return &primary;
  if (fallback != nullptr && fallback->ops().supports(use.op, use.key)) return fallback;
  return nullptr;
}

}  // namespace sinter
