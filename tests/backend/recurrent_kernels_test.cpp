// Every SIMD level's recurrent kernels against the generic ones (the scalar definition): the
// convolution gives the same bits. Shapes cover partial vectors of channels, tokens at a stride,
// and slots whose tokens interleave.
#include "backend/cpu/recurrent_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

namespace sinter::cpu {
namespace {

std::vector<float> values(size_t n, uint32_t seed, float magnitude = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-magnitude, magnitude);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The batch's tokens grouped by slot as the op groups them (recurrent_kernels.h): token t on
// slot (t·5 + t / 2) % slots.
struct Runs {
  std::vector<int32_t> tokens, begin, slot;
  SlotRuns view() const {
    return {tokens.data(), begin.data(), slot.data(), static_cast<int64_t>(slot.size())};
  }
};
Runs interleaved_runs(int64_t n_tokens, int64_t n_slots) {
  Runs runs;
  for (int64_t s = 0; s < n_slots; ++s) {
    const auto first = static_cast<int32_t>(runs.tokens.size());
    for (int64_t t = 0; t < n_tokens; ++t) {
      if ((t * 5 + t / 2) % n_slots == s) runs.tokens.push_back(static_cast<int32_t>(t));
    }
    if (static_cast<int32_t>(runs.tokens.size()) > first) {
      runs.begin.push_back(first);
      runs.slot.push_back(static_cast<int32_t>(s));
    }
  }
  runs.begin.push_back(static_cast<int32_t>(runs.tokens.size()));
  return runs;
}

template <class Check>
void for_each_simd_level(Check check) {
  int levels_run = 0;
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const RecurrentKernels kernels = recurrent_kernels_for(level);
    if (!kernels || !isa_level_supported(level)) continue;
    ++levels_run;
    SCOPED_TRACE(isa_level_name(level));
    check(kernels);
  }
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GT(levels_run, 0);
  }
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
           return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
         });
}

// One convolution: channels [begin, end) of d, k taps, T tokens over S slots, x's tokens
// `stride` floats apart.
struct ConvRun {
  std::vector<float> y, state;
};
ConvRun run_conv(const RecurrentKernels& kernels, int64_t d, int64_t k, int64_t n_tokens, int64_t n_slots,
                 int64_t stride, int64_t begin, int64_t end) {
  const std::vector<float> x = values(static_cast<size_t>(stride * n_tokens), 1, 2.0f);
  const std::vector<float> weight = values(static_cast<size_t>(k * d), 2);
  ConvRun r{std::vector<float>(static_cast<size_t>(d * n_tokens), 0.0f),
            values(static_cast<size_t>((k - 1) * d * n_slots), 3, 2.0f)};
  const SsmConvArgs args{x.data(), stride, weight.data(), r.state.data(), r.y.data(), k, d};
  const Runs runs = interleaved_runs(n_tokens, n_slots);
  std::vector<float> scratch(ssm_conv_kernel_floats(k));
  kernels.conv(args, runs.view(), begin, end, scratch.data());
  return r;
}

TEST(RecurrentKernels, ConvEqualsGenericBitForBit) {
  const RecurrentKernels generic = recurrent_kernels_generic();
  for_each_simd_level([&](const RecurrentKernels& kernels) {
    // {d, k, T, S, stride, begin, end}: partial vectors, a share that starts mid-row, one token.
    const int64_t shapes[][7] = {{1, 2, 1, 1, 1, 0, 1},        {7, 4, 5, 3, 9, 0, 7},
                                 {33, 3, 9, 2, 33, 0, 33},     {100, 4, 17, 4, 120, 0, 100},
                                 {100, 4, 6, 2, 100, 32, 100}, {16, 4, 1, 3, 16, 0, 16}};
    for (const auto& s : shapes) {
      SCOPED_TRACE(::testing::Message() << "d " << s[0] << " k " << s[1] << " T " << s[2] << " S " << s[3]);
      const ConvRun want = run_conv(generic, s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
      const ConvRun got = run_conv(kernels, s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
      EXPECT_TRUE(same_bits(got.y, want.y));
      EXPECT_TRUE(same_bits(got.state, want.state));
    }
  });
}

}  // namespace
}  // namespace sinter::cpu
