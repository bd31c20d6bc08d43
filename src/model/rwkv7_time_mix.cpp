// RWKV-7's time mix (llama.cpp's build_rwkv7_time_mix, with its output gate).
#include "model/rwkv_time_mix.h"

namespace sinter {
namespace {

// The six shares' order in lerp_fused (the converter's).
enum Share : int { kR = 0, kW, kK, kV, kA, kG, kShares };

// LoRA up · (LoRA down · x), with an activation between them where one is given.
Tensor* lora(Graph& g, Tensor* down, Tensor* up, Tensor* x, Tensor* (Graph::*activation)(Tensor*) = nullptr) {
  Tensor* hidden = g.mul_mat(down, x);
  if (activation != nullptr) hidden = (g.*activation)(hidden);
  return g.mul_mat(up, hidden);
}

}  // namespace

Rwkv7TimeMixWeights bind_rwkv7_time_mix(WeightBinder& b, int il, const Rwkv7TimeMixDims& d) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  const int64_t n = d.n_embd;
  // Layer 0 has no value residual; its v0/v1/v2 are a dummy of the iclr's rank that llama.cpp
  // loads and never reads.
  const int64_t value_rank = il == 0 ? d.iclr_rank : d.value_rank;
  Rwkv7TimeMixWeights w;
  w.w0 = b.require(name("blk.%d.time_mix_w0.weight"), {n});
  w.w1 = b.require(name("blk.%d.time_mix_w1.weight"), {n, d.decay_rank});
  w.w2 = b.require(name("blk.%d.time_mix_w2.weight"), {d.decay_rank, n});
  w.a0 = b.require(name("blk.%d.time_mix_a0.weight"), {n});
  w.a1 = b.require(name("blk.%d.time_mix_a1.weight"), {n, d.iclr_rank});
  w.a2 = b.require(name("blk.%d.time_mix_a2.weight"), {d.iclr_rank, n});
  w.v0 = b.require(name("blk.%d.time_mix_v0.weight"), {n});
  w.v1 = b.require(name("blk.%d.time_mix_v1.weight"), {n, value_rank});
  w.v2 = b.require(name("blk.%d.time_mix_v2.weight"), {value_rank, n});
  w.g1 = b.require(name("blk.%d.time_mix_g1.weight"), {n, d.gate_rank});
  w.g2 = b.require(name("blk.%d.time_mix_g2.weight"), {d.gate_rank, n});
  w.lerp_fused = b.require(name("blk.%d.time_mix_lerp_fused.weight"), {n, 1, 1, kShares});
  w.k_k = b.require(name("blk.%d.time_mix_k_k.weight"), {n});
  w.k_a = b.require(name("blk.%d.time_mix_k_a.weight"), {n});
  w.r_k = b.require(name("blk.%d.time_mix_r_k.weight"), {n});
  w.key = b.require(name("blk.%d.time_mix_key.weight"), {n, n});
  w.value = b.require(name("blk.%d.time_mix_value.weight"), {n, n});
  w.receptance = b.require(name("blk.%d.time_mix_receptance.weight"), {n, n});
  w.ln = bind_norm(b, "blk.%d.time_mix_ln", il, n, Presence::kRequired, Presence::kRequired);
  w.output = b.require(name("blk.%d.time_mix_output.weight"), {n, n});
  return w;
}

Tensor* build_rwkv7_time_mix(ForwardContext& fx, Tensor* x, Tensor* x_prev, Tensor*& v_first,
                             const Rwkv7TimeMixWeights& w, int64_t head_size, int il) {
  Graph& g = fx.graph;
  const int64_t n_embd = x->ne[0], n_tokens = x->ne[1], n_head = n_embd / head_size;
  Tensor* sx = g.sub(x_prev, x);
  const auto mixed = [&](Share s) { return build_lerp(g, x, sx, weight_row(g, w.lerp_fused, n_embd, s)); };
  Tensor* xv = mixed(kV);

  Tensor* r = g.mul_mat(w.receptance, mixed(kR));
  // The decay factor exp(−e^−½ · sigmoid(w0 + LoRA)), in (0.545, 1) (0.606531 as llama.cpp has it).
  Tensor* decay = g.add(lora(g, w.w1, w.w2, mixed(kW), &Graph::tanh), w.w0);
  decay = ForwardContext::name(g.exp(g.scale(g.sigmoid(decay), -0.606531f)), "wkv_decay", il);
  Tensor* k = g.mul_mat(w.key, mixed(kK));
  Tensor* v = g.mul_mat(w.value, xv);
  if (v_first == nullptr) {
    v_first = v;
  } else {
    // v + (v_first − v) · sigmoid(v0 + LoRA): a learned share of the first layer's values.
    Tensor* share = g.sigmoid(g.add(lora(g, w.v1, w.v2, xv), w.v0));
    v = g.add(v, g.mul(g.sub(v_first, v), share));
  }
  Tensor* gate = lora(g, w.g1, w.g2, mixed(kG), &Graph::sigmoid);
  // The in-context learning rate, in (0, 1).
  Tensor* a = g.sigmoid(g.add(lora(g, w.a1, w.a2, mixed(kA)), w.a0));

  const std::array<int64_t, kMaxDims> heads{head_size, n_head, n_tokens, 1};
  // The key normalized per head (the direction the delta rule removes), and the key scaled by
  // the learning rate: k + (a · k·k_a − k·k_a).
  Tensor* kk = g.l2_norm(g.reshape(g.mul(k, w.k_k), heads), 1e-12f);
  Tensor* ka = g.mul(k, w.k_a);
  k = g.add(k, g.sub(g.mul(a, ka), ka));

  r = g.reshape(r, heads);
  k = g.reshape(k, heads);
  v = g.reshape(v, heads);
  Tensor* y =
      g.rwkv_wkv7(r, g.reshape(decay, heads), k, v, g.scale(kk, -1.0f), g.mul(kk, g.reshape(a, heads)),
                  fx.state().state(il, kWkvState), fx.state_slots_input());
  y = build_rwkv_group_norm(fx, ForwardContext::name(y, "wkv_out", il), w.ln, head_size, il);
  // The current token's bonus: v times Σ_i k·r·r_k over each head.
  Tensor* bonus = g.sum_rows(g.mul(g.mul(k, r), g.reshape(w.r_k, {head_size, n_head, 1, 1})));  // [1, H, T]
  y = g.add(y, g.reshape(g.mul(v, bonus), {n_embd, n_tokens, 1, 1}));
  return ForwardContext::name(g.mul_mat(w.output, g.mul(y, gate)), "time_mix_out", il);
}

}  // namespace sinter
