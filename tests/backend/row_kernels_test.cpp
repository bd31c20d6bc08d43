// Every ISA version of the row kernels against the generic one, bit for bit: sizes 0..2x the
// vector width + 1, misaligned rows, and values across F16's range (subnormals, rounding ties,
// overflow to infinity, NaN). The generic sum of squares against its documented order.
#include "backend/cpu/row_kernels.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/half.h"
#include "sinter/result.h"

namespace sinter::cpu {
namespace {

// Values of every kind an F16 conversion meets, in a random order: normal values of many
// magnitudes, F16 subnormals and values below them, exact ties between two F16 values, values
// around 65504/65520 (the largest F16 and where rounding reaches infinity), ±0, ±inf and NaNs
// with payloads.
std::vector<float> mixed_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> kind(0, 9), exponent(-30, 17);
  std::vector<float> v(n);
  for (auto& x : v) {
    switch (kind(rng)) {
      case 0: x = unit(rng) * 6e-5f; break;  // F16 subnormals
      case 1: x = unit(rng) * 3e-8f; break;  // at and below half the smallest subnormal
      case 2: {                              // an exact tie: an F16 value plus half its last place
        const uint32_t bits =
            std::bit_cast<uint32_t>(std::ldexp(1.0f + std::fabs(unit(rng)), exponent(rng) % 15));
        x = std::bit_cast<float>((bits & ~0x1fffu) | 0x1000u);
        break;
      }
      case 3: x = 65504.0f + 32.0f * unit(rng); break;
      case 4: x = kind(rng) < 5 ? std::numeric_limits<float>::infinity() : -0.0f; break;
      case 5: x = std::bit_cast<float>(0x7f800001u + static_cast<uint32_t>(rng() % 0x7fffffu)); break;  // NaN
      default: x = std::ldexp(unit(rng), exponent(rng)); break;
    }
  }
  return v;
}

TEST(RowKernels, EveryIsaLevelWritesTheReferencesF16Bits) {
  int levels_run = 0;
  const QuantizeRowFn reference = dtype_traits(DType::F16).quantize;
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const RowKernels k = row_kernels_for(level);
    if (!k || !isa_level_supported(level)) continue;
    ++levels_run;
    for (int64_t n = 0; n <= 2 * 16 + 1; ++n) {
      for (size_t misalign : {0u, 1u, 3u}) {
        for (uint32_t seed : {1u, 2u, 3u}) {
          SCOPED_TRACE(concat(isa_level_name(level), " n ", n, " misalign ", misalign, " seed ", seed));
          const auto in =
              mixed_values(static_cast<size_t>(n) + misalign, seed * 100 + static_cast<uint32_t>(n));
          // One spare element past the row (and a misaligned start) in the output too.
          std::vector<uint8_t> expected(2 * static_cast<size_t>(n) + 2 + misalign, 0xa5), got(expected);
          reference(in.data() + misalign, expected.data() + misalign, n);
          k.to_f16(in.data() + misalign, got.data() + misalign, n);
          EXPECT_EQ(got, expected);
        }
      }
    }
  }
  EXPECT_GE(levels_run, isa_level_supported(IsaLevel::kAvx2) ? 2 : 1);
}

TEST(RowKernels, F16RoundingAtTheEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in = {65504.0f,
                                 65519.0f,
                                 65520.0f,
                                 -65520.0f,
                                 1.0f + 0x1p-11f,
                                 1.0f + 0x1p-10f + 0x1p-11f,
                                 0x1p-24f,
                                 0x1p-25f,
                                 0x1.8p-25f,
                                 -0.0f,
                                 inf,
                                 -std::numeric_limits<float>::quiet_NaN()};
  const std::vector<uint16_t> expected = {0x7bff, 0x7bff, 0x7c00, 0xfc00, 0x3c00, 0x3c02,
                                          0x0001, 0x0000, 0x0001, 0x8000, 0x7c00, 0xfe00};
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const RowKernels k = row_kernels_for(level);
    if (!k || !isa_level_supported(level)) continue;
    SCOPED_TRACE(isa_level_name(level));
    // Repeated to fill whole vectors, so that the SIMD path (not the tail) converts them.
    std::vector<float> row;
    for (int r = 0; r < 4; ++r) row.insert(row.end(), in.begin(), in.end());
    std::vector<uint16_t> out(row.size());
    k.to_f16(row.data(), out.data(), static_cast<int64_t>(row.size()));
    for (size_t i = 0; i < row.size(); ++i) EXPECT_EQ(out[i], expected[i % in.size()]) << "at " << i;
  }
}

TEST(RowKernels, EveryIsaLevelSumsSquaresInTheGenericOrder) {
  int levels_run = 0;
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const RowKernels k = row_kernels_for(level);
    if (!k || !isa_level_supported(level)) continue;
    ++levels_run;
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 2048, 2049}) {
      for (size_t misalign : {0u, 1u, 3u}) {
        SCOPED_TRACE(concat(isa_level_name(level), " n ", n, " misalign ", misalign));
        std::mt19937 rng(static_cast<uint32_t>(n));
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::uniform_int_distribution<int> exponent(-40, 40);
        std::vector<float> x(static_cast<size_t>(n) + misalign);
        for (auto& v : x) v = std::ldexp(dist(rng), exponent(rng));  // wide range: order matters
        const double expected = sum_squares_generic(x.data() + misalign, n);
        const double got = k.sum_squares(x.data() + misalign, n);
        EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(expected))
            << got << " vs " << expected;
      }
    }
  }
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GT(levels_run, 0);
  }
}

TEST(RowKernels, GenericSumOfSquaresFollowsTheDocumentedOrder) {
  std::vector<float> x(21);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::ldexp(1.0f + 0.37f * static_cast<float>(i), static_cast<int>(i % 7) * 9 - 27);
  double s[8] = {};
  for (size_t i = 0; i < 16; ++i) s[i % 8] += static_cast<double>(x[i] * x[i]);
  double expected = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
  for (size_t i = 16; i < x.size(); ++i) expected += static_cast<double>(x[i] * x[i]);
  EXPECT_EQ(sum_squares_generic(x.data(), static_cast<int64_t>(x.size())), expected);
  EXPECT_EQ(sum_squares_generic(x.data(), 0), 0.0);
  EXPECT_EQ(
      sum_squares_generic(x.data(), 3),
      static_cast<double>(x[0] * x[0]) + static_cast<double>(x[1] * x[1]) + static_cast<double>(x[2] * x[2]));
}

TEST(RowKernels, RowWriterConvertsF16WithTheSelectedKernelAndOtherTypesWithTheirQuantizer) {
  EXPECT_EQ(row_writer(DType::F16), row_kernels().to_f16);
  EXPECT_EQ(row_writer(DType::BF16), dtype_traits(DType::BF16).quantize);
  EXPECT_EQ(row_writer(DType::F32), dtype_traits(DType::F32).quantize);
  EXPECT_EQ(row_writer(DType::Q8_0), dtype_traits(DType::Q8_0).quantize);
}

}  // namespace
}  // namespace sinter::cpu
