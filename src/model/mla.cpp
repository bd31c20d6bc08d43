#include "model/mla.h"

namespace sinter {

void check_mla_keys(HParams& p, uint32_t head_dim, uint32_t head_dim_v, uint32_t n_head_kv, uint32_t kv_lora,
                    uint32_t head_k_mla, uint32_t n_rot) {
  if (head_k_mla <= n_rot) p.fail("key_length_mla must exceed the rope dimension count");
  if (head_dim != kv_lora + n_rot || head_dim_v != kv_lora || n_head_kv > 1)
    p.fail(
        "latent attention files have key_length = kv_lora_rank + rope dimensions, value_length = "
        "kv_lora_rank and one key/value head");
}

Tensor* build_mla_attn(ForwardContext& fx, Tensor* x, const MlaWeights& w, const MlaOptions& o, int il) {
  Graph& g = fx.graph;
  const auto name = [il](Tensor* t, const char* base) { return ForwardContext::name(t, base, il); };
  const int64_t tokens = x->ne[1], heads = o.n_head, head_k = o.nope + o.rope;
  Tensor* q = nullptr;
  if (w.q != nullptr) {
    q = g.mul_mat(w.q, x);
  } else {
    Tensor* q_a =
        fx.build_norm(g.mul_mat(w.q_a, x), {w.q_a_norm, nullptr}, NormKind::kRms, o.norm_eps, "q_a_norm", il);
    q = g.mul_mat(w.q_b, q_a);
  }
  name(q, "Qcur");
  const size_t f = sizeof(float);
  const std::array<size_t, kMaxDims> q_strides{f, head_k * f, head_k * heads * f,
                                               head_k * heads * tokens * f};
  Tensor* q_nope = g.copy(g.view(q, {o.nope, heads, tokens, 1}, q_strides, 0));
  Tensor* q_pe = g.view(q, {o.rope, heads, tokens, 1}, q_strides, static_cast<size_t>(o.nope) * f);
  if (o.rotate) {
    q_pe = fx.build_rope(q_pe, o.attention.rope, o.attention.rope_freq_factors, "q_pe", il);
  } else {
    q_pe = g.copy(q_pe);  // the concatenation below reads contiguous rows
  }

  Tensor* kv = name(g.mul_mat(w.kv_a, x), "kv_cmpr_pe");  // [kv_lora + rope, T]
  Tensor* latent = fx.build_norm(fx.build_row_slice(kv, 0, o.kv_lora), {w.kv_a_norm, nullptr}, NormKind::kRms,
                                 o.norm_eps, "kv_cmpr", il);
  Tensor* k_pe = g.reshape(fx.build_row_slice(kv, o.kv_lora, o.rope), {o.rope, 1, tokens, 1});
  if (o.rotate) k_pe = fx.build_rope(k_pe, o.attention.rope, o.attention.rope_freq_factors, "k_pe", il);

  // Each head's key matrix folded into its query: [nope, H, T] -> [kv_lora, H, T].
  Tensor* q_absorbed = name(g.mul_mat_heads(w.k_b, q_nope), "q_nope_absorbed");
  Tensor* queries = name(g.concat(q_pe, q_absorbed), "Qcur_mla");  // [rope + kv_lora, H, T]
  Tensor* keys = name(g.concat(k_pe, g.reshape(latent, {o.kv_lora, 1, tokens, 1})), "Kcur_mla");

  AttentionOptions attention = o.attention;
  attention.n_head = o.n_head;
  attention.n_head_kv = 1;
  attention.head_dim = o.rope + o.kv_lora;
  attention.head_dim_v = o.kv_lora;
  attention.scale = o.scale;
  Tensor* attended = fx.build_attn_over_cache(queries, keys, latent, attention, il);  // [kv_lora·H, T]
  // Each head's value matrix on its latent output: [kv_lora, H, T] -> [head_dim_v, H, T].
  Tensor* values = g.mul_mat_heads(w.v_b, g.reshape(attended, {o.kv_lora, heads, tokens, 1}));
  values = name(g.reshape(values, {int64_t{o.head_dim_v} * heads, tokens, 1, 1}), "kqv_mla");
  return name(g.mul_mat(w.output, values), "attn_out");
}

}  // namespace sinter
