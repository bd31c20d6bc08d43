// Hand-built lattice-type super-blocks with exactly known values: IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M. Grid entries quoted here are the format's constants (first
// value in the lowest byte): IQ2 grid 0 = 0x0808080808080808, 1 = 0x080808080808082b,
// 2 = 0x0808080808081919, 3 = 0x0808080808082b08; IQ2_XS grid 7 = 0x080808080819192b and
// 511 = 0x2b2b2b2b2b2b2b2b; IQ2_S grid 1023 = 0x2b2b2b2b2b2b2b2b; IQ3_XXS grid 0..3 =
// 0x04040404, 0x04040414, 0x04040424, 0x04040c0c; IQ3_S grid 0..3 = 0x01010101, 0x01010103,
// 0x01010105, 0x0101010b and 511 = 0x0f0f0101; IQ1 grid 0 = all -1, 1 = 0xffffffffffffff01,
// 3 = 0xffffffffffff01ff, 2047 = all +1.
#include <gtest/gtest.h>

#include <vector>

#include "handmade_helpers.h"
#include "tensor/blocks.h"

namespace sinter {
namespace {

using testing::dequantize_block;
using Values = std::vector<float>;

constexpr f16_bits kHalfOne = 0x3c00;
constexpr f16_bits kHalfHalf = 0x3800;

Values slice(const Values& values, int begin, int count) {
  return Values(values.begin() + begin, values.begin() + begin + count);
}

// IQ2_XXS sub-block 0: indices 0, 1, 2, 3; sign fields 0, 1, 3, 127 (7 bits each, an odd count
// sets the implied eighth sign); scale 3: 1.0·(0.5 + 3)·0.25 = 0.875. Grid magnitude 8 → 7,
// 43 → 37.625, 25 → 21.875. Other sub-blocks all zero: grid 0, scale 0.125 → 1.0.
TEST(HandmadeIQ, IQ2_XXS) {
  BlockIQ2_XXS block{};
  block.d = kHalfOne;
  auto* bytes = reinterpret_cast<uint8_t*>(block.qs);
  bytes[0] = 0, bytes[1] = 1, bytes[2] = 2, bytes[3] = 3;
  testing::store_le<uint32_t>(bytes + 4, 0u | 1u << 7 | 3u << 14 | 127u << 21 | 3u << 28);
  const auto values = dequantize_block(DType::IQ2_XXS, block);
  EXPECT_EQ(slice(values, 0, 8), Values(8, 7.0f));
  EXPECT_EQ(slice(values, 8, 8), (Values{-37.625f, 7, 7, 7, 7, 7, 7, -7}));
  EXPECT_EQ(slice(values, 16, 8), (Values{-21.875f, -21.875f, 7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(slice(values, 24, 8), (Values{-7, -37.625f, -7, -7, -7, -7, -7, -7}));
  EXPECT_EQ(slice(values, 32, 224), Values(224, 1.0f));
}

// IQ2_XS: per 8 values a uint16 = 9-bit index | 7-bit sign field << 9; scales[0] = 3 | 5 << 4:
// groups 0-1 at 0.875, groups 2-3 at (0.5 + 5)·0.25 = 1.375 (43 → 59.125, 25 → 34.375, 8 → 11).
TEST(HandmadeIQ, IQ2_XS) {
  BlockIQ2_XS block{};
  block.d = kHalfOne;
  block.qs[0] = 0;
  block.qs[1] = static_cast<uint16_t>(1 | 1 << 9);
  block.qs[2] = static_cast<uint16_t>(511 | 3 << 9);
  block.qs[3] = static_cast<uint16_t>(7 | 127 << 9);
  block.scales[0] = 3 | 5 << 4;
  const auto values = dequantize_block(DType::IQ2_XS, block);
  EXPECT_EQ(slice(values, 0, 8), Values(8, 7.0f));
  EXPECT_EQ(slice(values, 8, 8), (Values{-37.625f, 7, 7, 7, 7, 7, 7, -7}));
  EXPECT_EQ(slice(values, 16, 8),
            (Values{-59.125f, -59.125f, 59.125f, 59.125f, 59.125f, 59.125f, 59.125f, 59.125f}));
  EXPECT_EQ(slice(values, 24, 8), (Values{-59.125f, -34.375f, -34.375f, -11, -11, -11, -11, -11}));
  EXPECT_EQ(slice(values, 32, 224), Values(224, 1.0f));
}

// IQ2_S: index = qs[l] | 2 bits of qh[sub] << 8 (group 2: qh bits 4-5 = 3 → 1023); the signs are
// 8 explicit bits in qs[32..63] (so an odd number of negatives is allowed).
TEST(HandmadeIQ, IQ2_S) {
  BlockIQ2_S block{};
  block.d = kHalfOne;
  block.qs[0] = 0, block.qs[1] = 1, block.qs[2] = 0xff, block.qs[3] = 7;
  block.qh[0] = 3 << 4;
  block.qs[32] = 0x00, block.qs[33] = 0x01, block.qs[34] = 0x03, block.qs[35] = 0xff;
  block.scales[0] = 3 | 5 << 4;
  const auto values = dequantize_block(DType::IQ2_S, block);
  EXPECT_EQ(slice(values, 0, 8), Values(8, 7.0f));
  EXPECT_EQ(slice(values, 8, 8), (Values{-37.625f, 7, 7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(slice(values, 16, 8),
            (Values{-59.125f, -59.125f, 59.125f, 59.125f, 59.125f, 59.125f, 59.125f, 59.125f}));
  EXPECT_EQ(slice(values, 24, 8), (Values{-59.125f, -34.375f, -34.375f, -11, -11, -11, -11, -11}));
  EXPECT_EQ(slice(values, 32, 224), Values(224, 1.0f));
}

// IQ3_XXS: two 4-value grid points per 8 values; the sign/scale word of sub-block 0 has fields
// 0, 1 and scale 1: 1.0·(0.5 + 1)·0.5 = 0.75 (4 → 3, 20 → 15, 36 → 27, 12 → 9). Other
// sub-blocks: scale (0.5)·0.5 = 0.25, grid 0 → 1.0.
TEST(HandmadeIQ, IQ3_XXS) {
  BlockIQ3_XXS block{};
  block.d = kHalfOne;
  block.qs[0] = 0, block.qs[1] = 1, block.qs[2] = 2, block.qs[3] = 3;
  testing::store_le<uint32_t>(block.qs + 64, 0u | 1u << 7 | 1u << 28);
  const auto values = dequantize_block(DType::IQ3_XXS, block);
  EXPECT_EQ(slice(values, 0, 8), (Values{3, 3, 3, 3, 15, 3, 3, 3}));
  EXPECT_EQ(slice(values, 8, 8), (Values{-27, 3, 3, 3, 9, 9, 3, -3}));
  EXPECT_EQ(slice(values, 16, 16), Values(16, 3.0f));
  EXPECT_EQ(slice(values, 32, 224), Values(224, 1.0f));
}

// IQ3_S: 9-bit indices (qh[sub] bit k is the ninth bit of the sub-block's k-th point: qs[7] =
// 0xff with qh[0] bit 7 → 511), explicit signs, scale nibbles 2 and 7 for sub-blocks 0 and 1:
// 0.5·(1 + 2·2) = 2.5 and 0.5·(1 + 2·7) = 7.5; the rest 0.5·1.
TEST(HandmadeIQ, IQ3_S) {
  BlockIQ3_S block{};
  block.d = kHalfHalf;
  block.qs[0] = 0, block.qs[1] = 1, block.qs[2] = 2, block.qs[3] = 3, block.qs[7] = 0xff;
  block.qh[0] = 0x80;
  block.signs[1] = 0x81;
  block.scales[0] = 2 | 7 << 4;
  const auto values = dequantize_block(DType::IQ3_S, block);
  EXPECT_EQ(slice(values, 0, 8), (Values{2.5f, 2.5f, 2.5f, 2.5f, 7.5f, 2.5f, 2.5f, 2.5f}));
  EXPECT_EQ(slice(values, 8, 8), (Values{-12.5f, 2.5f, 2.5f, 2.5f, 27.5f, 2.5f, 2.5f, -2.5f}));
  EXPECT_EQ(slice(values, 16, 8), Values(8, 2.5f));
  EXPECT_EQ(slice(values, 24, 8), (Values{2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 37.5f, 37.5f}));
  EXPECT_EQ(slice(values, 32, 32), Values(32, 7.5f));
  EXPECT_EQ(slice(values, 64, 192), Values(192, 0.5f));
}

// IQ1_S sub-block 0: qh = high index bits (group 2: 7 → 2047) | scale 2 << 12 | sign 0x8000:
// 0.5·(2·2 + 1) = 2.5, shift -0.125: -1 → -2.8125, +1 → 2.1875. Others: 0.5·(-1 + 0.125).
TEST(HandmadeIQ, IQ1_S) {
  BlockIQ1_S block{};
  block.d = kHalfHalf;
  block.qs[0] = 0, block.qs[1] = 1, block.qs[2] = 0xff, block.qs[3] = 3;
  block.qh[0] = static_cast<uint16_t>(7 << 6 | 2 << 12 | 0x8000);
  const auto values = dequantize_block(DType::IQ1_S, block);
  EXPECT_EQ(slice(values, 0, 8), Values(8, -2.8125f));
  EXPECT_EQ(slice(values, 8, 8),
            (Values{2.1875f, -2.8125f, -2.8125f, -2.8125f, -2.8125f, -2.8125f, -2.8125f, -2.8125f}));
  EXPECT_EQ(slice(values, 16, 8), Values(8, 2.1875f));
  EXPECT_EQ(slice(values, 24, 8),
            (Values{-2.8125f, 2.1875f, -2.8125f, -2.8125f, -2.8125f, -2.8125f, -2.8125f, -2.8125f}));
  EXPECT_EQ(slice(values, 32, 224), Values(224, -0.4375f));
}

// IQ1_M: d = 0.5 (0x3800) spread over the top nibbles of the four scale words (0, 0, 8, 3);
// word 0 also holds sub-block 0's scales 2 and 5 (bits 0-2, 3-5) and sub-block 1's 1 and 0
// (bits 6-8, 9-11). qh[0] = 0x08: group 0 shift negative; qh[1] = 0x87: group 2 index bits 7
// (→ 2047), group 3 shift negative. Sub-block 0: 0.5·5 = 2.5 and 0.5·11 = 5.5; sub-block 1:
// 1.5 and 0.5; the rest 0.5, all with grid 0 (-1) and shift +0.125.
TEST(HandmadeIQ, IQ1_M) {
  BlockIQ1_M block{};
  const uint16_t words[4] = {static_cast<uint16_t>(2 | 5 << 3 | 1 << 6), 0, 0x8000, 0x3000};
  std::memcpy(block.scales, words, sizeof words);
  block.qs[0] = 0, block.qs[1] = 1, block.qs[2] = 0xff, block.qs[3] = 3;
  block.qh[0] = 0x08;
  block.qh[1] = 0x87;
  const auto values = dequantize_block(DType::IQ1_M, block);
  EXPECT_EQ(slice(values, 0, 8), Values(8, -2.8125f));
  EXPECT_EQ(slice(values, 8, 8),
            (Values{2.8125f, -2.1875f, -2.1875f, -2.1875f, -2.1875f, -2.1875f, -2.1875f, -2.1875f}));
  EXPECT_EQ(slice(values, 16, 8), Values(8, 6.1875f));
  EXPECT_EQ(slice(values, 24, 8),
            (Values{-6.1875f, 4.8125f, -6.1875f, -6.1875f, -6.1875f, -6.1875f, -6.1875f, -6.1875f}));
  EXPECT_EQ(slice(values, 32, 16), Values(16, -1.3125f));
  EXPECT_EQ(slice(values, 48, 16), Values(16, -0.4375f));
  EXPECT_EQ(slice(values, 64, 192), Values(192, -0.4375f));
}

}  // namespace
}  // namespace sinter
