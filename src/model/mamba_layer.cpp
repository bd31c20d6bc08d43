#include "model/mamba_layer.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sinter {
namespace {

// Beyond these a file's sizes are not a model's (a 7B Mamba-2 keeps 1M values per layer's scan
// state): refused before any product of them is formed.
constexpr uint64_t kMaxStateValues = uint64_t{1} << 32;  // per state tensor, per sequence
constexpr uint32_t kMaxConvKernel = 256;

constexpr size_t kFloat = sizeof(float);

Tensor* name(Tensor* t, const char* base, int layer) { return ForwardContext::name(t, base, layer); }

// Rows [first, first + n) of each token of t [rows, T] (contiguous F32), as a view [n, T]: what
// the recurrent ops read in place.
Tensor* token_rows(Graph& g, Tensor* t, int64_t first, int64_t n) {
  const int64_t n_tokens = t->ne[1];
  return g.view(t, {n, n_tokens, 1, 1}, {kFloat, t->nb[1], t->nb[1] * static_cast<size_t>(n_tokens), 0},
                static_cast<size_t>(first) * kFloat);
}

// The same rows seen as [ne0, ne1, T] (heads, or groups of B and C).
Tensor* token_planes(Graph& g, Tensor* t, int64_t first, int64_t ne0, int64_t ne1) {
  const int64_t n_tokens = t->ne[1];
  const size_t row = static_cast<size_t>(ne0) * kFloat;
  return g.view(t, {ne0, ne1, n_tokens, 1}, {kFloat, row, t->nb[1], t->nb[1] * static_cast<size_t>(n_tokens)},
                static_cast<size_t>(first) * kFloat);
}

// The convolution state of a recurrent layer as ssm_conv reads it: [d_conv − 1, channels, S]
// (the RecurrentState keeps [d_conv − 1, channels, 1, S]).
Tensor* conv_state(Graph& g, RecurrentState& state, int layer) {
  Tensor* s = state.state(layer, 0);
  return g.reshape(s, {s->ne[0], s->ne[1], s->ne[3], 1});
}

// A per-head value [1, n_head] repeated over each head's head_dim values: [head_dim, n_head]
// (a view with a zero stride, made contiguous).
Tensor* per_head(Graph& g, Tensor* values, int64_t head_dim) {
  const int64_t n_head = values->ne[1];
  Tensor* repeated = g.view(values, {head_dim, n_head, 1, 1},
                            {0, values->nb[1], values->nb[1] * static_cast<size_t>(n_head),
                             values->nb[1] * static_cast<size_t>(n_head)},
                            0);
  return g.copy(repeated, DType::F32);
}

std::string tensor_name(const char* pattern, int layer) { return format_name(pattern, layer); }

}  // namespace

void SsmHParams::declare(HParams& p, MambaVersion version) {
  p.required("{arch}.ssm.conv_kernel", d_conv);
  p.required("{arch}.ssm.inner_size", d_inner);
  p.required("{arch}.ssm.state_size", d_state);
  p.required("{arch}.ssm.time_step_rank", dt_rank);
  if (version == MambaVersion::k2) {
    p.required("{arch}.ssm.group_count", n_group);
  } else {
    p.optional("{arch}.ssm.dt_b_c_rms", dt_b_c_rms, false);
  }
  if (!p.status()) return;
  if (d_conv < 2 || d_conv > kMaxConvKernel) {
    p.fail(concat("ssm.conv_kernel ", d_conv, " must be between 2 and ", kMaxConvKernel));
    return;
  }
  if (d_inner == 0 || d_state == 0 || dt_rank == 0 || n_group == 0) {
    p.fail(version == MambaVersion::k2
               ? "ssm.inner_size, ssm.state_size, ssm.time_step_rank and ssm.group_count must be positive"
               : "ssm.inner_size, ssm.state_size and ssm.time_step_rank must be positive");
    return;
  }
  if (version == MambaVersion::k2) {
    if (d_inner % dt_rank != 0 || dt_rank % n_group != 0) {
      p.fail(concat("ssm.inner_size ", d_inner, " is not divisible into ", dt_rank,
                    " heads (ssm.time_step_rank) in ", n_group, " groups (ssm.group_count)"));
      return;
    }
  }
  const uint64_t scan = uint64_t{d_state} * d_inner;
  const uint64_t conv = (uint64_t{d_conv} - 1) * (uint64_t{d_inner} + 2 * uint64_t{n_group} * d_state);
  if (scan > kMaxStateValues || conv > kMaxStateValues) {
    p.fail(concat("ssm sizes (inner ", d_inner, ", state ", d_state, ", groups ", n_group, ", kernel ",
                  d_conv, ") make a state of more than 2^32 values per layer and sequence"));
  }
}

