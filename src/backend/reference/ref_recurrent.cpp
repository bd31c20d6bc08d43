// The recurrent layers' ops (Mamba's convolution and selective scan, RWKV's token shift): each
// token of the batch in batch order, its sequence's state read from and written back to the
// state tensor's plane slots[t], every value computed exactly as graph.h defines it.
#include <cassert>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {
namespace {

// Token t's slot, checked against the state's planes (slots are validated before the graph runs).
int64_t slot_of(const Tensor& slots, int64_t t, int64_t planes) {
  const int32_t slot = i32_at(slots, t);
  assert(slot >= 0 && slot < planes);
  (void)planes;
  return slot;
}

}  // namespace

// y [d, T]; x [d, T], weight [k, d], state [k - 1, d, S]. Token t, channel c, window
// v = (state[0..k-2, c, s], x[c, t]): y = Σ_j weight[j, c]·v[j] as one fma chain from 0 in
// increasing j; then state[0..k-2, c, s] = v[1..k-1].
void ssm_conv(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& weight = *node.src[1];
  const Tensor& state = *node.src[2];
  const Tensor& slots = *node.src[3];
  const int64_t d = x.ne[0], k = weight.ne[0];
  std::vector<float> window(static_cast<size_t>(k));
  for (int64_t t = 0; t < x.ne[1]; ++t) {
    const int64_t s = slot_of(slots, t, state.ne[2]);
    for (int64_t c = 0; c < d; ++c) {
      for (int64_t j = 0; j + 1 < k; ++j) window[static_cast<size_t>(j)] = f32_at(state, j, c, s);
      window[static_cast<size_t>(k - 1)] = f32_at(x, c, t);
      float sum = 0.0f;
      for (int64_t j = 0; j < k; ++j)
        sum = std::fma(f32_at(weight, j, c), window[static_cast<size_t>(j)], sum);
      f32_at(node, c, t) = sum;
      for (int64_t j = 0; j + 1 < k; ++j) f32_at(state, j, c, s) = window[static_cast<size_t>(j + 1)];
    }
    keep_state_snapshot(state, state.ne[2], slots, t, s);
  }
}

// y [head_dim, H, T]; x [head_dim, H, T], dt [H, T], A [d_state or 1, H], B and C
// [d_state, G, T], state [d_state, head_dim, H, S]. Token t, head h (group g = h / (H / G)),
// element i: dts = softplus(dt), and for n in increasing order
//   s[n] = fma(B[n], x·dts, s[n]·e^(dts·A[n or 0])),  y = fma(s[n], C[n], y)  (y from 0).
void ssm_scan(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& dt = *node.src[1];
  const Tensor& a = *node.src[2];
  const Tensor& b = *node.src[3];
  const Tensor& c = *node.src[4];
  const Tensor& state = *node.src[5];
  const Tensor& slots = *node.src[6];
  const int64_t head_dim = x.ne[0], n_head = x.ne[1], d_state = b.ne[0];
  const int64_t heads_per_group = n_head / b.ne[1];
  const bool a_per_state = a.ne[0] != 1;
  for (int64_t t = 0; t < x.ne[2]; ++t) {
    const int64_t s = slot_of(slots, t, state.ne[3]);
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t g = h / heads_per_group;
      const float raw = f32_at(dt, h, t);
      const float dts = raw > 20.0f ? raw : std::log1p(std::exp(raw));  // softplus, as llama.cpp
      for (int64_t i = 0; i < head_dim; ++i) {
        const float xdt = f32_at(x, i, h, t) * dts;
        float y = 0.0f;
        for (int64_t n = 0; n < d_state; ++n) {
          const float decay = std::exp(dts * f32_at(a, a_per_state ? n : 0, h));
          float& value = f32_at(state, n, i, h, s);
          value = std::fma(f32_at(b, n, g, t), xdt, value * decay);
          y = std::fma(value, f32_at(c, n, g, t), y);
        }
        f32_at(node, i, h, t) = y;
      }
    }
    keep_state_snapshot(state, state.ne[3], slots, t, s);
  }
}

// y [d, T]: token t gets state[:, s] (its sequence's previous x), and state[:, s] becomes x[:, t].
void token_shift(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& state = *node.src[1];
  const Tensor& slots = *node.src[2];
  for (int64_t t = 0; t < x.ne[1]; ++t) {
    const int64_t s = slot_of(slots, t, state.ne[1]);
    for (int64_t i = 0; i < x.ne[0]; ++i) {
      f32_at(node, i, t) = f32_at(state, i, s);
      f32_at(state, i, s) = f32_at(x, i, t);
    }
    keep_state_snapshot(state, state.ne[1], slots, t, s);
  }
}

}  // namespace sinter::reference_backend
