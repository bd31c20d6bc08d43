// Gated attention (Qwen 3.5 / 3.6, Qwen3-Next: llama.cpp's build_layer_attn): grouped-query
// attention whose query projection is twice as wide, each head's query followed by as many gate
// values, and whose output is gated by their sigmoid before the output projection:
//
//   qg [2·head_dim·n_head, T] = attn_q · x           per head: head_dim query values, then head_dim gates
//   q = rope(rms_norm(q) · attn_q_norm)              per head
//   k = rope(rms_norm(attn_k · x) · attn_k_norm)     per head
//   out = attn_output · (attention(q, k, attn_v · x) ⊙ sigmoid(gate))
#pragma once

#include <cstdint>

#include "model/builder.h"
#include "model/weights.h"

namespace sinter {

// blk.<il>.attn_{q,k,v,output}.weight and the per-head attn_{q,k}_norm.weight, attn_q twice as
// wide as the queries (AttentionWeights' q, k, v, output, q_norm, k_norm).
AttentionWeights bind_gated_attention(WeightBinder& b, int il, int64_t n_embd, int64_t n_head,
                                      int64_t n_head_kv, int64_t head_dim);

// x [n_embd, T] (normed) -> [n_embd, T], over the KV layer `o.kv_layer` (ForwardContext::use_layer).
Tensor* build_gated_attention(ForwardContext& fx, Tensor* x, const AttentionWeights& w,
                              const AttentionOptions& o, int il);

}  // namespace sinter
