#include "model/gated_attention.h"

namespace sinter {
namespace {

Tensor* name(Tensor* t, const char* base, int layer) { return ForwardContext::name(t, base, layer); }

// The query (part 0) or gate (part 1) values of every head of qg [2·head_dim·n_head, T], made
// contiguous as [head_dim, n_head, T].
Tensor* head_part(Graph& g, Tensor* qg, int64_t head_dim, int64_t n_head, int part) {
  const int64_t n_tokens = qg->ne[1];
  const size_t value = sizeof(float);
  Tensor* view = g.view(qg, {head_dim, n_head, n_tokens, 1},
                        {value, 2 * static_cast<size_t>(head_dim) * value, qg->nb[1],
                         qg->nb[1] * static_cast<size_t>(n_tokens)},
                        static_cast<size_t>(part * head_dim) * value);
  return g.copy(view, DType::F32);
}

}  // namespace

AttentionWeights bind_gated_attention(WeightBinder& b, int il, int64_t n_embd, int64_t n_head,
                                      int64_t n_head_kv, int64_t head_dim) {
  const auto n = [il](const char* pattern) { return format_name(pattern, il); };
  AttentionWeights w;
  w.q = b.require(n("blk.%d.attn_q.weight"), {n_embd, 2 * head_dim * n_head});
  w.k = b.require(n("blk.%d.attn_k.weight"), {n_embd, head_dim * n_head_kv});
  w.v = b.require(n("blk.%d.attn_v.weight"), {n_embd, head_dim * n_head_kv});
  w.output = b.require(n("blk.%d.attn_output.weight"), {head_dim * n_head, n_embd});
  w.q_norm = b.require(n("blk.%d.attn_q_norm.weight"), {head_dim});
  w.k_norm = b.require(n("blk.%d.attn_k_norm.weight"), {head_dim});
  return w;
}

Tensor* build_gated_attention(ForwardContext& fx, Tensor* x, const AttentionWeights& w,
                              const AttentionOptions& o, int il) {
  Graph& g = fx.graph;
  const int64_t n_tokens = x->ne[1], head_dim = o.head_dim;
  Tensor* qg = name(fx.build_linear(w.q, x, nullptr), "Qcur_full", il);
  Tensor* q = head_part(g, qg, head_dim, o.n_head, 0);
  Tensor* gate = name(head_part(g, qg, head_dim, o.n_head, 1), "gate", il);
  Tensor* k = name(fx.build_linear(w.k, x, nullptr), "Kcur", il);
  Tensor* v = name(fx.build_linear(w.v, x, nullptr), "Vcur", il);
  k = g.reshape(k, {head_dim, o.n_head_kv, n_tokens, 1});
  q = fx.build_qk_norm(q, w.q_norm, nullptr, NormKind::kRms, o.norm_eps, "Qcur_normed", il);
  k = fx.build_qk_norm(k, w.k_norm, nullptr, NormKind::kRms, o.norm_eps, "Kcur_normed", il);
  if (o.use_rope) {
    q = fx.build_rope(q, o.rope, o.rope_freq_factors, "Qcur_rope", il);
    k = fx.build_rope(k, o.rope, o.rope_freq_factors, "Kcur_rope", il);
  }
  Tensor* attended = fx.build_attn_over_cache(q, k, v, o, il);  // [head_dim · n_head, T]
  gate = g.reshape(gate, {head_dim * o.n_head, n_tokens, 1, 1});
  attended = name(g.mul(attended, g.sigmoid(gate)), "attn_gated", il);
  return name(fx.build_linear(w.output, attended, nullptr), "attn_out", il);
}

}  // namespace sinter
