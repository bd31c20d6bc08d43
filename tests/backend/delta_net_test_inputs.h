// Inputs of the gated delta rule (Graph::gated_delta_net) for tests, shaped as Qwen 3.5 makes
// them: q and k of unit length (the model L2-normalizes them), v as a convolution's SiLU output
// gives it, g = −softplus(·)·A ≤ 0 (decays from 0.05 to 1), beta a sigmoid's (0, 1).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/rwkv_test_inputs.h"

namespace sinter::testing {

struct DeltaNetTokens {
  int64_t d_k, d_v, heads_k, heads, tokens;
  std::vector<float> q, k;  // [d_k, heads_k, tokens]
  std::vector<float> v;     // [d_v, heads, tokens]
  std::vector<float> g;     // [heads, tokens]
  std::vector<float> beta;  // [heads, tokens]
};

// Rows of n values scaled to unit length.
inline void normalize_rows(std::vector<float>& x, int64_t n) {
  for (size_t r = 0; r + static_cast<size_t>(n) <= x.size(); r += static_cast<size_t>(n)) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double{x[r + i]} * x[r + i];
    const auto inverse = static_cast<float>(1.0 / std::sqrt(std::max(sum, 1e-12)));
    for (int64_t i = 0; i < n; ++i) x[r + i] *= inverse;
  }
}

inline DeltaNetTokens delta_net_tokens(int64_t d_k, int64_t d_v, int64_t heads_k, int64_t heads,
                                       int64_t tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  DeltaNetTokens x{d_k, d_v, heads_k, heads, tokens, {}, {}, {}, {}, {}};
  const auto qk_count = static_cast<size_t>(d_k * heads_k * tokens);
  x.q = uniform_values(qk_count, rng, -1.0f, 1.0f);
  x.k = uniform_values(qk_count, rng, -1.0f, 1.0f);
  normalize_rows(x.q, d_k);
  normalize_rows(x.k, d_k);
  x.v = uniform_values(static_cast<size_t>(d_v * heads * tokens), rng, -1.0f, 2.0f);
  x.g = uniform_values(static_cast<size_t>(heads * tokens), rng, -3.0f, 0.0f);
  x.beta = uniform_values(static_cast<size_t>(heads * tokens), rng, 0.05f, 0.95f);
  return x;
}

}  // namespace sinter::testing
