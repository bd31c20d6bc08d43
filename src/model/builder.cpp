#include "model/builder.h"

#include <cmath>
#include <string>

namespace sinter {

ForwardContext::ForwardContext(Graph& g, const BatchShape& b, KvCache& c) : graph(g), batch(b), cache(c) {
  token_ids = graph.input("inp_tokens", DType::I32, {batch.n_tokens, 1, 1, 1});
  positions = graph.input("inp_pos", DType::I32, {batch.n_tokens, 1, 1, 1});
  output_ids = batch.n_outputs == batch.n_tokens
                   ? nullptr
                   : graph.input("inp_out_ids", DType::I32, {batch.n_outputs, 1, 1, 1});
}

Tensor* ForwardContext::kv_slots_input(int pool) {
  if (kv_slots.size() <= static_cast<size_t>(pool)) kv_slots.resize(static_cast<size_t>(pool) + 1);
  Tensor*& slots = kv_slots[static_cast<size_t>(pool)];
  // Pool 0's keeps the name of the single pool's, so that a cache of one pool builds the graph
  // it always did.
  if (slots == nullptr) {
    slots = graph.input(pool == 0 ? std::string("inp_kv_slots") : "inp_kv_slots-" + std::to_string(pool),
                        DType::I32, {batch.n_tokens, 1, 1, 1});
  }
  return slots;
}

Tensor* ForwardContext::attention_index_input(int pool) {
  if (attention_index.size() <= static_cast<size_t>(pool))
    attention_index.resize(static_cast<size_t>(pool) + 1);
  Tensor*& index = attention_index[static_cast<size_t>(pool)];
  if (index == nullptr) {
    index = graph.input("inp_attn_index-" + std::to_string(pool), DType::I32,
                        {attention_index_elements(batch.n_tokens, batch.index_capacity), 1, 1, 1});
  }
  return index;
}

Tensor* ForwardContext::build_inp_embd(Tensor* token_embedding) {
  return name(graph.get_rows(token_embedding, token_ids), "inp_embd");
}

Tensor* ForwardContext::build_linear(Tensor* weight, Tensor* x, Tensor* bias) {
  Tensor* y = graph.mul_mat(weight, x);
  return bias != nullptr ? graph.add(y, bias) : y;
}

Tensor* ForwardContext::build_norm(Tensor* x, const NormWeights& w, NormKind kind, float eps,
                                   const char* base, int layer) {
  Tensor* cur = kind == NormKind::kRms ? graph.rms_norm(x, eps) : graph.norm(x, eps);
  if (w.weight != nullptr) cur = graph.mul(cur, w.weight);
  if (w.bias != nullptr) cur = graph.add(cur, w.bias);
  return name(cur, base, layer);
}

Tensor* ForwardContext::build_ffn(Tensor* x, const FfnWeights& w, FfnActivation activation, int layer) {
  Tensor* up = name(build_linear(w.up, x, w.up_bias), "ffn_up", layer);
  Tensor* cur = nullptr;
  switch (activation) {
    case FfnActivation::kSiluGated:
    case FfnActivation::kGeluGated: {
      Tensor* gate = name(build_linear(w.gate, x, w.gate_bias), "ffn_gate", layer);
      cur = activation == FfnActivation::kSiluGated ? graph.swiglu(gate, up) : graph.geglu(gate, up);
      break;
    }
    case FfnActivation::kGelu: cur = graph.gelu(up); break;
    case FfnActivation::kSilu: cur = graph.silu(up); break;
  }
  name(cur, "ffn_act", layer);
  return name(build_linear(w.down, cur, w.down_bias), "ffn_out", layer);
}

Tensor* ForwardContext::build_rope(Tensor* x, const RopeParams& rope, Tensor* freq_factors, const char* base,
                                   int layer) {
  return name(graph.rope(x, positions, rope, freq_factors), base, layer);
}

Tensor* ForwardContext::build_attn(Tensor* x, const AttentionWeights& w, const AttentionOptions& o,
                                   int layer) {
  const int64_t n_tokens = batch.n_tokens;
  Tensor* q = name(build_linear(w.q, x, w.q_bias), "Qcur", layer);
  Tensor* k = name(build_linear(w.k, x, w.k_bias), "Kcur", layer);
  Tensor* v = name(build_linear(w.v, x, w.v_bias), "Vcur", layer);
  q = graph.reshape(q, {o.head_dim, o.n_head, n_tokens, 1});
  k = graph.reshape(k, {o.head_dim, o.n_head_kv, n_tokens, 1});
  if (w.q_norm != nullptr) q = name(graph.mul(graph.rms_norm(q, o.norm_eps), w.q_norm), "Qcur_normed", layer);
  if (w.k_norm != nullptr) k = name(graph.mul(graph.rms_norm(k, o.norm_eps), w.k_norm), "Kcur_normed", layer);
  q = build_rope(q, o.rope, o.rope_freq_factors, "Qcur_rope", layer);
  k = build_rope(k, o.rope, o.rope_freq_factors, "Kcur_rope", layer);

  const int pool = cache.pool_of(o.kv_layer);
  Tensor* slots = kv_slots_input(pool);
  Tensor* k_cache = name(graph.store_rows(cache.keys(o.kv_layer), k, slots), "k_cache_store", layer);
  Tensor* v_cache = name(graph.store_rows(cache.values(o.kv_layer), v, slots), "v_cache_store", layer);
  AttentionParams params;
  params.scale = o.scale != 0.0f ? o.scale : 1.0f / std::sqrt(static_cast<float>(o.head_dim));
  params.softcap = o.softcap;
  Tensor* index = attention_index_input(pool);
  Tensor* attended = name(graph.attention(q, k_cache, v_cache, index, params), "kqv_out", layer);
  return name(build_linear(w.output, attended, w.output_bias), "attn_out", layer);
}

Tensor* ForwardContext::build_output_filter(Tensor* x, const char* base, int layer) {
  if (output_ids == nullptr) return x;
  return name(graph.get_rows(x, output_ids), base, layer);
}

void Model::build_kv_shift(Graph& graph, KvCache& cache, std::span<Tensor* const> deltas) const {
  for (int il = 0; il < cache.layer_count(); ++il) {
    Tensor* pool_deltas = deltas[static_cast<size_t>(cache.pool_of(il))];
    Tensor* shifted = graph.rope_shift(cache.keys(il), pool_deltas, shape_.head_dim_k, shape_.rope,
                                       shape_.rope_freq_factors);
    graph.mark_output(Graph::named(shifted, "k_shift", il));
  }
}

}  // namespace sinter
