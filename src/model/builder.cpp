#include "model/builder.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "memory/memory_inputs.h"
#include "model/batch_inputs.h"

namespace sinter {

ForwardContext::ForwardContext(Graph& g, const BatchShape& b, SequenceMemory& m)
    : graph(g), batch(b), memory(m) {
  token_ids = graph.input("inp_tokens", DType::I32, {batch.n_tokens, 1, 1, 1});
  inputs.push_back(std::make_unique<TokenIdsInput>(token_ids));
  positions = graph.input("inp_pos", DType::I32, {batch.n_tokens, 1, 1, 1});
  inputs.push_back(std::make_unique<PositionsInput>(positions, 1));
  output_ids = batch.n_outputs == batch.n_tokens
                   ? nullptr
                   : graph.input("inp_out_ids", DType::I32, {batch.n_outputs, 1, 1, 1});
  if (output_ids != nullptr) inputs.push_back(std::make_unique<OutputIdsInput>(output_ids));
}

Tensor* ForwardContext::positions_input(int streams) {
  if (streams <= 1) return positions;
  if (streams > kMaxPositionStreams) throw std::logic_error("more position streams than a batch entry has");
  Tensor* t = graph.input("inp_pos_streams", DType::I32, {int64_t{streams} * batch.n_tokens, 1, 1, 1});
  inputs.push_back(std::make_unique<PositionsInput>(t, streams));
  return t;
}

KvCache& ForwardContext::cache() const {
  if (KvCache* kv = memory.kv()) return *kv;
  throw std::logic_error(
      "the model builds attention, but its memory has no KV cache (ModelShape::kv_layers)");
}

RecurrentState& ForwardContext::state() const {
  if (RecurrentState* state = memory.recurrent()) return *state;
  throw std::logic_error(
      "the model builds a recurrent layer, but its memory has no state (ModelShape::recurrent_layers)");
}

Tensor* ForwardContext::state_slots_input() {
  if (state_slots == nullptr) {
    state_slots =
        graph.input("inp_state_slots", DType::I32, {batch.n_tokens, state().keeps_snapshots() ? 2 : 1, 1, 1});
    inputs.push_back(std::make_unique<StateSlotsInput>(state_slots, state()));
  }
  return state_slots;
}

Tensor* ForwardContext::kv_slots_input(int pool) {
  if (kv_slots.size() <= static_cast<size_t>(pool)) kv_slots.resize(static_cast<size_t>(pool) + 1);
  Tensor*& slots = kv_slots[static_cast<size_t>(pool)];
  // Pool 0's keeps the name of the single pool's, so that a cache of one pool builds the graph
  // it always did.
  if (slots == nullptr) {
    slots = graph.input(pool == 0 ? std::string("inp_kv_slots") : "inp_kv_slots-" + std::to_string(pool),
                        DType::I32, {batch.n_tokens, 1, 1, 1});
    inputs.push_back(std::make_unique<KvSlotsInput>(slots, cache(), pool));
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
    inputs.push_back(std::make_unique<AttentionIndexInput>(index, cache(), pool));
  }
  return index;
}

Tensor* ForwardContext::alibi_positions_input(int pool) {
  if (alibi_positions.size() <= static_cast<size_t>(pool))
    alibi_positions.resize(static_cast<size_t>(pool) + 1);
  Tensor*& input = alibi_positions[static_cast<size_t>(pool)];
  if (input == nullptr) {
    input = graph.input("inp_alibi_pos-" + std::to_string(pool), DType::I32,
                        {alibi_positions_elements(batch.n_tokens, batch.index_capacity), 1, 1, 1});
    inputs.push_back(std::make_unique<AlibiPositionsInput>(input, cache(), pool));
  }
  return input;
}

Tensor* ForwardContext::build_inp_embd(Tensor* token_embedding) {
  Tensor* rows = graph.get_rows(token_embedding, token_ids);
  if (!batch.embeddings) return name(rows, "inp_embd");
  // Some entries come as embedding rows: each token's own row times keep (1 or 0) plus the given
  // rows (0 for tokens), exact for both kinds.
  const std::array<int64_t, kMaxDims> shape{rows->ne[0], batch.n_tokens, 1, 1};
  Tensor* given = graph.input("inp_embd_rows", DType::F32, shape);
  Tensor* keep = graph.input("inp_embd_keep", DType::F32, shape);
  inputs.push_back(std::make_unique<EmbeddingRowsInput>(given, keep));
  return name(graph.add(graph.mul(rows, keep), given), "inp_embd");
}

Tensor* ForwardContext::build_linear(Tensor* weight, Tensor* x, Tensor* bias) {
  Tensor* y = graph.mul_mat(weight, x);
  return bias != nullptr ? graph.add(y, bias) : y;
}

Tensor* ForwardContext::build_row_slice(Tensor* x, int64_t first, int64_t count) {
  const size_t row = x->nb[1];
  Tensor* view =
      graph.view(x, {count, x->ne[1], 1, 1}, {x->nb[0], row, row * static_cast<size_t>(x->ne[1]), 0},
                 static_cast<size_t>(first) * x->nb[0]);
  return graph.copy(view, DType::F32);
}

Tensor* ForwardContext::build_norm(Tensor* x, const NormWeights& w, NormKind kind, float eps,
                                   const char* base, int layer) {
  Tensor* cur = kind == NormKind::kRms ? graph.rms_norm(x, eps) : graph.norm(x, eps);
  if (w.weight != nullptr) cur = graph.mul(cur, w.weight);
  if (w.bias != nullptr) cur = graph.add(cur, w.bias);
  return name(cur, base, layer);
}

Tensor* ForwardContext::build_ffn(Tensor* x, const FfnWeights& w, FfnActivation activation, int layer) {
  Tensor* up = nullptr;
  Tensor* gate = nullptr;
  if (w.gate_up != nullptr) {
    Tensor* both = name(build_linear(w.gate_up, x, w.up_bias), "ffn_gate_up", layer);
    const int64_t n_ff = both->ne[0] / 2;
    gate = name(build_row_slice(both, 0, n_ff), "ffn_gate", layer);
    up = name(build_row_slice(both, n_ff, n_ff), "ffn_up", layer);
  } else {
    up = name(build_linear(w.up, x, w.up_bias), "ffn_up", layer);
  }
  Tensor* cur = nullptr;
  switch (activation) {
    case FfnActivation::kSiluGated:
    case FfnActivation::kGeluGated: {
      if (gate == nullptr) gate = name(build_linear(w.gate, x, w.gate_bias), "ffn_gate", layer);
      cur = activation == FfnActivation::kSiluGated ? graph.swiglu(gate, up) : graph.geglu(gate, up);
      break;
    }
    case FfnActivation::kGelu:
    case FfnActivation::kSilu:
    case FfnActivation::kReluSquared: cur = build_activation(up, activation); break;
  }
  name(cur, "ffn_act", layer);
  return name(build_linear(w.down, cur, w.down_bias), "ffn_out", layer);
}

Tensor* ForwardContext::build_activation(Tensor* x, FfnActivation activation) {
  switch (activation) {
    case FfnActivation::kGelu: return graph.gelu(x);
    case FfnActivation::kSilu: return graph.silu(x);
    case FfnActivation::kReluSquared: {
      Tensor* relu = graph.clamp(x, 0.0f, std::numeric_limits<float>::infinity());
      return graph.mul(relu, relu);
    }
    case FfnActivation::kSiluGated:
    case FfnActivation::kGeluGated: break;
  }
  throw std::logic_error("build_activation: a gated activation needs a gate");
}

void ForwardContext::use_layer(AttentionOptions& o, const ModelShape& shape, int layer) const {
  const KvRope& rope = shape.kv_rope[static_cast<size_t>(layer)];
  o.kv_layer = layer;
  o.use_rope = rope.rotated;
  o.rope = rope.params;
  o.rope_freq_factors = rope.factors_for(n_ctx_per_sequence());
}

Tensor* ForwardContext::build_rope(Tensor* x, const RopeParams& rope, Tensor* freq_factors, const char* base,
                                   int layer) {
  return name(graph.rope(x, positions, rope, freq_factors), base, layer);
}

Tensor* ForwardContext::build_attn(Tensor* x, const AttentionWeights& w, const AttentionOptions& o,
                                   int layer) {
  const int64_t n_tokens = batch.n_tokens;
  Tensor* q = nullptr;
  Tensor* k = nullptr;
  Tensor* v = nullptr;
  if (w.qkv != nullptr) {
    const int64_t q_width = int64_t{o.n_head} * o.head_dim, k_width = int64_t{o.n_head_kv} * o.head_dim;
    Tensor* qkv = name(build_linear(w.qkv, x, w.qkv_bias), "wqkv", layer);
    q = build_row_slice(qkv, 0, q_width);
    k = build_row_slice(qkv, q_width, k_width);
    v = build_row_slice(qkv, q_width + k_width, int64_t{o.n_head_kv} * o.head_dim_v);
  } else {
    q = build_linear(w.q, x, w.q_bias);
    k = build_linear(w.k, x, w.k_bias);
    v = build_linear(w.v, x, w.v_bias);
  }
  name(q, "Qcur", layer);
  name(k, "Kcur", layer);
  name(v, "Vcur", layer);
  q = graph.reshape(q, {o.head_dim, o.n_head, n_tokens, 1});
  k = graph.reshape(k, {o.head_dim, o.n_head_kv, n_tokens, 1});
  if (w.q_norm != nullptr)
    q = build_qk_norm(q, w.q_norm, w.q_norm_bias, o.qk_norm, o.norm_eps, "Qcur_normed", layer);
  if (w.k_norm != nullptr)
    k = build_qk_norm(k, w.k_norm, w.k_norm_bias, o.qk_norm, o.norm_eps, "Kcur_normed", layer);
  if (o.use_rope) {
    q = build_rope(q, o.rope, o.rope_freq_factors, "Qcur_rope", layer);
    k = build_rope(k, o.rope, o.rope_freq_factors, "Kcur_rope", layer);
  }
  Tensor* attended = build_attn_over_cache(q, k, v, o, layer, w.sinks);
  return name(build_linear(w.output, attended, w.output_bias), "attn_out", layer);
}

Tensor* ForwardContext::build_attn_over_cache(Tensor* q, Tensor* k, Tensor* v, const AttentionOptions& o,
                                              int layer, Tensor* sinks) {
  KvCache& kv = cache();
  const int pool = kv.pool_of(o.kv_layer);
  Tensor* slots = kv_slots_input(pool);
  Tensor* k_cache = name(graph.store_rows(kv.keys(o.kv_layer), k, slots), "k_cache_store", layer);
  Tensor* v_cache = name(graph.store_rows(kv.values(o.kv_layer), v, slots), "v_cache_store", layer);
  AttentionParams params;
  params.scale = o.scale != 0.0f ? o.scale : 1.0f / std::sqrt(static_cast<float>(o.head_dim));
  params.softcap = o.softcap;
  params.max_alibi_bias = o.max_alibi_bias;
  Tensor* index = attention_index_input(pool);
  Tensor* alibi = o.max_alibi_bias > 0.0f ? alibi_positions_input(pool) : nullptr;
  return name(graph.attention(q, k_cache, v_cache, index, params, sinks, alibi), "kqv_out", layer);
}

Tensor* ForwardContext::build_qk_norm(Tensor* x, Tensor* weight, Tensor* bias, NormKind kind, float eps,
                                      const char* base, int layer) {
  const NormWeights w{weight, bias};
  if (weight->ne[0] == x->ne[0]) return build_norm(x, w, kind, eps, base, layer);  // per head
  // Over the whole projection: one row per token, then back to heads.
  const auto heads = x->ne;
  Tensor* rows = graph.reshape(x, {heads[0] * heads[1], heads[2], 1, 1});
  return graph.reshape(build_norm(rows, w, kind, eps, base, layer), heads);
}

Tensor* ForwardContext::build_logits(Tensor* x, Tensor* output, Tensor* bias, float scale, float softcap) {
  Tensor* logits = build_linear(output, x, bias);
  if (scale != 1.0f) logits = graph.scale(logits, scale);
  if (softcap > 0.0f) logits = graph.softcap(logits, softcap);
  return name(logits, "result_output");
}

void ForwardContext::filter_last_layer(int layer, int n_layer, std::initializer_list<Tensor**> tensors) {
  if (layer + 1 != n_layer) return;
  for (Tensor** t : tensors)
    *t = build_output_filter(*t, (*t)->name.empty() ? "filtered" : ((*t)->name + "_filtered").c_str(), -1);
}

Tensor* ForwardContext::build_output_filter(Tensor* x, const char* base, int layer) {
  if (output_ids == nullptr) return x;
  return name(graph.get_rows(x, output_ids), base, layer);
}

void Model::build_kv_shift(Graph& graph, KvCache& cache, std::span<Tensor* const> deltas) const {
  for (int il = 0; il < cache.layer_count(); ++il) {
    const KvRope& rope = shape_.kv_rope[static_cast<size_t>(il)];
    if (!rope.rotated) continue;
    Tensor* pool_deltas = deltas[static_cast<size_t>(cache.pool_of(il))];
    Tensor* shifted = graph.rope_shift(cache.keys(il), pool_deltas, rope.head_dim, rope.params,
                                       rope.factors_for(cache.cell_count() / cache.n_seq_max()));
    graph.mark_output(Graph::named(shifted, "k_shift", il));
  }
}

}  // namespace sinter
