// Reference dot products of the 256-value super-block types with Q8_K activations: integer sums
// within each group, scaled by the group's integer scale and summed over the super-block in
// integers, then one float accumulator across super-blocks (see vec_dot.h).
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/iq_grids.h"
#include "tensor/vec_dot.h"

namespace sinter::reference {
namespace levels {

// Q2_K: value 128h + 32p + l in bits 2p..2p+1 of qs[32h + l]; scales[g] holds the scale of
// 16-value group g in its low nibble and the minimum in its high nibble.
void q2_k(const void* block, int8_t* q, uint8_t* scales, uint8_t* mins) {
  const auto& b = *static_cast<const BlockQ2_K*>(block);
  for (int i = 0; i < kQKK; ++i)
    q[i] = static_cast<int8_t>((b.qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3);
  for (int g = 0; g < kQKK / 16; ++g) {
    scales[g] = b.scales[g] & 0x0f;
    mins[g] = b.scales[g] >> 4;
  }
}

// Q3_K: two bits as Q2_K, the third bit (bit 4h + p of hmask[l]) clear meaning "minus 4";
// sixteen 6-bit scales biased by 32 (see docs/TYPES.md for their packing).
void q3_k(const void* block, int8_t* q, int8_t* scales) {
  const auto& b = *static_cast<const BlockQ3_K*>(block);
  for (int i = 0; i < kQKK; ++i) {
    const int half = i / 128, plane = (i % 128) / 32, l = i % 32;
    const int low = (b.qs[32 * half + l] >> (2 * plane)) & 3;
    const bool high = (b.hmask[l] >> (4 * half + plane)) & 1;
    q[i] = static_cast<int8_t>(low - (high ? 0 : 4));
  }
  for (int j = 0; j < kQKK / 16; ++j) {
    const int low = j < 8 ? b.scales[j] & 0x0f : b.scales[j - 8] >> 4;
    const int high = (b.scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    scales[j] = static_cast<int8_t>((low | high << 4) - 32);
  }
}

namespace {

// Q4_K/Q5_K: eight 6-bit scales and minimums packed in 12 bytes.
void unpack_scales_mins(const uint8_t* packed, uint8_t* scales, uint8_t* mins) {
  for (int g = 0; g < 8; ++g) {
    if (g < 4) {
      scales[g] = packed[g] & 63;
      mins[g] = packed[g + 4] & 63;
    } else {
      scales[g] = static_cast<uint8_t>((packed[g + 4] & 0x0f) | (packed[g - 4] >> 6) << 4);
      mins[g] = static_cast<uint8_t>((packed[g + 4] >> 4) | (packed[g] >> 6) << 4);
    }
  }
}

// Value 64c + l (l < 32) in the low nibble of qs[32c + l], value 64c + 32 + l in the high one.
int nibble(const uint8_t* qs, int i) {
  const uint8_t byte = qs[32 * (i / 64) + i % 32];
  return (i % 64) < 32 ? byte & 0x0f : byte >> 4;
}

}  // namespace

void q4_k(const void* block, int8_t* q, uint8_t* scales, uint8_t* mins) {
  const auto& b = *static_cast<const BlockQ4_K*>(block);
  for (int i = 0; i < kQKK; ++i) q[i] = static_cast<int8_t>(nibble(b.qs, i));
  unpack_scales_mins(b.scales, scales, mins);
}

// Q5_K: the fifth bit of value i is bit 2·(i / 64) + (i % 64) / 32 of qh[i % 32].
void q5_k(const void* block, int8_t* q, uint8_t* scales, uint8_t* mins) {
  const auto& b = *static_cast<const BlockQ5_K*>(block);
  for (int i = 0; i < kQKK; ++i) {
    const int fifth = (b.qh[i % 32] >> (2 * (i / 64) + (i % 64) / 32)) & 1;
    q[i] = static_cast<int8_t>(nibble(b.qs, i) | fifth << 4);
  }
  unpack_scales_mins(b.scales, scales, mins);
}

// Q6_K: low 4 bits of half h in ql[64h..64h+63], top 2 bits in qh[32h..32h+31]; levels − 32.
void q6_k(const void* block, int8_t* q, int8_t* scales) {
  const auto& b = *static_cast<const BlockQ6_K*>(block);
  for (int i = 0; i < kQKK; ++i) {
    const int half = i / 128, plane = (i % 128) / 32, l = i % 32;
    const uint8_t low_byte = b.ql[64 * half + 32 * (plane & 1) + l];
    const int low = plane < 2 ? low_byte & 0x0f : low_byte >> 4;
    const int high = (b.qh[32 * half + l] >> (2 * plane)) & 3;
    q[i] = static_cast<int8_t>((low | high << 4) - 32);
  }
  std::memcpy(scales, b.scales, kQKK / 16);
}

// IQ4_XS: 32-value groups as IQ4_NL (value j < 16 low nibble of qs[16g + j], j ≥ 16 high
// nibble of qs[16g + j − 16]) with 6-bit scales biased by 32.
void iq4_xs(const void* block, int8_t* q, int8_t* scales) {
  const auto& b = *static_cast<const BlockIQ4_XS*>(block);
  const uint16_t scales_high = b.scales_h;
  for (int g = 0; g < kQKK / 32; ++g) {
    const int low = (b.scales_l[g / 2] >> (4 * (g % 2))) & 0x0f;
    const int high = (scales_high >> (2 * g)) & 3;
    scales[g] = static_cast<int8_t>((low | high << 4) - 32);
    for (int j = 0; j < 16; ++j) {
      q[32 * g + j] = iq::kIq4nlValues[b.qs[16 * g + j] & 0x0f];
      q[32 * g + j + 16] = iq::kIq4nlValues[b.qs[16 * g + j] >> 4];
    }
  }
}

}  // namespace levels

namespace {

// Σ_g scale_g · Σ_{i in g} q_i·x_i over one super-block, groups of `group` values.
template <class Scale>
int scaled_sum(const int8_t* q, const int8_t* x, const Scale* scales, int group) {
  int total = 0;
  for (int g = 0; g < kQKK / group; ++g) {
    int sum = 0;
    for (int l = 0; l < group; ++l) sum += q[group * g + l] * x[group * g + l];
    total += static_cast<int>(scales[g]) * sum;
  }
  return total;
}

// Σ_g min_g · (sum of the activations of group g): the minimums' part of a super-block.
// `bsums` may be unaligned (a row of packed blocks at any address).
int min_sum(const uint8_t* mins, const void* bsums, int group) {
  int total = 0;
  for (int g = 0; g < kQKK / group; ++g) {
    int bsum = 0;
    for (int j = 0; j < group / 16; ++j) {
      int16_t v;
      std::memcpy(&v, static_cast<const uint8_t*>(bsums) + 2 * (g * (group / 16) + j), sizeof v);
      bsum += v;
    }
    total += mins[g] * bsum;
  }
  return total;
}

// Super-block types with d (and dmin) scaling an integer sum and a minimum sum.
template <class Block, class Sums>
float super_block_dot(int64_t n, const void* w, const void* x, Sums sums) {
  const auto* wb = static_cast<const Block*>(w);
  const auto* xb = static_cast<const BlockQ8_K*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    int isum = 0, msum = 0;
    sums(wb[b], xb[b], isum, msum);
    acc = std::fma(static_cast<float>(isum), f16_to_f32(wb[b].d) * xb[b].d, acc);
    if constexpr (requires { wb[b].dmin; }) {
      acc = std::fma(static_cast<float>(-msum), f16_to_f32(wb[b].dmin) * xb[b].d, acc);
    }
  }
  return acc;
}

}  // namespace

float vec_dot_q2_k_q8_k(int64_t n, const void* w, const void* x) {
  return super_block_dot<BlockQ2_K>(n, w, x,
                                    [](const BlockQ2_K& wb, const BlockQ8_K& xb, int& isum, int& msum) {
                                      int8_t q[kQKK];
                                      uint8_t scales[16], mins[16];
                                      levels::q2_k(&wb, q, scales, mins);
                                      isum = scaled_sum(q, xb.qs, scales, 16);
                                      msum = min_sum(mins, xb.bsums, 16);
                                    });
}

float vec_dot_q3_k_q8_k(int64_t n, const void* w, const void* x) {
  return super_block_dot<BlockQ3_K>(n, w, x, [](const BlockQ3_K& wb, const BlockQ8_K& xb, int& isum, int&) {
    int8_t q[kQKK], scales[16];
    levels::q3_k(&wb, q, scales);
    isum = scaled_sum(q, xb.qs, scales, 16);
  });
}

float vec_dot_q4_k_q8_k(int64_t n, const void* w, const void* x) {
  return super_block_dot<BlockQ4_K>(n, w, x,
                                    [](const BlockQ4_K& wb, const BlockQ8_K& xb, int& isum, int& msum) {
                                      int8_t q[kQKK];
                                      uint8_t scales[8], mins[8];
                                      levels::q4_k(&wb, q, scales, mins);
                                      isum = scaled_sum(q, xb.qs, scales, 32);
                                      msum = min_sum(mins, xb.bsums, 32);
                                    });
}

float vec_dot_q5_k_q8_k(int64_t n, const void* w, const void* x) {
  return super_block_dot<BlockQ5_K>(n, w, x,
                                    [](const BlockQ5_K& wb, const BlockQ8_K& xb, int& isum, int& msum) {
                                      int8_t q[kQKK];
                                      uint8_t scales[8], mins[8];
                                      levels::q5_k(&wb, q, scales, mins);
                                      isum = scaled_sum(q, xb.qs, scales, 32);
                                      msum = min_sum(mins, xb.bsums, 32);
                                    });
}

float vec_dot_q6_k_q8_k(int64_t n, const void* w, const void* x) {
  return super_block_dot<BlockQ6_K>(n, w, x, [](const BlockQ6_K& wb, const BlockQ8_K& xb, int& isum, int&) {
    int8_t q[kQKK], scales[16];
    levels::q6_k(&wb, q, scales);
    isum = scaled_sum(q, xb.qs, scales, 16);
  });
}

float vec_dot_iq4_xs_q8_k(int64_t n, const void* w, const void* x) {
  return super_block_dot<BlockIQ4_XS>(n, w, x,
                                      [](const BlockIQ4_XS& wb, const BlockQ8_K& xb, int& isum, int&) {
                                        int8_t q[kQKK], scales[8];
                                        levels::iq4_xs(&wb, q, scales);
                                        isum = scaled_sum(q, xb.qs, scales, 32);
                                      });
}

}  // namespace sinter::reference
