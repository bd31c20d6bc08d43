// F16 and BF16 conversion through the type table: round to nearest, ties to even; overflow to
// infinity; subnormals; NaN stays NaN. Expected bit patterns are worked out from IEEE 754.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tensor/dtype.h"

namespace sinter {
namespace {

uint16_t to_half_bits(DType type, float value) {
  uint16_t bits = 0;
  dtype_traits(type).quantize(&value, &bits, 1);
  return bits;
}

float from_half_bits(DType type, uint16_t bits) {
  float value = 0;
  dtype_traits(type).dequantize(&bits, &value, 1);
  return value;
}

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(HalfRounding, F16TiesToEven) {
  EXPECT_EQ(to_half_bits(DType::F16, 1.0f), 0x3c00);
  EXPECT_EQ(to_half_bits(DType::F16, 1.0f + 0x1p-11f), 0x3c00);             // tie → even mantissa 0
  EXPECT_EQ(to_half_bits(DType::F16, 1.0f + 3 * 0x1p-11f), 0x3c02);         // tie → even mantissa 2
  EXPECT_EQ(to_half_bits(DType::F16, 1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie
  EXPECT_EQ(to_half_bits(DType::F16, -2.5f), 0xc100);
  EXPECT_EQ(to_half_bits(DType::F16, 0.1f), 0x2e66);  // 0.0999755859375
}

TEST(HalfRounding, F16RangeEnds) {
  EXPECT_EQ(to_half_bits(DType::F16, 65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(to_half_bits(DType::F16, 65519.0f), 0x7bff);  // below the tie
  EXPECT_EQ(to_half_bits(DType::F16, 65520.0f), 0x7c00);  // tie → even (infinity)
  EXPECT_EQ(to_half_bits(DType::F16, -1e10f), 0xfc00);
  EXPECT_EQ(to_half_bits(DType::F16, std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(to_half_bits(DType::F16, 0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(to_half_bits(DType::F16, 0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(to_half_bits(DType::F16, 0x1p-25f), 0x0000);  // tie → even (zero)
  EXPECT_EQ(to_half_bits(DType::F16, 1.5f * 0x1p-25f), 0x0001);
  EXPECT_EQ(to_half_bits(DType::F16, 3 * 0x1p-25f), 0x0002);  // tie between 1 and 2 → 2
  EXPECT_EQ(to_half_bits(DType::F16, -0.0f), 0x8000);
  const uint16_t nan = to_half_bits(DType::F16, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
}

TEST(HalfRounding, F16DecodesEveryPatternAndRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float value = from_half_bits(DType::F16, static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_EQ(bits & 0x7c00, 0x7c00u);
      continue;
    }
    ASSERT_EQ(to_half_bits(DType::F16, value), bits) << std::hex << bits;
  }
  EXPECT_EQ(from_half_bits(DType::F16, 0x0001), 0x1p-24f);
  EXPECT_EQ(from_half_bits(DType::F16, 0x7bff), 65504.0f);
  EXPECT_EQ(from_half_bits(DType::F16, 0xc000), -2.0f);
}

TEST(HalfRounding, BF16TiesToEven) {
  EXPECT_EQ(to_half_bits(DType::BF16, 1.0f), 0x3f80);
  EXPECT_EQ(to_half_bits(DType::BF16, 1.0f + 0x1p-8f), 0x3f80);      // tie → even
  EXPECT_EQ(to_half_bits(DType::BF16, 1.0f + 3 * 0x1p-8f), 0x3f82);  // tie → even
  EXPECT_EQ(to_half_bits(DType::BF16, 1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(to_half_bits(DType::BF16, from_bits(0x7f7fffff)), 0x7f80);  // rounds up to infinity
  EXPECT_EQ(to_half_bits(DType::BF16, from_bits(0x00018000)), 0x0002);  // subnormal tie → even
  EXPECT_EQ(to_half_bits(DType::BF16, -0.0f), 0x8000);
  const uint16_t nan = to_half_bits(DType::BF16, from_bits(0x7f800001));  // signalling NaN
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x007f, 0);  // stays NaN (truncation alone would give infinity)
}

TEST(HalfRounding, BF16IsTheTopHalf) {
  for (uint32_t bits = 0; bits < 0x10000; bits += 7) {
    const float value = from_half_bits(DType::BF16, static_cast<uint16_t>(bits));
    EXPECT_EQ(std::bit_cast<uint32_t>(value), bits << 16);
    if (!std::isnan(value)) {
      EXPECT_EQ(to_half_bits(DType::BF16, value), bits);
    }
  }
}

}  // namespace
}  // namespace sinter
