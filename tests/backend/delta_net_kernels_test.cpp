// Every ISA level's gated delta-rule kernel (delta_net_kernels.h), the generic one included,
// against the formula of graph.h computed here one value at a time: the same bits for head sizes
// 1..33 and around the vector widths and block sizes (masked tails, blocks of 1 to 4 vectors),
// keys and values of different sizes, runs of 1 to 4 tokens of a slot, misaligned rows and token
// strides of several heads.
#include "backend/cpu/delta_net_kernels.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/delta_net_test_inputs.h"

namespace sinter::cpu {
namespace {

using testing::DeltaNetTokens;

constexpr int64_t kHeadsK = 2, kHeads = 3;  // the run is value head 1's, reading key head 1
constexpr int64_t kHead = 1;
constexpr float kScale = 0.3f;

// The formula over value head kHead's tokens, one value at a time (state[key · d_v + value]).
// `per_key`: x.g holds a gate per key index [d_k, H, T] (Kimi's KDA, graph.h).
void expected_run(const DeltaNetTokens& x, std::vector<float>& state, std::vector<float>& y,
                  bool per_key = false) {
  const int64_t d_k = x.d_k, d_v = x.d_v;
  std::vector<float> d(static_cast<size_t>(d_v)), decay(static_cast<size_t>(d_k));
  for (int64_t t = 0; t < x.tokens; ++t) {
    const float* q = x.q.data() + (t * kHeadsK + kHead) * d_k;
    const float* k = x.k.data() + (t * kHeadsK + kHead) * d_k;
    const float* v = x.v.data() + (t * kHeads + kHead) * d_v;
    const float e = per_key ? 0.0f : std::exp(x.g[static_cast<size_t>(t * kHeads + kHead)]);
    for (int64_t i = 0; i < d_k && per_key; ++i)
      decay[static_cast<size_t>(i)] = std::exp(x.g[static_cast<size_t>((t * kHeads + kHead) * d_k + i)]);
    const float beta = x.beta[static_cast<size_t>(t * kHeads + kHead)];
    for (int64_t j = 0; j < d_v; ++j) {
      float sum = 0.0f;
      for (int64_t i = 0; i < d_k; ++i) {
        const float s = state[static_cast<size_t>(i * d_v + j)];
        sum = per_key ? std::fma(s * decay[static_cast<size_t>(i)], k[i], sum) : std::fma(s, k[i], sum);
      }
      d[static_cast<size_t>(j)] = per_key ? (v[j] - sum) * beta : std::fma(-e, sum, v[j]) * beta;
    }
    for (int64_t j = 0; j < d_v; ++j) {
      float out = 0.0f;
      for (int64_t i = 0; i < d_k; ++i) {
        float& s = state[static_cast<size_t>(i * d_v + j)];
        s = std::fma(k[i], d[static_cast<size_t>(j)], s * (per_key ? decay[static_cast<size_t>(i)] : e));
        out = std::fma(s, q[i], out);
      }
      y[static_cast<size_t>((t * kHeads + kHead) * d_v + j)] = out * kScale;
    }
  }
}

// `values` copied `misalign` floats past the start of a fresh vector: the copy's data.
struct Placed {
  std::vector<float> storage;
  float* data;
  Placed(const std::vector<float>& values, int misalign) : storage(values.size() + 1) {
    data = storage.data() + misalign;
    std::copy(values.begin(), values.end(), data);
  }
};

::testing::AssertionResult same_bits(const float* got, const std::vector<float>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(expected[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs " << expected[i];
  }
  return ::testing::AssertionSuccess();
}

std::vector<IsaLevel> levels() {
  std::vector<IsaLevel> out;
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (delta_net_kernels_for(level) && isa_level_supported(level)) out.push_back(level);
  }
  return out;
}

// {d_k, d_v}: equal sizes 1..33 and around the widths and blocks, then unequal ones.
std::vector<std::pair<int64_t, int64_t>> head_sizes() {
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t n = 1; n <= 33; ++n) sizes.emplace_back(n, n);
  for (int64_t n : {47, 48, 64, 65, 80, 96, 128}) sizes.emplace_back(n, n);
  for (auto kv : {std::pair<int64_t, int64_t>{16, 33}, {33, 16}, {128, 64}, {5, 70}}) sizes.push_back(kv);
  return sizes;
}

TEST(DeltaNetKernels, EveryLevelGivesTheFormulasBits) {
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GE(levels().size(), 2u);  // the SIMD levels were built
  }
  for (IsaLevel level : levels()) {
    const DeltaNetKernels kernels = delta_net_kernels_for(level);
    for (const auto& [d_k, d_v] : head_sizes()) {
      for (int64_t count = 1; count <= 4; ++count) {
        const int misalign = static_cast<int>((d_k + d_v + count) % 2);
        SCOPED_TRACE(std::string(isa_level_name(level)) + " d_k " + std::to_string(d_k) + " d_v " +
                     std::to_string(d_v) + " tokens " + std::to_string(count) + " misalign " +
                     std::to_string(misalign));
        const DeltaNetTokens x = testing::delta_net_tokens(d_k, d_v, kHeadsK, kHeads, count,
                                                           static_cast<uint32_t>(d_k * 7 + d_v + count));
        std::mt19937 rng(static_cast<uint32_t>(d_k + 3 * d_v));
        const std::vector<float> initial =
            testing::uniform_values(static_cast<size_t>(d_k * d_v), rng, -0.5f, 0.5f);
        std::vector<float> expected_state = initial;
        std::vector<float> expected_y(static_cast<size_t>(d_v * kHeads * count), 0.0f);
        expected_run(x, expected_state, expected_y);

        Placed q(x.q, misalign), k(x.k, misalign), v(x.v, misalign), g(x.g, misalign), beta(x.beta, misalign);
        Placed state(initial, misalign);
        Placed y(std::vector<float>(expected_y.size(), 0.0f), misalign);
        kernels.run(DeltaNetRun{q.data + kHead * d_k, k.data + kHead * d_k, v.data + kHead * d_v,
                                g.data + kHead, beta.data + kHead, state.data, y.data + kHead * d_v, d_k, d_v,
                                count, kHeadsK * d_k, kHeadsK * d_k, kHeads * d_v, kHeads, kHeads,
                                kHeads * d_v, kScale});
        EXPECT_TRUE(same_bits(y.data, expected_y));  // other heads' rows stay 0
        EXPECT_TRUE(same_bits(state.data, expected_state));
      }
    }
  }
}

