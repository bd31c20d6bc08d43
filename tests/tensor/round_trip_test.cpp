// Quantize → dequantize round trips on fixed-seed data: each type's error (RMS of the error over
// RMS of the input) stays within the bound docs/TYPES.md documents, zero input stays exactly
// zero, quantization is deterministic (also split over threads), and idempotent where the type's
// scale choice is a closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "tensor/convert.h"
#include "tensor/dtype.h"
#include "test_data.h"

namespace sinter {
namespace {

using testing::Distribution;

constexpr int64_t kRowLength = 1024;
constexpr int64_t kRows = 16;

std::vector<uint8_t> quantize(DType type, const std::vector<float>& values, ThreadPool* pool = nullptr) {
  std::vector<uint8_t> bytes(row_bytes(type, kRowLength) * kRows);
  const Status status = quantize_rows(type, values.data(), kRowLength, kRows, bytes.data(), pool);
  EXPECT_TRUE(status.ok()) << status.error().message();
  return bytes;
}

std::vector<float> dequantize(DType type, const std::vector<uint8_t>& bytes) {
  std::vector<float> values(static_cast<size_t>(kRowLength * kRows));
  const Status status = dequantize_rows(type, bytes.data(), kRowLength, kRows, values.data());
  EXPECT_TRUE(status.ok()) << status.error().message();
  return values;
}

// Measured relative RMSE (seed 7, 16 rows of 1024) per distribution, in the order of
// kAllDistributions; docs/TYPES.md lists the same figures. The test allows 5 % more.
struct Bounds {
  DType type;
  double measured[7];
};

// clang-format off
const Bounds kBounds[] = {
    // type          gaussian  uniform   outliers  positive  tiny      zero_blk  constant
    {DType::F32,    {0,        0,        0,        0,        0,        0,        0}},
    {DType::F16,    {0.000206, 0.000185, 0.000220, 0.000209, 0.000206, 0.000205, 0.000196}},
    {DType::BF16,   {0.001655, 0.001481, 0.001697, 0.001655, 0.001667, 0.001678, 0.001760}},
    {DType::Q4_0,   {0.085573, 0.065354, 0.122983, 0.071860, 0.085572, 0.085596, 0.000196}},
    {DType::Q4_1,   {0.078193, 0.061079, 0.118270, 0.030599, 0.078175, 0.077331, 0.000196}},
    {DType::Q5_0,   {0.042300, 0.031463, 0.085043, 0.035649, 0.042299, 0.042235, 0.000196}},
    {DType::Q5_1,   {0.037504, 0.029421, 0.054603, 0.014735, 0.037511, 0.037556, 0.000196}},
    {DType::Q8_0,   {0.005318, 0.003757, 0.011635, 0.004445, 0.005393, 0.005307, 0.000204}},
    {DType::Q8_1,   {0.005318, 0.003757, 0.011635, 0.004445, 0.005393, 0.005307, 0.000204}},
    {DType::Q2_K,   {0.296209, 0.232697, 0.251022, 0.148093, 0.296200, 0.295103, 0.026739}},
    {DType::Q3_K,   {0.150393, 0.125519, 0.115921, 0.119150, 0.150402, 0.148872, 0.015686}},
    {DType::Q4_K,   {0.071195, 0.054844, 0.094340, 0.034721, 0.071452, 0.070034, 0.006446}},
    {DType::Q5_K,   {0.036042, 0.027641, 0.052637, 0.017234, 0.036843, 0.035509, 0.006355}},
    {DType::Q6_K,   {0.017763, 0.013271, 0.033904, 0.014879, 0.020668, 0.017740, 0.003438}},
    {DType::Q8_K,   {0.007044, 0.003903, 0.026665, 0.005687, 0.007044, 0.006421, 0.004034}},
    {DType::IQ4_NL, {0.074898, 0.063858, 0.109673, 0.067193, 0.074897, 0.074336, 0.000140}},
    {DType::IQ4_XS, {0.075636, 0.064523, 0.111960, 0.068110, 0.075835, 0.074992, 0.013440}},
    {DType::TQ1_0,  {0.808158, 0.501720, 0.486182, 0.810935, 0.808101, 0.760784, 0.475375}},
    {DType::TQ2_0,  {0.808158, 0.501720, 0.486182, 0.810935, 0.808101, 0.760784, 0.475375}},
    {DType::MXFP4,  {0.110913, 0.098939, 0.151758, 0.105765, 0.111048, 0.111057, 0.100858}},
};
// clang-format on

TEST(RoundTrip, EveryQuantizableTypeHasABound) {
  for (const auto& traits : all_dtypes()) {
    if (traits.quantize == nullptr) continue;
    bool found = false;
    for (const auto& bound : kBounds) found = found || bound.type == traits.type;
    EXPECT_TRUE(found) << traits.name << " quantizes but has no documented error bound";
  }
}

TEST(RoundTrip, ErrorWithinDocumentedBound) {
  for (const auto& bound : kBounds) {
    const auto& traits = dtype_traits(bound.type);
    for (size_t d = 0; d < std::size(testing::kAllDistributions); ++d) {
      const Distribution distribution = testing::kAllDistributions[d];
      const auto values = testing::make_values(distribution, kRowLength * kRows, 7);
      const double error =
          testing::relative_rmse(values, dequantize(bound.type, quantize(bound.type, values)));
      EXPECT_LE(error, bound.measured[d] * 1.05 + 1e-9)
          << traits.name << " on " << testing::distribution_name(distribution);
    }
  }
}

// A different seed than the bounds were measured on: the bounds describe the type, not one draw.
TEST(RoundTrip, BoundsHoldForAnotherSeed) {
  for (const auto& bound : kBounds) {
    const auto values = testing::make_values(Distribution::kGaussian, kRowLength * kRows, 12345);
    const double error = testing::relative_rmse(values, dequantize(bound.type, quantize(bound.type, values)));
    EXPECT_LE(error, bound.measured[0] * 1.05 + 1e-9) << dtype_name(bound.type);
  }
}

TEST(RoundTrip, ZeroStaysExactlyZero) {
  for (const auto& bound : kBounds) {
    const auto values = testing::make_values(Distribution::kZeroBlocks, kRowLength * kRows, 7);
    const auto restored = dequantize(bound.type, quantize(bound.type, values));
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == 0.0f) {
        ASSERT_EQ(restored[i], 0.0f) << dtype_name(bound.type) << " value " << i;
      }
    }
  }
}