void SsmHParams::set_synth_dims(MambaVersion version, uint32_t n_embd, uint32_t n_head, uint32_t groups) {
  d_conv = 4;
  d_inner = 2 * n_embd;
  if (version == MambaVersion::k1) {
    d_state = 16;
    dt_rank = ((n_embd + 15) / 16 + 63) / 64 * 64;
    n_group = 1;
  } else {
    d_state = std::clamp(n_embd / 4, 1u, 128u);
    dt_rank = n_head;
    n_group = groups;
  }
}

RecurrentLayerShape SsmHParams::layer_state(MambaVersion version) const {
  RecurrentLayerShape layer;
  layer.states.push_back({{int64_t{d_conv} - 1, conv_channels(version), 1}});
  layer.states.push_back({{int64_t{d_state}, int64_t{head_dim(version)}, int64_t{n_head(version)}}});
  return layer;
}

Mamba1Weights bind_mamba1(WeightBinder& b, int il, int64_t n_embd, const SsmHParams& s,
                          bool weighted_dt_b_c_norms) {
  const int64_t d_inner = s.d_inner, d_state = s.d_state, dt_rank = s.dt_rank;
  const auto n = [il](const char* pattern) { return tensor_name(pattern, il); };
  Mamba1Weights w;
  w.in = b.require(n("blk.%d.ssm_in.weight"), {n_embd, 2 * d_inner});
  w.conv = b.require_f32(n("blk.%d.ssm_conv1d.weight"), {s.d_conv, d_inner});
  w.conv_b = b.require(n("blk.%d.ssm_conv1d.bias"), {d_inner});
  w.x = b.require(n("blk.%d.ssm_x.weight"), {d_inner, dt_rank + 2 * d_state});
  w.dt = b.require(n("blk.%d.ssm_dt.weight"), {dt_rank, d_inner});
  w.dt_b = b.require(n("blk.%d.ssm_dt.bias"), {d_inner});
  w.a = b.require_f32(n("blk.%d.ssm_a"), {d_state, d_inner});  // no ".weight", as llama.cpp names it
  w.d = b.require(n("blk.%d.ssm_d"), {d_inner});
  w.out = b.require(n("blk.%d.ssm_out.weight"), {d_inner, n_embd});
  if (weighted_dt_b_c_norms) {
    w.dt_norm = b.require(n("blk.%d.ssm_dt_norm.weight"), {dt_rank});
    w.b_norm = b.require(n("blk.%d.ssm_b_norm.weight"), {d_state});
    w.c_norm = b.require(n("blk.%d.ssm_c_norm.weight"), {d_state});
  }
  return w;
}

Mamba2Weights bind_mamba2(WeightBinder& b, int il, int64_t n_embd, const SsmHParams& s, bool norm_required) {
  const MambaVersion v = MambaVersion::k2;
  const int64_t d_inner = s.d_inner, n_head = s.n_head(v), channels = s.conv_channels(v);
  const auto n = [il](const char* pattern) { return tensor_name(pattern, il); };
  Mamba2Weights w;
  w.in = b.require(n("blk.%d.ssm_in.weight"), {n_embd, d_inner + channels + n_head});
  w.conv = b.require_f32(n("blk.%d.ssm_conv1d.weight"), {s.d_conv, channels});
  w.conv_b = b.require(n("blk.%d.ssm_conv1d.bias"), {channels});
  w.dt_b = b.require(n("blk.%d.ssm_dt.bias"), {n_head});
  w.a = b.require_f32(n("blk.%d.ssm_a"), {1, n_head});
  w.d = b.require_f32(n("blk.%d.ssm_d"), {1, n_head});
  const std::vector<int64_t> norm_shape{d_inner / s.n_group, s.n_group};
  w.norm = norm_required ? b.require_f32(n("blk.%d.ssm_norm.weight"), norm_shape)
                         : b.optional_f32(n("blk.%d.ssm_norm.weight"), norm_shape);
  w.out = b.require(n("blk.%d.ssm_out.weight"), {d_inner, n_embd});
  return w;
}

