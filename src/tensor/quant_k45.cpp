// K-quants with 32-value groups, a 6-bit scale and a 6-bit minimum each: Q4_K and Q5_K.
//
// x = d·s_g·q - dmin·m_g for group g = i / 32. The eight scales s_g and minimums m_g share 12
// bytes: for g < 4, s_g is the low 6 bits of byte g and m_g the low 6 bits of byte g + 4; for
// g ≥ 4, the low 4 bits of s_g / m_g are the low / high nibble of byte g + 4 and their top 2
// bits are the top 2 bits of byte g - 4 / byte g.
// The 4-bit parts of the values sit in 64-value chunks: value 64·c + l (l < 32) in the low
// nibble of qs[32·c + l], value 64·c + 32 + l in its high nibble. Q5_K's fifth bit of value
// 64·c + l is bit 2c of qh[l], of value 64·c + 32 + l bit 2c + 1.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/quant_k_search.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

using ksearch::nearest_int;

constexpr int kGroup = 32;
constexpr int kGroups = kQKK / kGroup;  // 8

struct ScaleMin {
  int scale;
  int minimum;
};

ScaleMin unpack_scale_min(const uint8_t* packed, int g) {
  if (g < 4) return {packed[g] & 63, packed[g + 4] & 63};
  return {(packed[g + 4] & 0x0f) | (packed[g - 4] >> 6) << 4, (packed[g + 4] >> 4) | (packed[g] >> 6) << 4};
}

void pack_scales_mins(const uint8_t* scales, const uint8_t* minimums, uint8_t* packed) {
  std::memset(packed, 0, kKScaleBytes);
  for (int g = 0; g < kGroups; ++g) {
    if (g < 4) {
      packed[g] = scales[g];
      packed[g + 4] = minimums[g];
    } else {
      packed[g + 4] = static_cast<uint8_t>((scales[g] & 0x0f) | (minimums[g] & 0x0f) << 4);
      packed[g - 4] = static_cast<uint8_t>(packed[g - 4] | (scales[g] >> 4) << 6);
      packed[g] = static_cast<uint8_t>(packed[g] | (minimums[g] >> 4) << 6);
    }
  }
}

// The level of value i (0..255): 4 bits from qs plus, for Q5_K, the fifth from qh.
int nibble_level(const uint8_t* qs, int i) {
  const int chunk = i / 64;
  const int l = i % 32;
  const uint8_t byte = qs[32 * chunk + l];
  return (i % 64) < 32 ? byte & 0x0f : byte >> 4;
}

int fifth_bit(const uint8_t* qh, int i) { return (qh[i % 32] >> (2 * (i / 64) + (i % 64) / 32)) & 1; }

void dequantize_scale_min_row(const uint8_t* packed, float d, float dmin, const uint8_t* qs,
                              const uint8_t* qh, float* out) {
  for (int g = 0; g < kGroups; ++g) {
    const ScaleMin sm = unpack_scale_min(packed, g);
    const float scale = d * static_cast<float>(sm.scale);
    const float minimum = dmin * static_cast<float>(sm.minimum);
    for (int l = 0; l < kGroup; ++l) {
      const int i = kGroup * g + l;
      const int level = nibble_level(qs, i) + (qh != nullptr ? fifth_bit(qh, i) << 4 : 0);
      out[i] = scale * static_cast<float>(level) - minimum;
    }
  }
}

// Shared by Q4_K (max_level 15) and Q5_K (31): per group, a search of scale and minimum
// weighted by rms(group) + |x|; then the scales and minimums are quantized to 6 bits against
// the largest of each, stored, and the values re-rounded with the stored (f16 × 6-bit) factors.
struct SuperBlockLevels {
  uint8_t levels[kQKK];
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[kKScaleBytes];
};

