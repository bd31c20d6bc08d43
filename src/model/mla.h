// Multi-head latent attention (DeepSeek-V2/V3 and kin), in its absorbed form: the keys and values
// of every head are one compressed latent per token (kv_lora values, plus a shared rotated part),
// and that latent is what the KV cache stores; the per-head key and value matrices are folded
// into the queries and the output instead (llama.cpp's is_mla path).
//
//   q [nope + rope, H, T] = wq x (or wq_b · norm(wq_a x))        kv [kv_lora + rope, T] = wkv_a x
//   Q = [rope(q_pe), wk_b_h · q_nope]  [rope + kv_lora, H, T]     K = [rope(k_pe), norm(kv_c)]  [.., 1, T]
//   attention of Q over cached K, V = norm(kv_c) (one KV head)   -> o [kv_lora, H, T]
//   out = wo · (wv_b_h · o_h)
// The rotated part comes first in Q and K, so a context shift rotates the first n_rot values of
// the cached keys, as for every other model.
#pragma once

#include "model/builder.h"
#include "model/hparams.h"

namespace sinter {

struct MlaWeights {
  Tensor* q = nullptr;          // attn_q [n_embd, H·(nope + rope)] (no query compression), or
  Tensor* q_a = nullptr;        // attn_q_a [n_embd, q_lora]
  Tensor* q_a_norm = nullptr;   // attn_q_a_norm [q_lora]
  Tensor* q_b = nullptr;        // attn_q_b [q_lora, H·(nope + rope)]
  Tensor* kv_a = nullptr;       // attn_kv_a_mqa [n_embd, kv_lora + rope]
  Tensor* kv_a_norm = nullptr;  // attn_kv_a_norm [kv_lora]
  Tensor* k_b = nullptr;        // attn_k_b [nope, kv_lora, H]
  Tensor* v_b = nullptr;        // attn_v_b [kv_lora, head_dim_v, H]
  Tensor* output = nullptr;     // attn_output [H·head_dim_v, n_embd]
};

struct MlaOptions {
  int32_t n_head = 0;
  int32_t nope = 0;        // query/key values without rotation, per head
  int32_t rope = 0;        // rotated values (n_rot)
  int32_t kv_lora = 0;     // the latent's size
  int32_t head_dim_v = 0;  // value size per head after wv_b
  float scale = 0.0f;      // of the scores
  float norm_eps = 1e-6f;
  // Kimi Linear's latent attention has no RoPE: its rope part is a plain part of the keys.
  bool rotate = true;
  AttentionOptions attention;  // the layer's cache, RoPE and window (ForwardContext::use_layer)
};

// The keys a latent-attention file must agree on: key_length_mla beyond the rotated part, and
// the cache's one key/value head of key_length = kv_lora_rank + rope dimensions and value_length
// = kv_lora_rank (n_head_kv: the attention layers' count, 1; 0 in a file without any).
void check_mla_keys(HParams& p, uint32_t head_dim, uint32_t head_dim_v, uint32_t n_head_kv, uint32_t kv_lora,
                    uint32_t head_k_mla, uint32_t n_rot);

// x [n_embd, T] -> [n_embd, T].
Tensor* build_mla_attn(ForwardContext& fx, Tensor* x, const MlaWeights& w, const MlaOptions& o, int layer);

}  // namespace sinter
