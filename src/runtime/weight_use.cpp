#include "runtime/weight_use.h"

#include <exception>

#include "backend/op_table.h"
#include "model/builder.h"

namespace sinter {

Result<WeightUses> weight_uses(const Model& model) {
  WeightUses uses;
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

WeightPlacement place_weight(const Tensor& weight, const WeightUses& uses, const Backend& primary,
                             const Backend* fallback) {
  WeightPlacement placement;
  placement.name = weight.name;
  placement.type = weight.type;
  const auto use = uses.find(&weight);
  if (use == uses.end()) return placement;
  placement.consumer = use->second.op;
  for (const Backend* backend : {&primary, fallback}) {
    if (backend != nullptr && backend->ops().supports(use->second.op, use->second.key)) {
      placement.backend = std::string(backend->name());
      placement.path = backend->path(use->second.op, use->second.key);
      break;
    }
  }
  return placement;
}

}  // namespace sinter