Tensor* build_mamba1_layer(ForwardContext& fx, Tensor* cur, const Mamba1Weights& w, const MambaOptions& o,
                           int il) {
  Graph& g = fx.graph;
  const SsmHParams& s = o.ssm;
  const int64_t d_inner = s.d_inner, d_state = s.d_state, dt_rank = s.dt_rank;
  const int64_t n_tokens = fx.batch.n_tokens;
  RecurrentState& state = fx.state();
  Tensor* slots = fx.state_slots_input();

  // {n_embd, T} -> x and z {d_inner, T}
  Tensor* xz = name(g.mul_mat(w.in, cur), "ssm_in", il);
  Tensor* z = fx.build_row_slice(xz, d_inner, d_inner);
  Tensor* x = g.ssm_conv(token_rows(g, xz, 0, d_inner), w.conv, conv_state(g, state, o.state_layer), slots);
  name(x, "ssm_conv", il);
  if (w.conv_b != nullptr) x = g.add(x, w.conv_b);
  x = name(g.silu(x), "ssm_conv_act", il);

  // {d_inner, T} -> dt_low {dt_rank, T}, B and C {d_state, T}
  Tensor* x_db = name(g.mul_mat(w.x, x), "ssm_x", il);
  Tensor* dt = fx.build_row_slice(x_db, 0, dt_rank);
  Tensor* b = nullptr;
  Tensor* c = nullptr;
  if (s.dt_b_c_rms || w.dt_norm != nullptr) {
    // Falcon-Mamba (no weights) and Jamba (weights): each RMS-normed over its own values.
    dt = fx.build_norm(dt, {w.dt_norm, nullptr}, NormKind::kRms, o.norm_eps, "ssm_dt_norm", il);
    b = fx.build_norm(fx.build_row_slice(x_db, dt_rank, d_state), {w.b_norm, nullptr}, NormKind::kRms,
                      o.norm_eps, "ssm_b_norm", il);
    c = fx.build_norm(fx.build_row_slice(x_db, dt_rank + d_state, d_state), {w.c_norm, nullptr},
                      NormKind::kRms, o.norm_eps, "ssm_c_norm", il);
    b = g.reshape(b, {d_state, 1, n_tokens, 1});
    c = g.reshape(c, {d_state, 1, n_tokens, 1});
  } else {
    b = token_planes(g, x_db, dt_rank, d_state, 1);
    c = token_planes(g, x_db, dt_rank + d_state, d_state, 1);
  }
  // {dt_rank, T} -> {d_inner, T}
  dt = name(fx.build_linear(w.dt, dt, w.dt_b), "ssm_dt", il);

  // One head of one value per channel.
  Tensor* heads = g.reshape(x, {1, d_inner, n_tokens, 1});
  Tensor* y = g.ssm_scan(heads, dt, w.a, b, c, state.state(o.state_layer, 1), slots);
  y = name(g.reshape(y, {d_inner, n_tokens, 1, 1}), "ssm_scan", il);
  y = g.add(y, g.mul(x, w.d));
  y = name(g.swiglu(z, y), "ssm_y", il);
  return name(g.mul_mat(w.out, y), "ssm_out", il);
}

Tensor* build_mamba2_layer(ForwardContext& fx, Tensor* cur, const Mamba2Weights& w, const MambaOptions& o,
                           int il) {
  Graph& g = fx.graph;
  const MambaVersion v = MambaVersion::k2;
  const SsmHParams& s = o.ssm;
  const int64_t d_inner = s.d_inner, d_state = s.d_state, n_group = s.n_group;
  const int64_t n_head = s.n_head(v), head_dim = s.head_dim(v), channels = s.conv_channels(v);
  const int64_t n_tokens = fx.batch.n_tokens;
  RecurrentState& state = fx.state();
  Tensor* slots = fx.state_slots_input();

  // {n_embd, T} -> z {d_inner, T}, xBC {d_inner + 2·G·N, T}, dt {n_head, T}
  Tensor* zxbcdt = name(g.mul_mat(w.in, cur), "ssm_in", il);
  Tensor* z = fx.build_row_slice(zxbcdt, 0, d_inner);
  Tensor* dt = fx.build_row_slice(zxbcdt, d_inner + channels, n_head);
  Tensor* xbc = g.ssm_conv(token_rows(g, zxbcdt, d_inner, channels), w.conv,
                           conv_state(g, state, o.state_layer), slots);
  name(xbc, "ssm_conv", il);
  if (w.conv_b != nullptr) xbc = g.add(xbc, w.conv_b);
  xbc = name(g.silu(xbc), "ssm_conv_act", il);

  // x {head_dim, n_head, T}, B and C {d_state, G, T}: views of xBC's rows.
  Tensor* x = token_planes(g, xbc, 0, head_dim, n_head);
  Tensor* b = token_planes(g, xbc, d_inner, d_state, n_group);
  Tensor* c = token_planes(g, xbc, d_inner + n_group * d_state, d_state, n_group);
  dt = name(g.add(dt, w.dt_b), "ssm_dt", il);
  Tensor* y = g.ssm_scan(x, dt, w.a, b, c, state.state(o.state_layer, 1), slots);
  name(y, "ssm_scan", il);

  // The skip: each head's x times its D.
  Tensor* x_heads = g.reshape(fx.build_row_slice(xbc, 0, d_inner), {head_dim, n_head, n_tokens, 1});
  y = name(g.add(y, g.mul(x_heads, per_head(g, w.d, head_dim))), "mamba2_y_add_d", il);
  y = g.swiglu(z, g.reshape(y, {d_inner, n_tokens, 1, 1}));
  name(y, "ssm_y", il);
  if (w.norm != nullptr) {
    // Grouped RMS norm: each group's d_inner / G values normed alone.
    Tensor* groups = g.reshape(y, {d_inner / n_group, n_group, n_tokens, 1});
    groups = fx.build_norm(groups, {w.norm, nullptr}, NormKind::kRms, o.norm_eps, "ssm_norm", il);
    y = g.reshape(groups, {d_inner, n_tokens, 1, 1});
  }
  return name(g.mul_mat(w.out, y), "ssm_out", il);
}

}  // namespace sinter
