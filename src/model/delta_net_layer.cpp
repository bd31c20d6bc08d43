#include "model/delta_net_layer.h"

#include <cmath>

namespace sinter {
namespace {

constexpr size_t kFloat = sizeof(float);

Tensor* name(Tensor* t, const char* base, int layer) { return ForwardContext::name(t, base, layer); }

// Rows [first, first + heads·head_size) of each token of t [rows, T] (contiguous F32) as a view
// [head_size, heads, T]: what l2_norm and gated_delta_net read in place.
Tensor* token_heads(Graph& g, Tensor* t, int64_t first, int64_t head_size, int64_t heads) {
  const int64_t n_tokens = t->ne[1];
  return g.view(
      t, {head_size, heads, n_tokens, 1},
      {kFloat, static_cast<size_t>(head_size) * kFloat, t->nb[1], t->nb[1] * static_cast<size_t>(n_tokens)},
      static_cast<size_t>(first) * kFloat);
}

}  // namespace

DeltaNetDims DeltaNetDims::of(const SsmHParams& ssm) {
  DeltaNetDims d;
  d.d_conv = ssm.d_conv;
  d.d_k = ssm.d_state;
  d.n_head_k = ssm.n_group;
  d.n_head = ssm.dt_rank;
  d.d_v = ssm.dt_rank != 0 ? int64_t{ssm.d_inner} / ssm.dt_rank : 0;
  return d;
}

void check_delta_net_keys(HParams& p, const SsmHParams& ssm) {
  if (!p.status()) return;
  const DeltaNetDims d = DeltaNetDims::of(ssm);
  if (d.d_k != d.d_v) {
    p.fail(concat("ssm.state_size ", d.d_k, " differs from the value heads' size ", d.d_v,
                  " (ssm.inner_size / ssm.time_step_rank); the gated delta net needs them equal"));
  }
}

RecurrentLayerShape delta_net_state(const DeltaNetDims& d) {
  RecurrentLayerShape layer;
  layer.states.push_back({{d.d_conv - 1, d.conv_channels(), 1}});
  layer.states.push_back({{d.d_v, d.d_k, d.n_head}});
  return layer;
}

DeltaNetWeights bind_delta_net(WeightBinder& b, int il, int64_t n_embd, const DeltaNetDims& d,
                               bool fused_beta_alpha) {
  const auto n = [il](const char* pattern) { return format_name(pattern, il); };
  DeltaNetWeights w;
  w.qkv = b.require(n("blk.%d.attn_qkv.weight"), {n_embd, d.conv_channels()});
  w.gate = b.require(n("blk.%d.attn_gate.weight"), {n_embd, d.value_width()});
  if (fused_beta_alpha) {
    w.beta_alpha = b.require(n("blk.%d.ssm_ba.weight"), {n_embd, 2 * d.n_head});
  } else {
    w.beta = b.require(n("blk.%d.ssm_beta.weight"), {n_embd, d.n_head});
    w.alpha = b.require(n("blk.%d.ssm_alpha.weight"), {n_embd, d.n_head});
  }
  w.conv = b.require_f32(n("blk.%d.ssm_conv1d.weight"), {d.d_conv, d.conv_channels()});
  w.dt_b = b.require(n("blk.%d.ssm_dt.bias"), {d.n_head});
  w.a = b.require(n("blk.%d.ssm_a"), {d.n_head});  // no ".weight", as llama.cpp names it
  w.norm = b.require(n("blk.%d.ssm_norm.weight"), {d.d_v});
  w.out = b.require(n("blk.%d.ssm_out.weight"), {d.value_width(), n_embd});
  return w;
}

Tensor* build_delta_net_core(ForwardContext& fx, Tensor* qkv, Tensor* z, Tensor* beta_logits, Tensor* alpha,
                             const DeltaNetWeights& w, const DeltaNetOptions& o, int il) {
  Graph& g = fx.graph;
  const DeltaNetDims& d = o.dims;
  const int64_t n_tokens = qkv->ne[1];
  RecurrentState& memory = fx.state();
  Tensor* slots = fx.state_slots_input();

  // The decay's log g = softplus(alpha + dt_b)·A and the write strength beta, per head and token.
  Tensor* beta = name(g.sigmoid(beta_logits), "beta_sigmoid", il);
  Tensor* biased = name(g.add(alpha, w.dt_b), "alpha_biased", il);
  Tensor* gate = name(g.mul(g.softplus(biased), w.a), "gate", il);

  // The short convolution over q, k and v, its state [d_conv − 1, channels, 1, S] read as
  // ssm_conv's [d_conv − 1, channels, S].
  Tensor* conv_state = memory.state(o.state_layer, 0);
  conv_state = g.reshape(conv_state, {conv_state->ne[0], conv_state->ne[1], conv_state->ne[3], 1});
  Tensor* conv = name(g.ssm_conv(qkv, w.conv, conv_state, slots), "conv_output_raw", il);
  conv = name(g.silu(conv), "conv_output_silu", il);

  Tensor* q = name(g.l2_norm(token_heads(g, conv, 0, d.d_k, d.n_head_k), o.norm_eps), "q_conv_normed", il);
  Tensor* k = name(g.l2_norm(token_heads(g, conv, d.key_width(), d.d_k, d.n_head_k), o.norm_eps),
                   "k_conv_normed", il);
  Tensor* v = token_heads(g, conv, 2 * d.key_width(), d.d_v, d.n_head);

  DeltaNetParams params;
  params.scale = 1.0f / std::sqrt(static_cast<float>(d.d_k));
  params.grouped_heads = o.grouped_heads;
  Tensor* y = name(g.gated_delta_net(q, k, v, gate, beta, memory.state(o.state_layer, 1), slots, params),
                   "attn_output", il);  // [d_v·H, T]

  // The gated RMS norm per value head: rms_norm(y)·ssm_norm·silu(z).
  y = g.reshape(y, {d.d_v, d.n_head, n_tokens, 1});
  y = fx.build_norm(y, NormWeights{w.norm, nullptr}, NormKind::kRms, o.norm_eps, "attn_out_norm", il);
  Tensor* z_heads = g.reshape(z, {d.d_v, d.n_head, n_tokens, 1});
  y = name(g.mul(y, g.silu(z_heads)), "attn_out_gated", il);
  y = g.reshape(y, {d.value_width(), n_tokens, 1, 1});
  return name(fx.build_linear(w.out, y, nullptr), "linear_attn_out", il);
}

Tensor* build_delta_net_layer(ForwardContext& fx, Tensor* x, const DeltaNetWeights& w,
                              const DeltaNetOptions& o, int il) {
  Tensor* qkv = name(fx.build_linear(w.qkv, x, nullptr), "linear_attn_qkv_mixed", il);
  Tensor* z = name(fx.build_linear(w.gate, x, nullptr), "z", il);
  Tensor* beta = nullptr;
  Tensor* alpha = nullptr;
  if (w.beta_alpha != nullptr) {
    // [2·H, T]: per key head, r = H / H_k beta logits then r alphas; each part made contiguous
    // [r, H_k, T] = [H, T] (value head h = key head · r + j, the grouped mapping).
    Graph& g = fx.graph;
    const DeltaNetDims& d = o.dims;
    const int64_t r = d.n_head / d.n_head_k, n_tokens = x->ne[1];
    Tensor* ba = name(fx.build_linear(w.beta_alpha, x, nullptr), "linear_attn_mixed_ba", il);
    const auto part = [&](int64_t first) {
      Tensor* view = g.view(
          ba, {r, d.n_head_k, n_tokens, 1},
          {kFloat, 2 * static_cast<size_t>(r) * kFloat, ba->nb[1], ba->nb[1] * static_cast<size_t>(n_tokens)},
          static_cast<size_t>(first) * kFloat);
      return g.reshape(g.copy(view, DType::F32), {d.n_head, n_tokens, 1, 1});
    };
    beta = name(part(0), "beta", il);
    alpha = name(part(r), "alpha", il);
  } else {
    beta = name(fx.build_linear(w.beta, x, nullptr), "beta", il);
    alpha = name(fx.build_linear(w.alpha, x, nullptr), "alpha", il);
  }
  return build_delta_net_core(fx, qkv, z, beta, alpha, w, o, il);
}

}  // namespace sinter
