// K-quants with 16-value groups: Q2_K, Q3_K, Q6_K, and the activation type Q8_K.
//
// A 256-value super-block is stored as two halves of 128 values. In the 2-bit planes of Q2_K and
// Q3_K, value 32·p + l of a half (plane p = 0..3, l = 0..31) takes bits 2p..2p+1 of byte l of
// that half's 32 bytes. Q3_K's third bit of value 128·h + 32·p + l is bit 4h + p of hmask[l].
// Q6_K keeps the low 4 bits of the values of each half in 64 bytes of ql (values 0..31 and
// 64..95 in the low/high nibbles of ql[0..31], values 32..63 and 96..127 in ql[32..63]) and the
// top 2 bits in 32 bytes of qh (value 32·p + l in bits 2p..2p+1 of qh[l]).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/quant_k_search.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

using ksearch::nearest_int;

constexpr int kGroup = 16;              // values per scale in Q2_K, Q3_K, Q6_K
constexpr int kGroups = kQKK / kGroup;  // 16 scales per super-block
constexpr int kHalfValues = kQKK / 2;   // 128

// Packs 2-bit levels (0..3) of a super-block into the plane layout described above.
void pack_two_bit_planes(const uint8_t* levels, uint8_t* out) {
  for (int half = 0; half < 2; ++half) {
    const uint8_t* in = levels + half * kHalfValues;
    for (int l = 0; l < 32; ++l) {
      out[half * 32 + l] = static_cast<uint8_t>(in[l] | in[l + 32] << 2 | in[l + 64] << 4 | in[l + 96] << 6);
    }
  }
}

// The 2-bit level of value i of a super-block from the plane layout.
int two_bit_level(const uint8_t* qs, int i) {
  const int half = i / kHalfValues;
  const int plane = (i % kHalfValues) / 32;
  return (qs[half * 32 + i % 32] >> (2 * plane)) & 3;
}

// Q3_K's sixteen 6-bit scales in 12 bytes: the low 4 bits of scale j in the low nibble of
// byte j (j < 8) or the high nibble of byte j - 8; the top 2 bits at bits 2·(j / 4) of byte
// 8 + j % 4.
int q3_k_scale(const uint8_t* scales, int j) {
  const int low = j < 8 ? scales[j] & 0x0f : scales[j - 8] >> 4;
  const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | high << 4) - 32;
}

void set_q3_k_scale(uint8_t* scales, int j, int biased_scale) {
  if (j < 8) {
    scales[j] = static_cast<uint8_t>(scales[j] | (biased_scale & 0x0f));
  } else {
    scales[j - 8] = static_cast<uint8_t>(scales[j - 8] | (biased_scale & 0x0f) << 4);
  }
  scales[8 + j % 4] = static_cast<uint8_t>(scales[8 + j % 4] | (biased_scale >> 4) << (2 * (j / 4)));
}

}  // namespace

// Q2_K: x = d·(scales[g] & 15)·q - dmin·(scales[g] >> 4) for group g = i / 16, q in 0..3.
void dequantize_row_q2_k(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ2_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    const float d = f16_to_f32(block[b].d);
    const float dmin = f16_to_f32(block[b].dmin);
    for (int i = 0; i < kQKK; ++i) {
      const uint8_t packed = block[b].scales[i / kGroup];
      const float scale = d * static_cast<float>(packed & 0x0f);
      const float minimum = dmin * static_cast<float>(packed >> 4);
      out[i] = scale * static_cast<float>(two_bit_level(block[b].qs, i)) - minimum;
    }
  }
}

