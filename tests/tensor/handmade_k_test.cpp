// Hand-built 256-value super-blocks with exactly known values: the K-quants, Q8_K, IQ4_XS and the
// ternary types. Scale bytes are written out literally from the packing rules (the comments
// derive each byte); value bytes follow a pattern so that a value read from the wrong byte or
// bit shows. Spot values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "handmade_helpers.h"
#include "tensor/blocks.h"

namespace sinter {
namespace {

using testing::dequantize_block;
using testing::pattern_byte;

constexpr f16_bits kHalfOne = 0x3c00;
constexpr f16_bits kHalfHalf = 0x3800;
constexpr f16_bits kHalfQuarter = 0x3400;
constexpr f16_bits kHalfTwo = 0x4000;

// 2-bit planes: value 128·h + 32·p + l is bits 2p..2p+1 of byte 32·h + l.
int plane_level(const uint8_t* bytes, int i) {
  return (bytes[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
}

TEST(HandmadeK, Q2_KScaleAndMinNibbles) {
  BlockQ2_K block{};
  block.d = kHalfOne;
  block.dmin = kHalfHalf;
  for (int g = 0; g < 16; ++g)
    block.scales[g] = static_cast<uint8_t>(g | (15 - g) << 4);  // scale g, min 15-g
  for (int k = 0; k < 64; ++k) block.qs[k] = pattern_byte(k);
  const auto values = dequantize_block(DType::Q2_K, block);
  EXPECT_EQ(values[0], -7.5f);    // byte 0 = 7, bits 0-1 = 3; group 0: 0·3 - 0.5·15
  EXPECT_EQ(values[33], -4.5f);   // byte 1 = 36, bits 2-3 = 1; group 2: 2·1 - 0.5·13
  EXPECT_EQ(values[100], 1.5f);   // byte 4 = 123, bits 6-7 = 1; group 6: 6·1 - 0.5·9
  EXPECT_EQ(values[200], -1.5f);  // byte 40 = 143, bits 4-5 = 0; group 12: 0 - 0.5·3
  for (int i = 0; i < 256; ++i) {
    const int g = i / 16;
    EXPECT_EQ(values[i], static_cast<float>(g * plane_level(block.qs, i)) - 0.5f * static_cast<float>(15 - g))
        << i;
  }
}

// Q3_K scales: biased 6-bit S = {1, 5, 9, 13, 17, 21, 25, 29, 35, 39, 43, 47, 51, 55, 59, 63}
// (s_j = S_j - 32). Byte j (< 8) holds the low nibble of S_j (1, 5, 9, 13, 1, 5, 9, 13) and in
// its high nibble that of S_{j+8} (3, 7, 11, 15, 3, 7, 11, 15). The top 2 bits S_j >> 4 = j / 4
// sit in byte 8 + j % 4 at bits 2·(j / 4): every one of bytes 8..11 is
// 0 | 1 << 2 | 2 << 4 | 3 << 6 = 0xe4.
constexpr uint8_t kQ3Scales[12] = {0x31, 0x75, 0xb9, 0xfd, 0x31, 0x75, 0xb9, 0xfd, 0xe4, 0xe4, 0xe4, 0xe4};
constexpr int kQ3EffectiveScales[16] = {-31, -27, -23, -19, -15, -11, -7, -3, 3, 7, 11, 15, 19, 23, 27, 31};

TEST(HandmadeK, Q3_KHmaskAndSixBitScales) {
  BlockQ3_K block{};
  block.d = kHalfHalf;
  std::copy(std::begin(kQ3Scales), std::end(kQ3Scales), block.scales);
  for (int k = 0; k < 64; ++k) block.qs[k] = pattern_byte(k);
  for (int l = 0; l < 32; ++l) block.hmask[l] = pattern_byte(l, 37, 3);
  const auto values = dequantize_block(DType::Q3_K, block);
  EXPECT_EQ(values[0], -46.5f);    // low 3, hmask[0] = 3 bit 0 set: q = 3; 0.5·(-31)·3
  EXPECT_EQ(values[33], 34.5f);    // low 1, hmask[1] = 40 bit 1 clear: q = -3; 0.5·(-23)·(-3)
  EXPECT_EQ(values[100], 10.5f);   // low 1, hmask[4] = 151 bit 3 clear: q = -3; 0.5·(-7)·(-3)
  EXPECT_EQ(values[200], -38.0f);  // low 0, hmask[8] = 43 bit 6 clear: q = -4; 0.5·19·(-4)
  for (int i = 0; i < 256; ++i) {
    const int bit = 4 * (i / 128) + (i % 128) / 32;
    const int q = plane_level(block.qs, i) - ((block.hmask[i % 32] >> bit) & 1 ? 0 : 4);
    EXPECT_EQ(values[i], 0.5f * static_cast<float>(kQ3EffectiveScales[i / 16]) * static_cast<float>(q)) << i;
  }
}

// Q4_K/Q5_K scales S = {1, 2, 3, 4, 20, 40, 50, 63} and mins M = {5, 6, 7, 8, 49, 1, 17, 35}:
// bytes 0..3 = S_0..3 with the top 2 bits of S_4..7 (1, 2, 3, 3) at bits 6-7: 0x41 0x82 0xc3 0xc4;
// bytes 4..7 = M_0..3 with the top 2 bits of M_4..7 (3, 0, 1, 2): 0xc5 0x06 0x47 0x88;
// bytes 8..11 = low nibbles of S_4..7 (4, 8, 2, 15) | low nibbles of M_4..7 (1, 1, 1, 3) << 4.
constexpr uint8_t kScaleMinBytes[12] = {0x41, 0x82, 0xc3, 0xc4, 0xc5, 0x06,
                                        0x47, 0x88, 0x14, 0x18, 0x12, 0x3f};
constexpr int kScales[8] = {1, 2, 3, 4, 20, 40, 50, 63};
constexpr int kMins[8] = {5, 6, 7, 8, 49, 1, 17, 35};

// 4-bit chunks: value 64·c + l is the low nibble of qs[32·c + l], value 64·c + 32 + l the high.
int chunk_nibble(const uint8_t* qs, int i) {
  const uint8_t byte = qs[32 * (i / 64) + i % 32];
  return i % 64 < 32 ? byte & 15 : byte >> 4;
}

TEST(HandmadeK, Q4_KPackedScalesAndMins) {
  BlockQ4_K block{};
  block.d = kHalfOne;
  block.dmin = kHalfQuarter;
  std::copy(std::begin(kScaleMinBytes), std::end(kScaleMinBytes), block.scales);
  for (int k = 0; k < 128; ++k) block.qs[k] = pattern_byte(k);
  const auto values = dequantize_block(DType::Q4_K, block);
  EXPECT_EQ(values[0], 5.75f);      // qs[0] = 7 low: 1·7 - 0.25·5
  EXPECT_EQ(values[40], 26.5f);     // qs[8] = 0xef high = 14: 2·14 - 0.25·6
  EXPECT_EQ(values[150], 87.75f);   // qs[86] = 0xc5 low = 5: 20·5 - 0.25·49
  EXPECT_EQ(values[200], 745.75f);  // qs[104] = 0xcf low = 15: 50·15 - 0.25·17
  EXPECT_EQ(values[255], 369.25f);  // qs[127] = 0x6a high = 6: 63·6 - 0.25·35
  for (int i = 0; i < 256; ++i) {
    const int g = i / 32;
    EXPECT_EQ(values[i], static_cast<float>(kScales[g] * chunk_nibble(block.qs, i)) -
                             0.25f * static_cast<float>(kMins[g]))
        << i;
  }
}

TEST(HandmadeK, Q5_KFifthBitInQh) {
  BlockQ5_K block{};
  block.d = kHalfOne;
  block.dmin = kHalfQuarter;
  std::copy(std::begin(kScaleMinBytes), std::end(kScaleMinBytes), block.scales);
  for (int k = 0; k < 128; ++k) block.qs[k] = pattern_byte(k);
  for (int l = 0; l < 32; ++l) block.qh[l] = pattern_byte(l, 37, 3);
  const auto values = dequantize_block(DType::Q5_K, block);
  EXPECT_EQ(values[0], 21.75f);     // 7 + 16 (qh[0] = 3, bit 0): 1·23 - 1.25
  EXPECT_EQ(values[40], 58.5f);     // 14 + 16 (qh[8] = 43, bit 1): 2·30 - 1.5
  EXPECT_EQ(values[150], 407.75f);  // 5 + 16 (qh[22] = 49, bit 4): 20·21 - 12.25
  EXPECT_EQ(values[200], 745.75f);  // 15 (qh[8] = 43, bit 6 clear): 50·15 - 4.25
  EXPECT_EQ(values[255], 369.25f);  // 6 (qh[31] = 126, bit 7 clear): 63·6 - 8.75
  for (int i = 0; i < 256; ++i) {
    const int g = i / 32;
    const int bit = 2 * (i / 64) + (i % 64) / 32;
    const int q = chunk_nibble(block.qs, i) + ((block.qh[i % 32] >> bit) & 1) * 16;
    EXPECT_EQ(values[i], static_cast<float>(kScales[g] * q) - 0.25f * static_cast<float>(kMins[g])) << i;
  }
}

TEST(HandmadeK, Q6_KLowAndHighBits) {
  BlockQ6_K block{};
  block.d = kHalfHalf;
  for (int k = 0; k < 128; ++k) block.ql[k] = pattern_byte(k);
  for (int k = 0; k < 64; ++k) block.qh[k] = pattern_byte(k, 37, 3);
  for (int g = 0; g < 16; ++g) block.scales[g] = static_cast<int8_t>(g % 2 ? -(g + 1) : g + 1);
  const auto values = dequantize_block(DType::Q6_K, block);
  EXPECT_EQ(values[0], 11.5f);     // ql[0] = 7 low, qh[0] = 3 bits 0-1 = 3: q = 55 - 32; 0.5·1·23
  EXPECT_EQ(values[33], 6.0f);     // ql[33] = 0xc4 low = 4, qh[1] = 40 bits 2-3 = 2: 36 - 32; 0.5·3·4
  EXPECT_EQ(values[70], 27.5f);    // ql[6] = 0xb5 high = 11, qh[6] = 225 bits 4-5 = 2: 43 - 32; 0.5·5·11
  EXPECT_EQ(values[130], -67.5f);  // ql[66] = 0x81 low = 1, qh[34] = 237 bits 0-1 = 1: 17 - 32; 0.5·9·(-15)
  EXPECT_EQ(values[255],
            208.0f);  // ql[127] = 0x6a high = 6, qh[63] = 30 bits 6-7 = 0: 6 - 32; 0.5·(-16)·(-26)
  for (int i = 0; i < 256; ++i) {
    const int h = i / 128;
    const int p = (i % 128) / 32;
    const int l = i % 32;
    const uint8_t low_byte = block.ql[64 * h + 32 * (p % 2) + l];
    const int low = p < 2 ? low_byte & 15 : low_byte >> 4;
    const int high = (block.qh[32 * h + l] >> (2 * p)) & 3;
    EXPECT_EQ(values[i],
              0.5f * static_cast<float>(block.scales[i / 16]) * static_cast<float>((low | high << 4) - 32))
        << i;
  }
}

TEST(HandmadeK, Q8_KFloatScale) {
  BlockQ8_K block{};
  block.d = 0.125f;
  for (int i = 0; i < 256; ++i) block.qs[i] = static_cast<int8_t>(i - 128);
  const auto values = dequantize_block(DType::Q8_K, block);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(values[i], 0.125f * static_cast<float>(i - 128));
}

// IQ4_XS sub-block scales S = {0, 10, 31, 32, 33, 47, 60, 63} (biased by 32): scales_l holds the
// low nibbles pairwise (0|10<<4, 15|0<<4, 1|15<<4, 12|15<<4), scales_h the top 2 bits
// {0, 0, 1, 2, 2, 2, 3, 3} at bits 2s: 16 + 128 + 512 + 2048 + 12288 + 49152 = 0xfa90.
TEST(HandmadeK, IQ4_XSSixBitSubScales) {
  constexpr float kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  constexpr int kSubScales[8] = {-32, -22, -1, 0, 1, 15, 28, 31};
  BlockIQ4_XS block{};
  block.d = kHalfHalf;
  block.scales_h = 0xfa90;
  const uint8_t scales_l[4] = {0xa0, 0x0f, 0xf1, 0xfc};
  std::copy(std::begin(scales_l), std::end(scales_l), block.scales_l);
  for (int k = 0; k < 128; ++k) block.qs[k] = pattern_byte(k);
  const auto values = dequantize_block(DType::IQ4_XS, block);
  EXPECT_EQ(values[0], 160.0f);     // qs[0] = 7: level -10; 0.5·(-32)·(-10)
  EXPECT_EQ(values[49], -1243.0f);  // qs[17] = 0xf4 high = 15: 113; 0.5·(-22)·113
  EXPECT_EQ(values[130], -52.0f);   // qs[66] = 0x81 low = 1: -104; 0.5·1·(-104)
  EXPECT_EQ(values[255], -341.0f);  // qs[127] = 0x6a high = 6: -22; 0.5·31·(-22)
  for (int i = 0; i < 256; ++i) {
    const int sub = i / 32;
    const int j = i % 32;
    const uint8_t byte = block.qs[16 * sub + j % 16];
    const int index = j < 16 ? byte & 15 : byte >> 4;
    EXPECT_EQ(values[i], 0.5f * static_cast<float>(kSubScales[sub]) * kLevels[index]) << i;
  }
}

TEST(HandmadeK, TQ2_0TwoBitTrits) {
  BlockTQ2_0 block{};
  block.d = kHalfTwo;
  for (int k = 0; k < 64; ++k) block.qs[k] = pattern_byte(k);
  const auto values = dequantize_block(DType::TQ2_0, block);
  EXPECT_EQ(values[0], 4.0f);     // byte 0 = 7, bits 0-1 = 3: (3 - 1)·2
  EXPECT_EQ(values[33], 0.0f);    // byte 1 = 36, bits 2-3 = 1
  EXPECT_EQ(values[200], -2.0f);  // byte 40 = 143, bits 4-5 = 0
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(values[i], 2.0f * static_cast<float>(plane_level(block.qs, i) - 1)) << i;
}

// TQ1_0: byte 188 = ceil(178·256/243) holds the base-3 digits 2, 0, 1, 2, 1 of 178 (most
// significant first), i.e. trits +1, -1, 0, +1, 0; byte 255 holds five +1; byte 0 five -1.
TEST(HandmadeK, TQ1_0FiveTritsPerByte) {
  BlockTQ1_0 block{};
  block.d = kHalfOne;
  block.qs[5] = 188;   // values 5, 37, 69, 101, 133
  block.qs[40] = 255;  // second section, byte 8: values 168, 184, 200, 216, 232
  block.qh[2] = 188;   // four trits: values 242, 246, 250, 254
  const auto values = dequantize_block(DType::TQ1_0, block);
  std::vector<float> expected(256, -1.0f);
  expected[5] = 1, expected[37] = -1, expected[69] = 0, expected[101] = 1, expected[133] = 0;
  for (int i : {168, 184, 200, 216, 232}) expected[static_cast<size_t>(i)] = 1;
  expected[242] = 1, expected[246] = -1, expected[250] = 0, expected[254] = 1;
  EXPECT_EQ(values, expected);
}

}  // namespace
}  // namespace sinter
