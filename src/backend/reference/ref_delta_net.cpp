// The gated delta rule (Graph::gated_delta_net): the definition the CPU kernels are tested
// against, bit for bit. Tokens run in batch order; each reads and updates the state of its slot
// in place, so a slot's state passes from one of its tokens to the next. Every product and sum is
// written out with the rounding graph.h states (std::fma where it says fma).
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {

// y [d_v·H, T]; q, k [d_k, H_k, T]; v [d_v, H, T]; g, beta [H, T]; state [d_v, d_k, H, S] with
// S[i][j] (key i, value j) at state[j, i, h, s]; slots [T]; params: scale, grouped heads.
void gated_delta_net(const Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor& g = *node.src[3];
  const Tensor& beta = *node.src[4];
  const Tensor& state = *node.src[5];
  const Tensor& slots = *node.src[6];
  const float scale = node.param_float(0);
  const bool grouped = node.params[1] != 0;
  const bool per_key_gate = node.params[2] != 0;  // g [d_k, H, T] (Kimi's KDA)
  const int64_t d_k = q.ne[0], n_head_k = q.ne[1], d_v = v.ne[0], n_head = v.ne[1], tokens = v.ne[2];
  std::vector<float> d(static_cast<size_t>(d_v));
  std::vector<float> decay(static_cast<size_t>(d_k));
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t s = i32_at(slots, t);
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t hk = grouped ? h / (n_head / n_head_k) : h % n_head_k;
      const float e = per_key_gate ? 0.0f : std::exp(f32_at(g, h, t));
      if (per_key_gate) {
        for (int64_t i = 0; i < d_k; ++i) decay[static_cast<size_t>(i)] = std::exp(f32_at(g, i, h, t));
      }
      const float b = f32_at(beta, h, t);
      for (int64_t j = 0; j < d_v; ++j) {  // value j: its column of the state alone
        float sk = 0.0f;
        if (per_key_gate) {
          for (int64_t i = 0; i < d_k; ++i) {
            const float decayed = f32_at(state, j, i, h, s) * decay[static_cast<size_t>(i)];
            sk = std::fma(decayed, f32_at(k, i, hk, t), sk);
          }
          d[static_cast<size_t>(j)] = (f32_at(v, j, h, t) - sk) * b;
        } else {
          for (int64_t i = 0; i < d_k; ++i) sk = std::fma(f32_at(state, j, i, h, s), f32_at(k, i, hk, t), sk);
          const float error = std::fma(-e, sk, f32_at(v, j, h, t));  // v − e·Sᵀk, one rounding
          d[static_cast<size_t>(j)] = error * b;
        }
      }
      for (int64_t j = 0; j < d_v; ++j) {
        float y = 0.0f;
        for (int64_t i = 0; i < d_k; ++i) {  // key i: the sums' order
          float& s_ij = f32_at(state, j, i, h, s);
          const float e_i = per_key_gate ? decay[static_cast<size_t>(i)] : e;
          s_ij = std::fma(f32_at(k, i, hk, t), d[static_cast<size_t>(j)], s_ij * e_i);
          y = std::fma(s_ij, f32_at(q, i, hk, t), y);
        }
        f32_at(node, h * d_v + j, t) = y * scale;
      }
    }
    keep_state_snapshot(state, state.ne[3], slots, t, s);
  }
}

}  // namespace sinter::reference_backend