// Kimi's KDA: a gate per key index, every level the formula's bits (the sizes above, 1..4 tokens).
TEST(DeltaNetKernels, PerKeyGatesGiveTheFormulasBits) {
  for (IsaLevel level : levels()) {
    const DeltaNetKernels kernels = delta_net_kernels_for(level);
    for (const auto& [d_k, d_v] : head_sizes()) {
      for (int64_t count = 1; count <= 4; ++count) {
        SCOPED_TRACE(std::string(isa_level_name(level)) + " d_k " + std::to_string(d_k) + " d_v " +
                     std::to_string(d_v) + " tokens " + std::to_string(count));
        DeltaNetTokens x = testing::delta_net_tokens(d_k, d_v, kHeadsK, kHeads, count,
                                                     static_cast<uint32_t>(d_k * 5 + d_v + count));
        std::mt19937 rng(static_cast<uint32_t>(2 * d_k + d_v));
        x.g = testing::uniform_values(static_cast<size_t>(d_k * kHeads * count), rng, -1.5f, 0.0f);
        const std::vector<float> initial =
            testing::uniform_values(static_cast<size_t>(d_k * d_v), rng, -0.5f, 0.5f);
        std::vector<float> expected_state = initial;
        std::vector<float> expected_y(static_cast<size_t>(d_v * kHeads * count), 0.0f);
        expected_run(x, expected_state, expected_y, /*per_key=*/true);
        std::vector<float> state = initial, y(expected_y.size(), 0.0f);
        DeltaNetRun run{x.q.data() + kHead * d_k,
                        x.k.data() + kHead * d_k,
                        x.v.data() + kHead * d_v,
                        x.g.data() + kHead * d_k,
                        x.beta.data() + kHead,
                        state.data(),
                        y.data() + kHead * d_v,
                        d_k,
                        d_v,
                        count,
                        kHeadsK * d_k,
                        kHeadsK * d_k,
                        kHeads * d_v,
                        kHeads * d_k,
                        kHeads,
                        kHeads * d_v,
                        kScale};
        run.per_key_gate = true;
        kernels.run(run);
        EXPECT_TRUE(same_bits(y.data(), expected_y));
        EXPECT_TRUE(same_bits(state.data(), expected_state));
      }
    }
  }
}

// A state that decays fully (g = −∞ would be e = 0; here e^−100) keeps only the new write:
// y = (k·q)·beta·v·scale for a fresh k ⊗ v, which the formula gives whatever the old state.
TEST(DeltaNetKernels, AFullDecayForgetsTheOldState) {
  for (IsaLevel level : levels()) {
    SCOPED_TRACE(isa_level_name(level));
    const int64_t n = 20;
    testing::DeltaNetTokens x = testing::delta_net_tokens(n, n, kHeadsK, kHeads, 1, 5);
    for (float& g : x.g) g = -100.0f;
    std::vector<float> state(static_cast<size_t>(n * n), 7.0f), y(static_cast<size_t>(n * kHeads), 0.0f);
    delta_net_kernels_for(level).run(
        DeltaNetRun{x.q.data() + kHead * n, x.k.data() + kHead * n, x.v.data() + kHead * n,
                    x.g.data() + kHead, x.beta.data() + kHead, state.data(), y.data() + kHead * n, n, n, 1,
                    kHeadsK * n, kHeadsK * n, kHeads * n, kHeads, kHeads, kHeads * n, 1.0f});
    double kq = 0.0;
    for (int64_t i = 0; i < n; ++i)
      kq += double{x.k[static_cast<size_t>(kHead * n + i)]} * x.q[static_cast<size_t>(kHead * n + i)];
    const double beta = x.beta[kHead];
    for (int64_t j = 0; j < n; ++j) {
      const double expected = kq * beta * x.v[static_cast<size_t>(kHead * n + j)];
      EXPECT_NEAR(y[static_cast<size_t>(kHead * n + j)], expected, 1e-5) << "value " << j;
    }
  }
}

}  // namespace
}  // namespace sinter::cpu
