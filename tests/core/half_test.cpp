#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sinter {
namespace {

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(0.5f), 0x3800);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16(2.9802322e-8f), 0x0000);  // exactly half of it: ties to even (zero)
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::nanf("")))));
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x0001), 5.9604645e-8f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<f16_bits>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // Between 1.0 (0x3c00) and the next half 1.0009765625 (0x3c01): the midpoint ties to even.
  EXPECT_EQ(f32_to_f16(1.00048828125f), 0x3c00);
  EXPECT_EQ(f32_to_f16(std::nextafter(1.00048828125f, 2.0f)), 0x3c01);  // just above the tie
  // Between 0x3c01 and 0x3c02 the midpoint goes up to the even 0x3c02.
  EXPECT_EQ(f32_to_f16(1.00146484375f), 0x3c02);
}

TEST(Half, BFloat16) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  // 1 + 2^-8 is exactly between two bf16 values: ties to even (down to 1.0).
  EXPECT_EQ(f32_to_bf16(1.00390625f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.01171875f), 0x3f82);  // 1 + 3*2^-8 ties up to even 0x3f82
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

}  // namespace
}  // namespace sinter
