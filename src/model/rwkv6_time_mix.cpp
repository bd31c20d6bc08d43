// RWKV-6's time mix (llama.cpp's build_rwkv6_time_mix, without QRWKV's variant).
#include <string>

#include "model/rwkv_time_mix.h"

namespace sinter {
namespace {

// The five shares' order in lerp_fused, w1 and w2 (the converter's).
enum Share : int { kW = 0, kK, kV, kR, kG, kShares };

}  // namespace

Rwkv6TimeMixWeights bind_rwkv6_time_mix(WeightBinder& b, int il, const Rwkv6TimeMixDims& d) {
  const auto name = [il](const char* pattern) { return format_name(pattern, il); };
  const int64_t n = d.n_embd;
  Rwkv6TimeMixWeights w;
  w.lerp_x = b.require(name("blk.%d.time_mix_lerp_x.weight"), {n});
  // The fused shares, or (older files) each alone.
  w.lerp_fused = b.feature(name("blk.%d.time_mix_lerp_fused.weight"), {n, 1, 1, kShares});
  if (w.lerp_fused == nullptr) {
    constexpr const char* kNames[kShares] = {"w", "k", "v", "r", "g"};
    for (int s = 0; s < kShares; ++s) {
      w.lerp[static_cast<size_t>(s)] = b.require(name("blk.%d.time_mix_lerp_") + kNames[s] + ".weight", {n});
    }
  }
  w.w1 = b.require(name("blk.%d.time_mix_w1.weight"), {n, d.extra * kShares});
  w.w2 = b.require(name("blk.%d.time_mix_w2.weight"), {d.extra, n, kShares});
  w.first = b.require(name("blk.%d.time_mix_first.weight"), {d.head_size, n / d.head_size});
  w.decay = b.require(name("blk.%d.time_mix_decay.weight"), {n});
  w.decay_w1 = b.require(name("blk.%d.time_mix_decay_w1.weight"), {n, d.decay_extra});
  w.decay_w2 = b.require(name("blk.%d.time_mix_decay_w2.weight"), {d.decay_extra, n});
  w.key = b.require(name("blk.%d.time_mix_key.weight"), {n, n});
  w.value = b.require(name("blk.%d.time_mix_value.weight"), {n, n});
  w.receptance = b.require(name("blk.%d.time_mix_receptance.weight"), {n, n});
  w.gate = b.require(name("blk.%d.time_mix_gate.weight"), {n, n});
  w.ln = bind_norm(b, "blk.%d.time_mix_ln", il, n, Presence::kRequired, Presence::kRequired);
  w.output = b.require(name("blk.%d.time_mix_output.weight"), {n, n});
  return w;
}

Tensor* build_rwkv6_time_mix(ForwardContext& fx, Tensor* x, Tensor* x_prev, const Rwkv6TimeMixWeights& w,
                             int64_t head_size, int il) {
  Graph& g = fx.graph;
  const int64_t n_embd = x->ne[0], n_tokens = x->ne[1], n_head = n_embd / head_size;
  const int64_t extra = w.w2->ne[0];
  Tensor* sx = g.sub(x_prev, x);
  // The token-dependent shares: w2_s · tanh(w1 · lerp(x, lerp_x))_s for each share s, as
  // [n_embd, 5, T], then made [n_embd, T, 5] so that each share's rows are one block.
  Tensor* down = g.tanh(g.mul_mat(w.w1, build_lerp(g, x, sx, w.lerp_x)));
  Tensor* up = g.mul_mat_heads(w.w2, g.reshape(down, {extra, kShares, n_tokens, 1}));
  Tensor* shares = g.copy(g.permute(up, {0, 2, 1, 3}));  // [n_embd, T, 5]
  const std::array<int64_t, kMaxDims> ne{n_embd, n_tokens, 1, 1};
  const auto mixed = [&](Share s) {
    Tensor* share = g.view(shares, ne, contiguous_strides(DType::F32, ne),
                           static_cast<size_t>(s * n_embd * n_tokens) * sizeof(float));
    Tensor* lerp =
        w.lerp_fused != nullptr ? weight_row(g, w.lerp_fused, n_embd, s) : w.lerp[static_cast<size_t>(s)];
    return g.add(g.mul(g.add(share, lerp), sx), x);  // (ddlerp_s + lerp_s) · sx + x
  };
  Tensor* r = g.mul_mat(w.receptance, mixed(kR));
  Tensor* k = g.mul_mat(w.key, mixed(kK));
  Tensor* v = g.mul_mat(w.value, mixed(kV));
  Tensor* gate = g.silu(g.mul_mat(w.gate, mixed(kG)));
  // The decay factor exp(−exp(decay + w2' · tanh(w1' · xw))), in (0, 1).
  Tensor* decay = g.add(g.mul_mat(w.decay_w2, g.tanh(g.mul_mat(w.decay_w1, mixed(kW)))), w.decay);
  decay = ForwardContext::name(g.exp(g.scale(g.exp(decay), -1.0f)), "wkv_decay", il);

  const std::array<int64_t, kMaxDims> heads{head_size, n_head, n_tokens, 1};
  Tensor* y = g.rwkv_wkv6(g.reshape(k, heads), g.reshape(v, heads), g.reshape(r, heads), w.first,
                          g.reshape(decay, heads), fx.state().state(il, kWkvState), fx.state_slots_input());
  y = build_rwkv_group_norm(fx, ForwardContext::name(y, "wkv_out", il), w.ln, head_size, il);
  return ForwardContext::name(g.mul_mat(w.output, g.mul(y, gate)), "time_mix_out", il);
}

}  // namespace sinter
