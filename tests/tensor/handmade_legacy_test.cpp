// Hand-built 32-value blocks with exactly known values: Q4_1, Q5_0, Q5_1, Q8_1, IQ4_NL, MXFP4.
// Value j of a block is the low nibble of qs[j] for j < 16 and the high nibble of qs[j - 16]
// otherwise; the 5-bit types put the fifth bit of value j in bit j of the little-endian qh.
#include <gtest/gtest.h>

#include "handmade_helpers.h"
#include "tensor/blocks.h"

namespace sinter {
namespace {

using testing::dequantize_block;

constexpr f16_bits kHalfOne = 0x3c00;       // 1.0
constexpr f16_bits kHalfHalf = 0x3800;      // 0.5
constexpr f16_bits kHalfQuarter = 0x3400;   // 0.25
constexpr f16_bits kHalfMinusTwo = 0xc000;  // -2.0
constexpr f16_bits kHalfTwo = 0x4000;       // 2.0

TEST(HandmadeLegacy, Q4_1ScaleTimesNibblePlusMin) {
  BlockQ4_1 block{};
  block.d = kHalfHalf;
  block.m = kHalfMinusTwo;
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const auto values = dequantize_block(DType::Q4_1, block);
  EXPECT_EQ(values[0], -2.0f);   // 0.5·0 - 2
  EXPECT_EQ(values[15], 5.5f);   // 0.5·15 - 2
  EXPECT_EQ(values[16], 5.5f);   // high nibble of qs[0] = 15
  EXPECT_EQ(values[31], -2.0f);  // high nibble of qs[15] = 0
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(values[j], 0.5f * static_cast<float>(j) - 2.0f);
    EXPECT_EQ(values[j + 16], 0.5f * static_cast<float>(15 - j) - 2.0f);
  }
}

// qh = 0xa5a5f00f: bits 0..3 and 12..15 set in the low half, the pattern 10100101 twice above.
TEST(HandmadeLegacy, Q5_0FifthBitFromQh) {
  BlockQ5_0 block{};
  block.d = kHalfOne;
  testing::store_le<uint32_t>(block.qh, 0xa5a5f00fu);
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const auto values = dequantize_block(DType::Q5_0, block);
  EXPECT_EQ(values[0], 0.0f);    // nibble 0, qh bit 0 set: 16 - 16
  EXPECT_EQ(values[4], -12.0f);  // nibble 4, qh bit 4 clear: 4 - 16
  EXPECT_EQ(values[13], 13.0f);  // nibble 13, qh bit 13 set: 29 - 16
  EXPECT_EQ(values[16], 15.0f);  // nibble 15 (high of qs[0]), qh bit 16 set: 31 - 16
  EXPECT_EQ(values[17], -2.0f);  // nibble 14, qh bit 17 clear: 14 - 16
  EXPECT_EQ(values[31], 0.0f);   // nibble 0 (high of qs[15]), qh bit 31 set: 16 - 16
}

TEST(HandmadeLegacy, Q5_1FifthBitAndMin) {
  BlockQ5_1 block{};
  block.d = kHalfQuarter;
  block.m = kHalfOne;
  testing::store_le<uint32_t>(block.qh, 0xa5a5f00fu);
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const auto values = dequantize_block(DType::Q5_1, block);
  EXPECT_EQ(values[0], 5.0f);    // (0 + 16)·0.25 + 1
  EXPECT_EQ(values[4], 2.0f);    // 4·0.25 + 1
  EXPECT_EQ(values[16], 8.75f);  // 31·0.25 + 1
  EXPECT_EQ(values[17], 4.5f);   // 14·0.25 + 1
}

TEST(HandmadeLegacy, Q8_1IgnoresTheSumWhenDequantizing) {
  BlockQ8_1 block{};
  block.d = kHalfTwo;
  block.s = 0x7bff;  // any value: s only serves dot products
  for (int j = 0; j < 32; ++j) block.qs[j] = static_cast<int8_t>(j - 16);
  const auto values = dequantize_block(DType::Q8_1, block);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(values[j], 2.0f * static_cast<float>(j - 16));
}

// The IQ4_NL levels, as the format defines them.
constexpr float kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

TEST(HandmadeLegacy, IQ4_NLNonLinearLevels) {
  BlockIQ4_NL block{};
  block.d = kHalfHalf;
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  const auto values = dequantize_block(DType::IQ4_NL, block);
  EXPECT_EQ(values[0], -63.5f);
  EXPECT_EQ(values[16], 56.5f);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(values[j], 0.5f * kLevels[j]);
    EXPECT_EQ(values[j + 16], 0.5f * kLevels[15 - j]);
  }
}

// E2M1 nibbles (sign, 2-bit exponent, 1-bit mantissa) times 2^(e - 127).
constexpr float kE2M1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};

TEST(HandmadeLegacy, MXFP4SharedExponent) {
  for (const auto& [exponent, scale] :
       {std::pair{127, 1.0f}, std::pair{130, 8.0f}, std::pair{120, 1.0f / 128}}) {
    BlockMXFP4 block{};
    block.e = static_cast<uint8_t>(exponent);
    for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    const auto values = dequantize_block(DType::MXFP4, block);
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(values[j], kE2M1[j] * scale) << "e " << exponent << " value " << j;
      EXPECT_EQ(values[j + 16], kE2M1[15 - j] * scale) << "e " << exponent << " value " << j + 16;
    }
  }
}

}  // namespace
}  // namespace sinter