TEST(RoundTrip, DeterministicAndThreadIndependent) {
  ThreadPool pool(2);
  for (const auto& bound : kBounds) {
    const auto values = testing::make_values(Distribution::kOutliers, kRowLength * kRows, 3);
    const auto first = quantize(bound.type, values);
    EXPECT_EQ(first, quantize(bound.type, values)) << dtype_name(bound.type);
    EXPECT_EQ(first, quantize(bound.type, values, &pool)) << dtype_name(bound.type) << " with 2 threads";
  }
}

// Types whose scale is a closed form of the block (its largest magnitude or range) reproduce
// their own blocks; the searched types (K-quants, IQ4) may settle on another scale when given
// already-quantized values, and Q8_K/Q8_1 derive d or s from unrounded values.
TEST(RoundTrip, ClosedFormTypesAreIdempotent) {
  const DType idempotent[] = {DType::F32,  DType::F16,  DType::BF16,  DType::Q4_0,  DType::Q4_1, DType::Q5_0,
                              DType::Q5_1, DType::Q8_0, DType::TQ1_0, DType::TQ2_0, DType::MXFP4};
  for (DType type : idempotent) {
    for (Distribution distribution : testing::kAllDistributions) {
      const auto first = quantize(type, testing::make_values(distribution, kRowLength * kRows, 5));
      EXPECT_EQ(first, quantize(type, dequantize(type, first)))
          << dtype_name(type) << " on " << testing::distribution_name(distribution);
    }
  }
}

// Ternary data (d·{-1, 0, 1} with d = the block's largest magnitude) is what TQ1_0/TQ2_0 store
// exactly.
TEST(RoundTrip, TernaryTypesReproduceTernaryDataExactly) {
  testing::TestRandom random(11);
  std::vector<float> ternary(static_cast<size_t>(kRowLength * kRows));
  for (size_t i = 0; i < ternary.size(); ++i) {
    const int digit = static_cast<int>(random.bits() % 3) - 1;
    ternary[i] = 0.25f * static_cast<float>(i % 256 == 0 ? 1 : digit);  // every block reaches 0.25
  }
  for (DType type : {DType::TQ1_0, DType::TQ2_0}) {
    EXPECT_EQ(dequantize(type, quantize(type, ternary)), ternary) << dtype_name(type);
  }
}

// Infinite, NaN and huge weights are garbage in, but must not be undefined behaviour (the
// sanitizer build checks) nor disturb the blocks around them.
TEST(RoundTrip, NonFiniteValuesStayInTheirBlock) {
  auto values = testing::make_values(Distribution::kGaussian, kRowLength * kRows, 21);
  const float specials[] = {INFINITY, -INFINITY, NAN, 3e38f, -3e38f, 1e-40f};
  for (size_t k = 0; k < std::size(specials); ++k) values[256 * (2 * k + 1) + 5] = specials[k];
  const auto clean = testing::make_values(Distribution::kGaussian, kRowLength * kRows, 21);
  for (const auto& bound : kBounds) {
    const auto restored = dequantize(bound.type, quantize(bound.type, values));
    const auto expected = dequantize(bound.type, quantize(bound.type, clean));
    for (size_t i = 0; i < values.size(); ++i) {
      if ((i / 256) % 2 == 1) continue;  // the 256-value blocks that hold a special value
      ASSERT_EQ(restored[i], expected[i]) << dtype_name(bound.type) << " value " << i;
    }
  }
}

}  // namespace
}  // namespace sinter
