// Every SIMD level's recurrent kernels against the generic ones (the scalar definition): the
// convolution and the Mamba-2 scan give the same bits; the Mamba-1 scan, whose decays use the
// polynomial e^x on SIMD levels, agrees closely. Shapes cover partial vectors of channels and
// state rows, tiles that cross heads, d_state that is no multiple of the width, several groups,
// tokens at a stride, and slots whose tokens interleave.
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

struct ScanShape {
  int64_t d_state, head_dim, n_head, n_group, n_tokens, n_slots;
  bool per_value;
};

struct ScanRun {
  std::vector<float> y, state;
};
ScanRun run_scan(const RecurrentKernels& kernels, const ScanShape& s) {
  const int64_t rows = s.head_dim * s.n_head, bc = s.d_state * s.n_group;
  const int64_t x_stride = rows + 3, bc_stride = 2 * bc + 1;  // tokens further apart than their values
  const std::vector<float> x = values(static_cast<size_t>(x_stride * s.n_tokens), 4, 2.0f);
  const std::vector<float> b = values(static_cast<size_t>(bc_stride * s.n_tokens), 5, 2.0f);
  std::vector<float> dts = values(static_cast<size_t>(s.n_head * s.n_tokens), 6, 2.0f);
  for (float& v : dts) v = std::log1p(std::exp(v));
  std::vector<float> a = values(static_cast<size_t>((s.per_value ? s.d_state : 1) * s.n_head), 7);
  for (float& v : a) v = -std::exp(v);
  std::vector<float> decay;
  if (!s.per_value) {
    for (int64_t e = 0; e < s.n_head * s.n_tokens; ++e) decay.push_back(std::exp(dts[e] * a[e % s.n_head]));
  }
  ScanRun r{std::vector<float>(static_cast<size_t>(rows * s.n_tokens), 0.0f),
            values(static_cast<size_t>(s.d_state * rows * s.n_slots), 8, 2.0f)};
  const SsmScanArgs args{.x = x.data(),
                         .x_stride = x_stride,
                         .dts = dts.data(),
                         .decay = s.per_value ? nullptr : decay.data(),
                         .a = a.data(),
                         .b = b.data(),
                         .b_stride = bc_stride,
                         .c = b.data() + bc,  // C after B in each token
                         .c_stride = bc_stride,
                         .state = r.state.data(),
                         .y = r.y.data(),
                         .d_state = s.d_state,
                         .head_dim = s.head_dim,
                         .n_head = s.n_head,
                         .n_group = s.n_group};
  const Runs runs = interleaved_runs(s.n_tokens, s.n_slots);
  std::vector<float> scratch(ssm_scan_kernel_floats(s.d_state));
  const int64_t tiles = s.n_group * ssm_scan_tiles_per_group(args, kernels.lanes);
  // In two shares, as two threads would run them.
  kernels.scan(args, runs.view(), 0, tiles / 2, scratch.data());
  kernels.scan(args, runs.view(), tiles / 2, tiles, scratch.data());
  return r;
}

const ScanShape kScanShapes[] = {
    {16, 4, 4, 2, 5, 3, false},  {7, 3, 6, 3, 9, 2, false},  {128, 64, 2, 1, 3, 2, false},
    {33, 17, 2, 1, 4, 2, false}, {24, 8, 6, 2, 1, 4, false}, {16, 1, 37, 1, 7, 3, true},
    {5, 1, 20, 4, 6, 3, true},   {17, 2, 9, 3, 2, 1, true},  {16, 1, 64, 1, 1, 2, true},
};

TEST(RecurrentKernels, ScanEqualsGeneric) {
  const RecurrentKernels generic = recurrent_kernels_generic();
  for_each_simd_level([&](const RecurrentKernels& kernels) {
    for (const ScanShape& s : kScanShapes) {
      SCOPED_TRACE(::testing::Message() << "d_state " << s.d_state << " head_dim " << s.head_dim << " heads "
                                        << s.n_head << " groups " << s.n_group << " T " << s.n_tokens
                                        << (s.per_value ? " Mamba-1" : " Mamba-2"));
      const ScanRun want = run_scan(generic, s);
      const ScanRun got = run_scan(kernels, s);
      if (!s.per_value) {
        EXPECT_TRUE(same_bits(got.y, want.y));
        EXPECT_TRUE(same_bits(got.state, want.state));
        continue;
      }
      // e^x within ~1 ulp per decay; the states decay, so the error stays of that order.
      for (size_t i = 0; i < want.y.size(); ++i)
        EXPECT_NEAR(got.y[i], want.y[i], 1e-5 * (1 + std::fabs(want.y[i]))) << "y " << i;
      for (size_t i = 0; i < want.state.size(); ++i)
        EXPECT_NEAR(got.state[i], want.state[i], 1e-5 * (1 + std::fabs(want.state[i]))) << "state " << i;
    }
  });
}

}  // namespace
}  // namespace sinter::cpu
