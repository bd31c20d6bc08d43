// Every ISA level's WKV kernels (rwkv_kernels.h), the generic one included, against the formulas
// of graph.h computed here one value at a time: the same bits for head sizes 1..33 and around the
// vector widths and block sizes (masked tails, blocks of 1 to 4 vectors), runs of 1 to 4 tokens of
// a slot (RWKV-7 sums the next token's sa as it writes the state), misaligned rows and a token
// stride of several heads.
#include "backend/cpu/rwkv_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/rwkv_test_inputs.h"

namespace sinter::cpu {
namespace {

using testing::WkvTokens;

constexpr int64_t kHeads = 3;  // the run is head 1's: rows `stride` = 3·n apart
constexpr int64_t kHead = 1;

// RWKV-6 over head kHead's tokens, one value at a time (state[key · n + value]).
void wkv6_expected(const WkvTokens& x, std::vector<float>& state, std::vector<float>& y) {
  const int64_t n = x.n, stride = n * kHeads;
  for (int64_t t = 0; t < x.tokens; ++t) {
    const int64_t o = t * stride + kHead * n;
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const float kv = x.inputs[1][o + j] * x.inputs[0][o + i];
        sum = std::fma(std::fma(kv, x.u[kHead * n + i], state[i * n + j]), x.inputs[2][o + i], sum);
        state[i * n + j] = std::fma(state[i * n + j], x.inputs[3][o + i], kv);
      }
      y[o + j] = sum;
    }
  }
}

// RWKV-7 likewise (state[key · n + value]).
void wkv7_expected(const WkvTokens& x, std::vector<float>& state, std::vector<float>& y) {
  const int64_t n = x.n, stride = n * kHeads;
  const std::vector<float>&r = x.inputs[0], &w = x.inputs[1], &k = x.inputs[2], &v = x.inputs[3],
        &a = x.inputs[4], &b = x.inputs[5];
  for (int64_t t = 0; t < x.tokens; ++t) {
    const int64_t o = t * stride + kHead * n;
    for (int64_t i = 0; i < n; ++i) {
      float sa = 0.0f;
      for (int64_t j = 0; j < n; ++j) sa = std::fma(a[o + j], state[j * n + i], sa);
      float sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        float& s = state[j * n + i];
        s = std::fma(sa, b[o + j], std::fma(s, w[o + j], v[o + i] * k[o + j]));
        sum = std::fma(s, r[o + j], sum);
      }
      y[o + i] = sum;
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

// Every level this machine runs (generic always).
std::vector<IsaLevel> levels() {
  std::vector<IsaLevel> out;
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (rwkv_kernels_for(level) && isa_level_supported(level)) out.push_back(level);
  }
  return out;
}

std::vector<int64_t> head_sizes() {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 33; ++n) sizes.push_back(n);
  for (int64_t n : {47, 48, 64, 65, 80, 96, 128}) sizes.push_back(n);
  return sizes;
}

void check(bool v7) {
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GE(levels().size(), 2u);  // the SIMD levels were built
  }
  for (IsaLevel level : levels()) {
    const RwkvKernels kernels = rwkv_kernels_for(level);
    for (int64_t n : head_sizes()) {
      for (int64_t count = 1; count <= 4; ++count) {
        const int misalign = static_cast<int>((n + count) % 2);
        SCOPED_TRACE(std::string(isa_level_name(level)) + " n " + std::to_string(n) + " tokens " +
                     std::to_string(count) + " misalign " + std::to_string(misalign));
        const WkvTokens x = testing::wkv_tokens(v7, n, kHeads, count, static_cast<uint32_t>(n * 7 + count));
        std::mt19937 rng(static_cast<uint32_t>(n));
        const std::vector<float> initial =
            testing::uniform_values(static_cast<size_t>(n * n), rng, -0.5f, 0.5f);
        std::vector<float> expected_state = initial;
        std::vector<float> expected_y(static_cast<size_t>(n * kHeads * count), 0.0f);
        v7 ? wkv7_expected(x, expected_state, expected_y) : wkv6_expected(x, expected_state, expected_y);

        std::vector<Placed> in;
        for (const std::vector<float>& values : x.inputs) in.emplace_back(values, misalign);
        Placed u(x.u.empty() ? std::vector<float>(1) : x.u, misalign);
        Placed state(initial, misalign);
        Placed y(std::vector<float>(expected_y.size(), 0.0f), misalign);
        const int64_t o = kHead * n, stride = n * kHeads;
        if (v7) {
          kernels.wkv7(Wkv7Run{in[0].data + o, in[1].data + o, in[2].data + o, in[3].data + o, in[4].data + o,
                               in[5].data + o, state.data, y.data + o, n, count, stride});
        } else {
          kernels.wkv6(Wkv6Run{in[0].data + o, in[1].data + o, in[2].data + o, in[3].data + o, u.data + o,
                               state.data, y.data + o, n, count, stride});
        }
        EXPECT_TRUE(same_bits(y.data, expected_y));  // other heads' rows stay 0
        EXPECT_TRUE(same_bits(state.data, expected_state));
      }
    }
  }
}

TEST(RwkvKernels, Wkv6EveryLevelGivesTheFormulasBits) { check(false); }
TEST(RwkvKernels, Wkv7EveryLevelGivesTheFormulasBits) { check(true); }

}  // namespace
}  // namespace sinter::cpu
