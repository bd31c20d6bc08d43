#include "runtime/weight_use.h"

#include <algorithm>
#include <exception>

#include "backend/op_table.h"
#include "model/builder.h"
#include "runtime/context.h"

namespace sinter {

Result<WeightUses> weight_uses(const Model& model) {
  WeightUses uses;
  ContextOptions options;
  options.n_ctx = 1;
  options.n_batch = 1;
  SINTER_ASSIGN(auto memory, make_memory(model.shape(), options, /*backend=*/nullptr));
  Graph graph;
  ForwardContext forward(graph, BatchShape{1, 1, 1}, *memory);
  try {
    graph.mark_output(model.build_forward(forward));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal, "building the forward graph failed: ", e.what());
  }
  graph.finalize();
  for (const Tensor* node : graph.nodes()) {
    for (const Tensor* source : node->src) {
      if (source == nullptr || source->role != TensorRole::kPersistent) continue;
      WeightUse& use = uses.try_emplace(source, WeightUse{node->op, op_key_type(*node)}).first->second;
      double share = 1.0;  // element-wise ops and products read all of it
      if (source == node->src[0] && node->op == Op::kGetRows)
        share = static_cast<double>(node->ne[1]) / static_cast<double>(source->ne[1]);
      if (source == node->src[0] && node->op == Op::kMulMatId)
        share = static_cast<double>(node->ne[1]) / static_cast<double>(source->ne[2]);
      use.share_per_token = std::max(use.share_per_token, share);
    }
  }
  return uses;
}

TokenReads token_reads(const Model& model, const WeightUses& uses) {
  TokenReads reads;
  for (const Tensor& weight : model.weights()) {
    const auto use = uses.find(&weight);
    if (use == uses.end()) continue;
    reads.parameters +=
        static_cast<uint64_t>(static_cast<double>(weight.elements()) * use->second.share_per_token + 0.5);
    reads.bytes +=
        static_cast<uint64_t>(static_cast<double>(weight.bytes()) * use->second.share_per_token + 0.5);
  }
  return reads;
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
