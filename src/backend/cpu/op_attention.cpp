// Attention over the KV cache, and the writes that fill it.
//
// Each (token, head) is computed on its own, over the cells the AttentionIndex lists for the
// token, in position order. The result depends only on the token's sequence, never on
// what else is in the batch or where in the cache the cells are.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_ops.h"

namespace sinter::cpu {

// cache [n, cells] rows at slots[t] = rows[:, t]; threads split the tokens.
void run_store_rows(const Tensor& dst, const OpContext& ctx) {
  const Tensor& cache = *dst.src[0];
  const Tensor& rows = *dst.src[1];
  const auto* slots = dst.src[2]->data_as<const int32_t>();
  const int64_t count = dst.src[2]->ne[0];
  const int64_t n = cache.ne[0];
  const auto& traits = dtype_traits(cache.type);
  for (int64_t t = ctx.thread.share_begin(count); t < ctx.thread.share_end(count); ++t) {
    // rows is [n_embd_head, n_head_kv, n_tokens] or [n, n_tokens]: token t's values are contiguous.
    const auto* values = reinterpret_cast<const float*>(static_cast<const uint8_t*>(rows.data) + t * n * sizeof(float));
    traits.quantize(values, cache.row(slots[t]), n);
  }
}

// dst [head_dim_v * n_head, n_tokens]; q [head_dim, n_head, n_tokens]; K [head_dim * n_head_kv,
// cells]; V [head_dim_v * n_head_kv, cells]. Threads split the (token, head) pairs.
//
// All arithmetic is F32 whatever the cache type (cached rows are widened as they are read): an
// online softmax over the visible cells in position order. llama.cpp rounds queries and the
// running sum to F16 for micro-batches under 64 rows and computes in F32 above; sinter computes
// every batch the second way, so a token's result never depends on its batch (docs/NUMERICS.md).
void run_attention(const Tensor& dst, const OpContext& ctx) {
  const Tensor& q = *dst.src[0];
  const Tensor& k = *dst.src[1];
  const Tensor& v = *dst.src[2];
  const float scale = dst.param_float(0);
  const float softcap = dst.param_float(1);
  const AttentionIndex& index = ctx.graph.attention_indices()[static_cast<size_t>(dst.params[2])];
  const int64_t head_dim = q.ne[0];
  const int64_t n_head = q.ne[1];
  const int64_t n_tokens = q.ne[2];
  const int64_t n_head_kv = k.ne[0] / head_dim;
  const int64_t head_dim_v = v.ne[0] / n_head_kv;
  const int64_t group = n_head / n_head_kv;
  const size_t k_head_bytes = sinter::row_bytes(k.type, head_dim);
  const size_t v_head_bytes = sinter::row_bytes(v.type, head_dim_v);

  float* query = ctx.scratch.floats.data();           // [head_dim]
  float* row = query + head_dim;                      // [max(head_dim, head_dim_v)]
  float* sum = row + std::max(head_dim, head_dim_v);  // [head_dim_v]
  const int64_t pairs = n_tokens * n_head;
  for (int64_t pair = ctx.thread.share_begin(pairs); pair < ctx.thread.share_end(pairs); ++pair) {
    const int64_t t = pair / n_head;
    const int64_t h = pair % n_head;
    const int64_t g = h / group;
    const auto* qh = reinterpret_cast<const float*>(q.row(h, t));
    std::memcpy(query, qh, static_cast<size_t>(head_dim) * sizeof(float));
    std::memset(sum, 0, static_cast<size_t>(head_dim_v) * sizeof(float));
    float max_score = -INFINITY;
    float weight_total = 0.0f;
    for (int32_t j = index.begin[static_cast<size_t>(t)]; j < index.end[static_cast<size_t>(t)]; ++j) {
      const int32_t cell = index.cells[static_cast<size_t>(j)];
      row_to_f32(k.type, k.row(cell) + g * k_head_bytes, row, head_dim);
      float s = dot_f32(query, row, head_dim) * scale;
      if (softcap != 0.0f) s = softcap * std::tanh(s / softcap);
      float rescale = 1.0f;  // factor for what was summed so far
      float weight = 1.0f;   // weight of this cell's value
      if (s > max_score) {
        rescale = std::exp(max_score - s);
        max_score = s;
        for (int64_t i = 0; i < head_dim_v; ++i) sum[i] *= rescale;
      } else {
        weight = std::exp(s - max_score);
      }
      row_to_f32(v.type, v.row(cell) + g * v_head_bytes, row, head_dim_v);
      for (int64_t i = 0; i < head_dim_v; ++i) sum[i] += row[i] * weight;
      weight_total = weight_total * rescale + weight;
    }
    auto* out = reinterpret_cast<float*>(dst.row(t)) + h * head_dim_v;
    const float inverse = weight_total == 0.0f ? 0.0f : 1.0f / weight_total;
    for (int64_t i = 0; i < head_dim_v; ++i) out[i] = sum[i] * inverse;
  }
}

}  // namespace sinter::cpu