// Per group: a weighted (w = |x|) search of scale and minimum minimizing absolute error; then
// both are quantized to 4 bits against the super-block's largest, and the values re-rounded.
void quantize_row_q2_k(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ2_K*>(blocks);
  constexpr ksearch::ScaleSearch kSearch{-0.5f, 0.1f, 15, true};
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    uint8_t levels[kQKK];
    float scales[kGroups];
    float minimums[kGroups];
    float max_scale = 0.0f;
    float max_minimum = 0.0f;
    for (int g = 0; g < kGroups; ++g) {
      float weights[kGroup];
      for (int l = 0; l < kGroup; ++l) weights[l] = std::fabs(values[kGroup * g + l]);
      scales[g] = ksearch::min_scale_search(kGroup, 3, values + kGroup * g, weights, levels + kGroup * g,
                                            &minimums[g], kSearch);
      max_scale = std::max(max_scale, scales[g]);
      max_minimum = std::max(max_minimum, minimums[g]);
    }
    BlockQ2_K& out = block[b];
    std::memset(out.scales, 0, sizeof out.scales);
    out.d = 0;
    out.dmin = 0;
    if (max_scale > 0.0f) {
      const float inverse = 15.0f / max_scale;
      for (int g = 0; g < kGroups; ++g) {
        out.scales[g] = static_cast<uint8_t>(std::clamp(nearest_int(inverse * scales[g]), 0, 15));
      }
      out.d = f32_to_f16(max_scale / 15.0f);
    }
    if (max_minimum > 0.0f) {
      const float inverse = 15.0f / max_minimum;
      for (int g = 0; g < kGroups; ++g) {
        out.scales[g] =
            static_cast<uint8_t>(out.scales[g] | std::clamp(nearest_int(inverse * minimums[g]), 0, 15) << 4);
      }
      out.dmin = f32_to_f16(max_minimum / 15.0f);
    }
    for (int g = 0; g < kGroups; ++g) {
      const float d = f16_to_f32(out.d) * static_cast<float>(out.scales[g] & 0x0f);
      if (d == 0.0f) continue;
      const float minimum = f16_to_f32(out.dmin) * static_cast<float>(out.scales[g] >> 4);
      for (int l = 0; l < kGroup; ++l) {
        const int level = nearest_int((values[kGroup * g + l] + minimum) / d);
        levels[kGroup * g + l] = static_cast<uint8_t>(std::clamp(level, 0, 3));
      }
    }
    pack_two_bit_planes(levels, out.qs);
  }
}

// Q3_K: x = d·s_g·(q - 4) with q = low 2 bits + 4·(hmask bit), s_g a 6-bit scale minus 32.
void dequantize_row_q3_k(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ3_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    const float d = f16_to_f32(block[b].d);
    for (int i = 0; i < kQKK; ++i) {
      const int half = i / kHalfValues;
      const int plane = (i % kHalfValues) / 32;
      const bool high = (block[b].hmask[i % 32] >> (4 * half + plane)) & 1;
      const int level = two_bit_level(block[b].qs, i) - (high ? 0 : 4);
      const float scale = d * static_cast<float>(q3_k_scale(block[b].scales, i / kGroup));
      out[i] = scale * static_cast<float>(level);
    }
  }
}

// Per group: a symmetric x²-weighted scale refined by coordinate descent over the levels; the
// scales are quantized to 6 bits against the one of largest magnitude (which maps to -32).
void quantize_row_q3_k(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ3_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    uint8_t levels[kQKK];  // 0..7, i.e. q + 4
    float scales[kGroups];
    float max_scale = 0.0f;
    float max_magnitude = 0.0f;
    for (int g = 0; g < kGroups; ++g) {
      scales[g] = ksearch::symmetric_scale_refine(kGroup, 4, values + kGroup * g, levels + kGroup * g);
      if (std::fabs(scales[g]) > max_magnitude) {
        max_magnitude = std::fabs(scales[g]);
        max_scale = scales[g];
      }
    }
    BlockQ3_K& out = block[b];
    std::memset(out.scales, 0, sizeof out.scales);
    out.d = 0;
    if (max_scale != 0.0f) {
      const float inverse = -32.0f / max_scale;
      for (int g = 0; g < kGroups; ++g) {
        const int scale = std::clamp(nearest_int(inverse * scales[g]), -32, 31);
        set_q3_k_scale(out.scales, g, scale + 32);
      }
      out.d = f32_to_f16(1.0f / inverse);
    }
    for (int g = 0; g < kGroups; ++g) {
      const float d = f16_to_f32(out.d) * static_cast<float>(q3_k_scale(out.scales, g));
      if (d == 0.0f) continue;
      for (int l = 0; l < kGroup; ++l) {
        const int level = std::clamp(nearest_int(values[kGroup * g + l] / d), -4, 3);
        levels[kGroup * g + l] = static_cast<uint8_t>(level + 4);
      }
    }
    std::memset(out.hmask, 0, sizeof out.hmask);
    for (int i = 0; i < kQKK; ++i) {
      if (levels[i] > 3) {
        const int half = i / kHalfValues;
        const int plane = (i % kHalfValues) / 32;
        out.hmask[i % 32] = static_cast<uint8_t>(out.hmask[i % 32] | 1 << (4 * half + plane));
        levels[i] = static_cast<uint8_t>(levels[i] - 4);
      }
    }
    pack_two_bit_planes(levels, out.qs);
  }
}

