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

// Runs `check(level, kernels)` for every SIMD level this machine has; fails if none ran on a
// machine with AVX2.
template <class Check>
void for_each_simd_level(Check check) {
  int levels_run = 0;
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const ActivationKernels kernels = activation_kernels_for(level);
    if (!kernels || !isa_level_supported(level)) continue;
    ++levels_run;
    SCOPED_TRACE(isa_level_name(level));
    check(kernels);
  }
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GT(levels_run, 0);
  }
}

// GELU's e^-2u, with |2u| growing like x³, magnifies an ulp of u into a relative error of about
// |2u| ulps of the result: the tolerance follows that condition number.
::testing::AssertionResult close_for_gelu(float got, float expected, float x) {
  const double u2 = 1.5957691216 * x * (1.0 + 0.044715 * x * x);
  const double tolerance =
      8.0 * (1.0 + std::fabs(u2)) * std::numeric_limits<float>::epsilon() * std::fabs(expected);
  if (std::fabs(got - expected) <= tolerance + 1e-35) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << " vs " << expected << " at x " << x;
}

// ulps < 0: GELU's tolerance (close_for_gelu).
void expect_gated_rows_agree(GatedRowFn simd, GatedRowFn generic, float ulps) {
  for (float magnitude : {1e-3f, 4.0f, 30.0f, 120.0f}) {
    for (int64_t n = 0; n <= 2 * 16 + 1; ++n) {
      for (size_t misalign : {0u, 1u, 3u}) {
        for (bool gated : {false, true}) {
          SCOPED_TRACE(
              concat("n ", n, " magnitude ", magnitude, " misalign ", misalign, gated ? " gated" : ""));
          const auto x = values(static_cast<size_t>(n) + misalign, static_cast<uint32_t>(n), magnitude);
          const auto up = values(static_cast<size_t>(n) + misalign, static_cast<uint32_t>(n) + 100, 2.0f);
          std::vector<float> expected(static_cast<size_t>(n) + 1, 7.0f), got(expected);
          const float* u = gated ? up.data() + misalign : nullptr;
          generic(x.data() + misalign, u, expected.data(), n);
          simd(x.data() + misalign, u, got.data(), n);
          EXPECT_EQ(got.back(), 7.0f) << "wrote past the row";
          for (int64_t i = 0; i < n; ++i) {
            if (ulps < 0) {
              const float up_i = gated ? up[misalign + static_cast<size_t>(i)] : 1.0f;
              EXPECT_TRUE(close_for_gelu(got[i], expected[i], x[misalign + static_cast<size_t>(i)]))
                  << "at " << i << " up " << up_i;
            } else {
              EXPECT_TRUE(close_in_ulps(got[i], expected[i], ulps)) << "at " << i;
            }
          }
        }
      }
    }
  }
}

TEST(ActivationKernels, EveryIsaLevelAgreesWithTheGenericSilu) {
  for_each_simd_level([](const ActivationKernels& k) {
    expect_gated_rows_agree(k.silu, activation_kernels_generic().silu, 8.0f);
  });
}

TEST(ActivationKernels, EveryIsaLevelAgreesWithTheGenericGelu) {
  for_each_simd_level([](const ActivationKernels& k) {
    expect_gated_rows_agree(k.gelu, activation_kernels_generic().gelu, -1.0f);
  });
}

TEST(ActivationKernels, EveryIsaLevelAgreesWithTheGenericSoftcap) {
  for_each_simd_level([](const ActivationKernels& k) {
    for (float cap : {30.0f, 50.0f, 1.0f}) {
      for (float magnitude : {1e-3f, 4.0f, 30.0f, 500.0f}) {
        for (int64_t n : {0, 1, 7, 8, 9, 16, 17, 33}) {
          SCOPED_TRACE(concat("cap ", cap, " magnitude ", magnitude, " n ", n));
          const auto x = values(static_cast<size_t>(n) + 1, static_cast<uint32_t>(n), magnitude);
          std::vector<float> expected(static_cast<size_t>(n) + 1, 7.0f), got(expected);
          activation_kernels_generic().softcap(x.data() + 1, cap, expected.data(), n);
          k.softcap(x.data() + 1, cap, got.data(), n);
          EXPECT_EQ(got.back(), 7.0f) << "wrote past the row";
          // Absolute: tanh = 1 - 2/(e^2y + 1) loses relative precision near 0, never absolute.
          for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], expected[i], 4e-7f * cap) << "at " << i;
        }
      }
    }
  });
}

// The generic GELU against the tanh formula in double, including x < -2 where the float form
// 0.5·x·(1 + tanh u) would cancel.
TEST(ActivationKernels, GenericGeluMatchesTheFormulaInDouble) {
  const auto x = values(4096, 5, 12.0f);
  std::vector<float> out(x.size());
  activation_kernels_generic().gelu(x.data(), nullptr, out.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double expected = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * v * (1.0 + 0.044715 * v * v)));
    // Below 1e-10 (x < -6) the float exponent itself is a few % off: irrelevant next to x.
    if (std::fabs(expected) > 1e-10) {
      EXPECT_TRUE(close_for_gelu(out[i], static_cast<float>(expected), x[i]));
    } else {
      EXPECT_NEAR(out[i], expected, 1e-10);
    }
  }
}

TEST(ActivationKernels, GeluAndSoftcapAtTheEdges) {
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const ActivationKernels k = activation_kernels_for(level);
    if (!k || !isa_level_supported(level)) continue;
    SCOPED_TRACE(isa_level_name(level));
    const std::vector<float> x = {0.0f, 10.0f, -10.0f, 1e30f, -1e30f, 1.0f};
    std::vector<float> out(x.size());
    k.gelu(x.data(), nullptr, out.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_EQ(out[1], 10.0f);
    EXPECT_NEAR(out[2], 0.0f, 1e-20f);
    EXPECT_EQ(out[3], 1e30f);
    EXPECT_NEAR(out[4], 0.0f, 1e-20f);
    EXPECT_NEAR(out[5], 0.8411920f, 1e-6f);  // 0.5·(1 + tanh(√(2/π)·1.044715))
    k.softcap(x.data(), 30.0f, out.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_NEAR(out[1], 30.0f * std::tanh(1.0f / 3.0f), 1e-5f);
    EXPECT_EQ(out[3], 30.0f);
    EXPECT_EQ(out[4], -30.0f);
  }
}

TEST(ActivationKernels, SiluAtTheEdges) {
  const std::vector<float> x = {0.0f, -0.0f, 1e-30f, 100.0f, -100.0f, 1e30f, -1e30f, 88.0f, -88.0f};
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const SiluRowFn fn = activation_kernels_for(level).silu;
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
