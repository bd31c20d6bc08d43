// Every ISA version of the activation functions against the generic one (std::exp): sizes
// 0..2x the vector width + 1, misaligned rows, with and without the up projection, and values
// from tiny to beyond the range where e^-x over- or underflows.
#include "backend/cpu/activation_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sinter/result.h"

namespace sinter::cpu {
namespace {

std::vector<float> values(size_t n, uint32_t seed, float magnitude) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-magnitude, magnitude);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// |a - b| within `ulps` units in the last place of the larger, or both below 1e-35 (silu(x) for
// x < -88 is x / (1 + e^-x) where e^-x overflows to infinity in one version and stops at F32's
// largest finite value in another).
::testing::AssertionResult close_in_ulps(float a, float b, float ulps) {
  const float scale = std::max(std::fabs(a), std::fabs(b));
  const float tolerance = std::max(ulps * scale * std::numeric_limits<float>::epsilon(), 1e-35f);
  if (std::fabs(a - b) <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << " (tolerance " << tolerance << ")";
}

TEST(ActivationKernels, EveryIsaLevelAgreesWithTheGenericSilu) {
  int levels_run = 0;
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const SiluRowFn fn = silu_row_for(level);
    if (fn == nullptr || !isa_level_supported(level)) continue;
    ++levels_run;
    for (float magnitude : {1e-3f, 4.0f, 30.0f, 120.0f}) {
      for (int64_t n = 0; n <= 2 * 16 + 1; ++n) {
        for (size_t misalign : {0u, 1u, 3u}) {
          for (bool gated : {false, true}) {
            SCOPED_TRACE(concat(isa_level_name(level), " n ", n, " magnitude ", magnitude, " misalign ",
                                misalign, gated ? " gated" : ""));
            const auto gate = values(static_cast<size_t>(n) + misalign, static_cast<uint32_t>(n), magnitude);
            const auto up = values(static_cast<size_t>(n) + misalign, static_cast<uint32_t>(n) + 100, 2.0f);
            std::vector<float> expected(static_cast<size_t>(n) + 1, 7.0f), got(expected);
            const float* u = gated ? up.data() + misalign : nullptr;
            silu_row_generic(gate.data() + misalign, u, expected.data(), n);
            fn(gate.data() + misalign, u, got.data(), n);
            EXPECT_EQ(got.back(), 7.0f) << "wrote past the row";
            for (int64_t i = 0; i < n; ++i)
              EXPECT_TRUE(close_in_ulps(got[i], expected[i], 8.0f)) << "at " << i;
          }
        }
      }
    }
  }
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GT(levels_run, 0);
  }
}

TEST(ActivationKernels, SiluAtTheEdges) {
  const std::vector<float> x = {0.0f, -0.0f, 1e-30f, 100.0f, -100.0f, 1e30f, -1e30f, 88.0f, -88.0f};
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const SiluRowFn fn = silu_row_for(level);
    if (fn == nullptr || !isa_level_supported(level)) continue;
    SCOPED_TRACE(isa_level_name(level));
    std::vector<float> out(x.size());
    fn(x.data(), nullptr, out.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_EQ(out[2], 0.5e-30f);
    EXPECT_EQ(out[3], 100.0f);          // silu(x) = x once e^-x vanishes
    EXPECT_NEAR(out[4], 0.0f, 1e-30f);  // -100·e^-100
    EXPECT_EQ(out[5], 1e30f);
    EXPECT_NEAR(out[6], 0.0f, 1e-30f);
    EXPECT_TRUE(close_in_ulps(out[7], 88.0f, 2.0f));
    EXPECT_NEAR(out[8], -88.0f * std::exp(-88.0f), 1e-36f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> special = {nan, inf, -inf};
    fn(special.data(), nullptr, out.data(), 3);
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(out[1], inf);
    EXPECT_TRUE(std::isnan(out[2]) || out[2] == 0.0f);  // -inf / (1 + inf)
  }
}

}  // namespace
}  // namespace sinter::cpu
