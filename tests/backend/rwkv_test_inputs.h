// Inputs of the WKV ops (Graph::rwkv_wkv6 / rwkv_wkv7) for tests, shaped as a model makes them, so
// that states stay bounded over many tokens: decay factors in (0, 1) computed as llama.cpp's
// graphs compute them, and for RWKV-7 a = −kk, b = kk·α with kk a unit vector per head and α in
// (0, 1) (the update then contracts the state). Values follow from the seed alone.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace sinter::testing {

// Per-token inputs [N, H, T] in the op's source order: RWKV-6 k, v, r, w (u apart, [N, H]);
// RWKV-7 r, w, k, v, a, b.
struct WkvTokens {
  int64_t n = 0, heads = 0, tokens = 0;
  std::vector<std::vector<float>> inputs;
  std::vector<float> u;  // RWKV-6's time_first [N, H]

  // The tokens listed, in that order (u kept).
  WkvTokens select(const std::vector<int64_t>& which) const {
    WkvTokens out{n, heads, static_cast<int64_t>(which.size()), {}, u};
    const int64_t row = n * heads;
    for (const std::vector<float>& in : inputs) {
      std::vector<float>& part = out.inputs.emplace_back();
      for (int64_t t : which) part.insert(part.end(), in.begin() + t * row, in.begin() + (t + 1) * row);
    }
    return out;
  }
};

inline std::vector<float> uniform_values(size_t count, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// k, v, r in [−1, 1]; w = exp(−exp(x)), x in [−4, 1]; u in [−1, 1].
inline WkvTokens wkv6_tokens(int64_t n, int64_t heads, int64_t tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto count = static_cast<size_t>(n * heads * tokens);
  WkvTokens out{n, heads, tokens, {}, {}};
  for (int i = 0; i < 3; ++i) out.inputs.push_back(uniform_values(count, rng, -1.0f, 1.0f));
  std::vector<float> w = uniform_values(count, rng, -4.0f, 1.0f);
  for (float& x : w) x = std::exp(-std::exp(x));
  out.inputs.push_back(w);
  out.u = uniform_values(static_cast<size_t>(n * heads), rng, -1.0f, 1.0f);
  return out;
}

// r, k, v in [−1, 1]; w = exp(−0.606531·sigmoid(x)), x in [−4, 4]; a = −kk, b = kk·α.
inline WkvTokens wkv7_tokens(int64_t n, int64_t heads, int64_t tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto count = static_cast<size_t>(n * heads * tokens);
  std::vector<float> r = uniform_values(count, rng, -1.0f, 1.0f);
  std::vector<float> w = uniform_values(count, rng, -4.0f, 4.0f);
  for (float& x : w) x = std::exp(-0.606531f / (1.0f + std::exp(-x)));
  std::vector<float> k = uniform_values(count, rng, -1.0f, 1.0f);
  std::vector<float> v = uniform_values(count, rng, -1.0f, 1.0f);
  std::vector<float> kk = uniform_values(count, rng, -1.0f, 1.0f);
  const std::vector<float> alpha = uniform_values(count, rng, 0.0f, 1.0f);
  std::vector<float> a(count), b(count);
  for (size_t row = 0; row < count; row += static_cast<size_t>(n)) {
    float norm = 0.0f;
    for (int64_t i = 0; i < n; ++i) norm += kk[row + i] * kk[row + i];
    norm = std::sqrt(norm) + 1e-12f;
    for (int64_t i = 0; i < n; ++i) {
      a[row + i] = -kk[row + i] / norm;
      b[row + i] = kk[row + i] / norm * alpha[row + i];
    }
  }
  return {n, heads, tokens, {r, w, k, v, a, b}, {}};
}

inline WkvTokens wkv_tokens(bool v7, int64_t n, int64_t heads, int64_t tokens, uint32_t seed) {
  return v7 ? wkv7_tokens(n, heads, tokens, seed) : wkv6_tokens(n, heads, tokens, seed);
}

// Each token's slot among `slots`: runs of 1 to 3 tokens of one slot, in an order that
// interleaves the slots, and (with 3 or more slots) the last slot never used.
inline std::vector<int32_t> interleaved_slots(int64_t tokens, int64_t slots, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t used = slots >= 3 ? slots - 1 : slots;
  std::vector<int32_t> out;
  while (static_cast<int64_t>(out.size()) < tokens) {
    const auto slot = static_cast<int32_t>(rng() % static_cast<uint32_t>(used));
    const int64_t run = 1 + static_cast<int64_t>(rng() % 3);
    for (int64_t i = 0; i < run && static_cast<int64_t>(out.size()) < tokens; ++i) out.push_back(slot);
  }
  return out;
}

}  // namespace sinter::testing
