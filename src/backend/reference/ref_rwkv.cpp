// RWKV's WKV recurrences (Graph::rwkv_wkv6, Graph::rwkv_wkv7): the definition the CPU kernels
// are tested against, bit for bit. Tokens run in batch order; each reads and updates the state
// of its slot in place, so a slot's state passes from one of its tokens to the next. Every
// product and sum is written out with the rounding graph.h states (std::fma where it says fma),
// so nothing is left to the compiler's contraction.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {

// y [N·H, T]; k, v, r, w [N, H, T]; u [N, H]; state [N, N, H, S] with S[i][j] (key i, value j)
// at state[j, i, h, s]; slots [T]. Per head and token, llama.cpp's ggml_rwkv_wkv6 (CPU):
//   kv = v[j]·k[i];  y[j] += r[i]·(kv·u[i] + S[i][j]);  S[i][j] = S[i][j]·w[i] + kv.
void rwkv_wkv6(const Tensor& node) {
  const Tensor& k = *node.src[0];
  const Tensor& v = *node.src[1];
  const Tensor& r = *node.src[2];
  const Tensor& u = *node.src[3];
  const Tensor& w = *node.src[4];
  const Tensor& state = *node.src[5];
  const Tensor& slots = *node.src[6];
  const int64_t n = k.ne[0], heads = k.ne[1], tokens = k.ne[2];
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t s = i32_at(slots, t);
    for (int64_t h = 0; h < heads; ++h) {
      std::fill(y.begin(), y.end(), 0.0f);
      for (int64_t i = 0; i < n; ++i) {  // key index: the sums run over it, in order
        const float k_i = f32_at(k, i, h, t), r_i = f32_at(r, i, h, t);
        const float u_i = f32_at(u, i, h), w_i = f32_at(w, i, h, t);
        for (int64_t j = 0; j < n; ++j) {  // value index
          float& s_ij = f32_at(state, j, i, h, s);
          const float kv = f32_at(v, j, h, t) * k_i;
          y[static_cast<size_t>(j)] = std::fma(std::fma(kv, u_i, s_ij), r_i, y[static_cast<size_t>(j)]);
          s_ij = std::fma(s_ij, w_i, kv);
        }
      }
      for (int64_t j = 0; j < n; ++j) f32_at(node, h * n + j, t) = y[static_cast<size_t>(j)];
    }
    keep_state_snapshot(state, state.ne[3], slots, t, s);
  }
}

// y [N·H, T]; r, w, k, v, a, b [N, H, T]; state [N, N, H, S] with S[i][j] (value i, key j) at
// state[i, j, h, s]; slots [T]. Per head and token, llama.cpp's ggml_rwkv_wkv7 (CPU): row i of
// the state (value i) is updated from its own values alone:
//   sa = Σ_j a[j]·S[i][j];  S[i][j] = S[i][j]·w[j] + v[i]·k[j] + sa·b[j];  y[i] = Σ_j S[i][j]·r[j].
void rwkv_wkv7(const Tensor& node) {
  const Tensor& r = *node.src[0];
  const Tensor& w = *node.src[1];
  const Tensor& k = *node.src[2];
  const Tensor& v = *node.src[3];
  const Tensor& a = *node.src[4];
  const Tensor& b = *node.src[5];
  const Tensor& state = *node.src[6];
  const Tensor& slots = *node.src[7];
  const int64_t n = r.ne[0], heads = r.ne[1], tokens = r.ne[2];
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t s = i32_at(slots, t);
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < n; ++i) {  // value index
        float sa = 0.0f;
        for (int64_t j = 0; j < n; ++j) sa = std::fma(f32_at(a, j, h, t), f32_at(state, i, j, h, s), sa);
        const float v_i = f32_at(v, i, h, t);
        float y = 0.0f;
        for (int64_t j = 0; j < n; ++j) {  // key index: the sums run over it, in order
          float& s_ij = f32_at(state, i, j, h, s);
          const float kv = v_i * f32_at(k, j, h, t);
          s_ij = std::fma(sa, f32_at(b, j, h, t), std::fma(s_ij, f32_at(w, j, h, t), kv));
          y = std::fma(s_ij, f32_at(r, j, h, t), y);
        }
        f32_at(node, h * n + i, t) = y;
      }
    }
    keep_state_snapshot(state, state.ne[3], slots, t, s);
  }
}

}  // namespace sinter::reference_backend
