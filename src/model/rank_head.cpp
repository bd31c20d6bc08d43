#include "model/rank_head.h"

#include "model/decoder.h"

namespace sinter {

int32_t RankHead::outputs(int32_t n_embd) const {
  if (cls_out != nullptr) return static_cast<int32_t>(cls_out->ne[1]);
  if (cls != nullptr) return static_cast<int32_t>(cls->ne[1]);
  return n_embd;
}

int64_t head_rows(const WeightBinder& b, int64_t fallback) {
  const GgufTensorInfo* info = b.file_tensor("cls.output.weight");
  return info != nullptr && info->shape.size() >= 2 && info->shape[1] > 0 ? info->shape[1] : fallback;
}

RankHead bind_rank_head(WeightBinder& b, int64_t n_embd, bool reranker, int64_t n_outputs) {
  const Presence presence = reranker ? Presence::kFeature : Presence::kOptional;
  RankHead head;
  head.cls = bind_weight(b, "cls.weight", {n_embd, n_embd}, presence);
  head.cls_b = bind_weight(b, "cls.bias", {n_embd}, presence);
  head.cls_out = bind_weight(b, "cls.output.weight", {n_embd, n_outputs}, presence);
  head.cls_out_b = bind_weight(b, "cls.output.bias", {n_outputs}, presence);
  return head;
}

RankHead bind_score_head(WeightBinder& b, int64_t n_embd, bool reranker) {
  const Presence presence = reranker ? Presence::kFeature : Presence::kOptional;
  RankHead head;
  head.cls = bind_weight(b, "cls.weight", {n_embd, 1}, presence);
  head.cls_b = bind_weight(b, "cls.bias", {1}, presence);
  return head;
}

RankHead bind_projection_head(WeightBinder& b, int64_t n_embd, bool reranker, int64_t n_outputs) {
  RankHead head;
  if (reranker) head.cls_out = b.require("cls.output.weight", {n_embd, n_outputs});
  return head;
}

Tensor* build_rank_head(ForwardContext& fx, Tensor* hidden, const RankHead& head) {
  Graph& g = fx.graph;
  Tensor* cur = hidden;
  if (head.cls != nullptr) {
    cur = fx.build_linear(head.cls, cur, head.cls_b);
    // tanh(x) = σ(2x) − σ(−2x): the graph has the logistic function, not tanh.
    cur = g.add(g.sigmoid(g.scale(cur, 2.0f)), g.scale(g.sigmoid(g.scale(cur, -2.0f)), -1.0f));
    cur = ForwardContext::name(cur, "cls_tanh");
  }
  if (head.cls_out != nullptr) cur = fx.build_linear(head.cls_out, cur, head.cls_out_b);
  return ForwardContext::name(cur, "result_rank");
}

}  // namespace sinter