// Q6_K: x = d·scales[g]·(q - 32), q in 0..63, scales int8.
void dequantize_row_q6_k(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ6_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    const float d = f16_to_f32(block[b].d);
    for (int i = 0; i < kQKK; ++i) {
      const int half = i / kHalfValues;
      const int plane = (i % kHalfValues) / 32;  // 0..3
      const int l = i % 32;
      const uint8_t low_byte = block[b].ql[64 * half + 32 * (plane & 1) + l];
      const int low = plane < 2 ? low_byte & 0x0f : low_byte >> 4;
      const int high = (block[b].qh[32 * half + l] >> (2 * plane)) & 3;
      const float scale = d * static_cast<float>(block[b].scales[i / kGroup]);
      out[i] = scale * static_cast<float>((low | high << 4) - 32);
    }
  }
}

// Per group: a symmetric x²-weighted search over 19 candidate scales; the scales are quantized
// to int8 against the one of largest magnitude (which maps to -128).
void quantize_row_q6_k(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ6_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    uint8_t levels[kQKK];  // 0..63, i.e. q + 32
    float scales[kGroups];
    float max_scale = 0.0f;
    float max_magnitude = 0.0f;
    for (int g = 0; g < kGroups; ++g) {
      scales[g] = ksearch::symmetric_scale_search(kGroup, 32, values + kGroup * g, levels + kGroup * g);
      if (std::fabs(scales[g]) > max_magnitude) {
        max_magnitude = std::fabs(scales[g]);
        max_scale = scales[g];
      }
    }
    BlockQ6_K& out = block[b];
    if (max_magnitude < ksearch::kGroupEpsilon) {
      std::memset(&out, 0, sizeof out);
      continue;
    }
    const float inverse = -128.0f / max_scale;
    out.d = f32_to_f16(1.0f / inverse);
    for (int g = 0; g < kGroups; ++g) {
      out.scales[g] = static_cast<int8_t>(std::min(127, nearest_int(inverse * scales[g])));
    }
    for (int g = 0; g < kGroups; ++g) {
      const float d = f16_to_f32(out.d) * static_cast<float>(out.scales[g]);
      if (d == 0.0f) continue;
      for (int l = 0; l < kGroup; ++l) {
        const int level = std::clamp(nearest_int(values[kGroup * g + l] / d), -32, 31);
        levels[kGroup * g + l] = static_cast<uint8_t>(level + 32);
      }
    }
    for (int half = 0; half < 2; ++half) {
      const uint8_t* in = levels + half * kHalfValues;
      uint8_t* ql = out.ql + 64 * half;
      uint8_t* qh = out.qh + 32 * half;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((in[l] & 0x0f) | (in[l + 64] & 0x0f) << 4);
        ql[l + 32] = static_cast<uint8_t>((in[l + 32] & 0x0f) | (in[l + 96] & 0x0f) << 4);
        qh[l] = static_cast<uint8_t>(in[l] >> 4 | (in[l + 32] >> 4) << 2 | (in[l + 64] >> 4) << 4 |
                                     (in[l + 96] >> 4) << 6);
      }
    }
  }
}

// Q8_K: x = d·q with a float d; bsums hold the sum of each 16 q for the K-quant dot products.
void dequantize_row_q8_k(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ8_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    for (int i = 0; i < kQKK; ++i) out[i] = block[b].d * static_cast<float>(block[b].qs[i]);
  }
}

// The value of largest magnitude maps to -127 (so d has the opposite sign); the other end may
// round to 128 and is clamped to 127.
void quantize_row_q8_k(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ8_K*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    BlockQ8_K& out = block[b];
    float max_magnitude = 0.0f;
    float max_value = 0.0f;
    for (int i = 0; i < kQKK; ++i) {
      if (std::fabs(values[i]) > max_magnitude) {
        max_magnitude = std::fabs(values[i]);
        max_value = values[i];
      }
    }
    if (max_magnitude == 0.0f) {
      std::memset(&out, 0, sizeof out);
      continue;
    }
    const float inverse = -127.0f / max_value;
    for (int i = 0; i < kQKK; ++i)
      out.qs[i] = static_cast<int8_t>(std::min(127, nearest_int(inverse * values[i])));
    for (int g = 0; g < kGroups; ++g) {
      int sum = 0;
      for (int l = 0; l < kGroup; ++l) sum += out.qs[kGroup * g + l];
      out.bsums[g] = static_cast<int16_t>(sum);
    }
    out.d = 1.0f / inverse;
  }
}

}  // namespace sinter::reference