SuperBlockLevels quantize_scale_min_super_block(const float* values, int max_level,
                                                const ksearch::ScaleSearch& search) {
  SuperBlockLevels result{};
  float scales[kGroups];
  float minimums[kGroups];
  float max_scale = 0.0f;
  float max_minimum = 0.0f;
  for (int g = 0; g < kGroups; ++g) {
    const float* group = values + kGroup * g;
    float sum_squares = 0.0f;
    for (int l = 0; l < kGroup; ++l) sum_squares += group[l] * group[l];
    const float rms = std::sqrt(sum_squares / kGroup);
    float weights[kGroup];
    for (int l = 0; l < kGroup; ++l) weights[l] = rms + std::fabs(group[l]);
    scales[g] = ksearch::min_scale_search(kGroup, max_level, group, weights, result.levels + kGroup * g,
                                          &minimums[g], search);
    max_scale = std::max(max_scale, scales[g]);
    max_minimum = std::max(max_minimum, minimums[g]);
  }
  const float inverse_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inverse_minimum = max_minimum > 0.0f ? 63.0f / max_minimum : 0.0f;
  uint8_t scale_levels[kGroups];
  uint8_t minimum_levels[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    scale_levels[g] = static_cast<uint8_t>(std::clamp(nearest_int(inverse_scale * scales[g]), 0, 63));
    minimum_levels[g] = static_cast<uint8_t>(std::clamp(nearest_int(inverse_minimum * minimums[g]), 0, 63));
  }
  pack_scales_mins(scale_levels, minimum_levels, result.scales);
  result.d = f32_to_f16(max_scale / 63.0f);
  result.dmin = f32_to_f16(max_minimum / 63.0f);
  for (int g = 0; g < kGroups; ++g) {
    const float d = f16_to_f32(result.d) * static_cast<float>(scale_levels[g]);
    if (d == 0.0f) continue;
    const float minimum = f16_to_f32(result.dmin) * static_cast<float>(minimum_levels[g]);
    for (int l = 0; l < kGroup; ++l) {
      const int level = nearest_int((values[kGroup * g + l] + minimum) / d);
      result.levels[kGroup * g + l] = static_cast<uint8_t>(std::clamp(level, 0, max_level));
    }
  }
  return result;
}

void pack_nibbles(const uint8_t* levels, uint8_t* qs) {
  for (int chunk = 0; chunk < kQKK / 64; ++chunk) {
    for (int l = 0; l < 32; ++l) {
      qs[32 * chunk + l] =
          static_cast<uint8_t>((levels[64 * chunk + l] & 0x0f) | (levels[64 * chunk + 32 + l] & 0x0f) << 4);
    }
  }
}

}  // namespace

void dequantize_row_q4_k(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ4_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    dequantize_scale_min_row(block[b].scales, f16_to_f32(block[b].d), f16_to_f32(block[b].dmin), block[b].qs,
                             nullptr, out);
  }
}

void quantize_row_q4_k(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ4_K*>(blocks);
  constexpr ksearch::ScaleSearch kSearch{-1.0f, 0.1f, 20, false};
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    const SuperBlockLevels q = quantize_scale_min_super_block(values, 15, kSearch);
    block[b].d = q.d;
    block[b].dmin = q.dmin;
    std::memcpy(block[b].scales, q.scales, kKScaleBytes);
    pack_nibbles(q.levels, block[b].qs);
  }
}

void dequantize_row_q5_k(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ5_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    dequantize_scale_min_row(block[b].scales, f16_to_f32(block[b].d), f16_to_f32(block[b].dmin), block[b].qs,
                             block[b].qh, out);
  }
}

void quantize_row_q5_k(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ5_K*>(blocks);
  constexpr ksearch::ScaleSearch kSearch{-0.5f, 0.1f, 15, false};
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    const SuperBlockLevels q = quantize_scale_min_super_block(values, 31, kSearch);
    block[b].d = q.d;
    block[b].dmin = q.dmin;
    std::memcpy(block[b].scales, q.scales, kKScaleBytes);
    pack_nibbles(q.levels, block[b].qs);
    std::memset(block[b].qh, 0, sizeof block[b].qh);
    for (int i = 0; i < kQKK; ++i) {
      if (q.levels[i] > 15) {
        const int bit = 2 * (i / 64) + (i % 64) / 32;
        block[b].qh[i % 32] = static_cast<uint8_t>(block[b].qh[i % 32] | 1 << bit);
      }
    }
  }
}

}  // namespace sinter::reference
