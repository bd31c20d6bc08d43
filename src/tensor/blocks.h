// Block layouts of the quantized GGUF types, byte for byte as llama.cpp writes them.
// `d`/`dmin`/`m` are IEEE half scales (raw bits); multi-byte fields are little-endian.
#pragma once

#include <cstdint>

#include "core/half.h"

namespace sinter {

constexpr int kQK = 32;           // values per block of the Q4_0..Q8_1 and IQ4_NL family
constexpr int kQKK = 256;         // values per super-block of the K-quants, IQ*, TQ*
constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q4_K/Q5_K

#pragma pack(push, 1)
struct BlockQ4_0 {
  f16_bits d;
  uint8_t qs[kQK / 2];  // value j in low nibble of qs[j], value j+16 in high nibble
};
struct BlockQ4_1 {
  f16_bits d;
  f16_bits m;
  uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {
  f16_bits d;
  uint8_t qh[4];  // fifth bit of each of the 32 values, little-endian uint32
  uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
  f16_bits d;
  f16_bits m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {
  f16_bits d;
  int8_t qs[kQK];
};
struct BlockQ8_1 {
  f16_bits d;
  f16_bits s;  // d * sum(qs)
  int8_t qs[kQK];
};
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];  // low nibble scale, high nibble min, per 16 values
  uint8_t qs[kQKK / 4];
  f16_bits d;
  f16_bits dmin;
};
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];  // sixteen 6-bit scales
  f16_bits d;
};
struct BlockQ4_K {
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[kKScaleBytes];  // eight 6-bit scales and eight 6-bit mins
  uint8_t qs[kQKK / 2];
};
struct BlockQ5_K {
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  f16_bits d;
};
struct BlockQ8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];  // sums of each group of 16 qs
};
struct BlockIQ2_XXS {
  f16_bits d;
  uint16_t qs[kQKK / 8];
};
struct BlockIQ2_XS {
  f16_bits d;
  uint16_t qs[kQKK / 8];
  uint8_t scales[kQKK / 32];
};
struct BlockIQ2_S {
  f16_bits d;
  uint8_t qs[kQKK / 4];
  uint8_t qh[kQKK / 32];
  uint8_t scales[kQKK / 32];
};
struct BlockIQ3_XXS {
  f16_bits d;
  uint8_t qs[3 * kQKK / 8];
};
struct BlockIQ3_S {
  f16_bits d;
  uint8_t qs[kQKK / 4];
  uint8_t qh[kQKK / 32];
  uint8_t signs[kQKK / 8];
  uint8_t scales[kQKK / 64];
};
struct BlockIQ1_S {
  f16_bits d;
  uint8_t qs[kQKK / 8];
  uint16_t qh[kQKK / 32];
};
struct BlockIQ1_M {
  uint8_t qs[kQKK / 8];
  uint8_t qh[kQKK / 16];
  uint8_t scales[kQKK / 32];  // the f16 super-block scale is spread over the top nibbles
};
struct BlockIQ4_NL {
  f16_bits d;
  uint8_t qs[kQK / 2];
};
struct BlockIQ4_XS {
  f16_bits d;
  uint16_t scales_h;
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};
struct BlockTQ1_0 {
  uint8_t qs[(kQKK - 4 * kQKK / 64) / 5];  // five ternary digits per byte
  uint8_t qh[kQKK / 64];                   // four per byte
  f16_bits d;
};
struct BlockTQ2_0 {
  uint8_t qs[kQKK / 4];  // two bits per value
  f16_bits d;
};
struct BlockMXFP4 {
  uint8_t e;            // shared E8M0 exponent
  uint8_t qs[kQK / 2];  // E2M1 values, low nibbles first
};
#pragma pack(pop)

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ2_XXS) == 66);
static_assert(sizeof(BlockIQ2_XS) == 74);
static_assert(sizeof(BlockIQ2_S) == 82);
static_assert(sizeof(BlockIQ3_XXS) == 98);
static_assert(sizeof(BlockIQ3_S) == 110);
static_assert(sizeof(BlockIQ1_S) == 50);
static_assert(sizeof(BlockIQ1_M) == 56);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockTQ1_0) == 54);
static_assert(sizeof(BlockTQ2_0) == 66);
static_assert(sizeof(BlockMXFP4) == 17);

}  // namespace sinter
