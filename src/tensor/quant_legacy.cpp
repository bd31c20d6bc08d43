// The 32-value block types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1.
//
// Value j of a block (0..31) sits in the low nibble of qs[j] for j < 16 and in the high nibble
// of qs[j - 16] otherwise; the 5-bit types keep the fifth bit of value j in bit j of qh
// (a little-endian uint32). Quantization is round-to-nearest against one scale (and a minimum
// for the _1 types), the same choice llama.cpp's reference makes, so the blocks are identical.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

constexpr int kHalf = kQK / 2;

// The value of largest magnitude, sign kept (the first one on ties).
float signed_absolute_max(const float* values, int count) {
  float max_abs = 0.0f;
  float max_value = 0.0f;
  for (int j = 0; j < count; ++j) {
    if (std::fabs(values[j]) > max_abs) {
      max_abs = std::fabs(values[j]);
      max_value = values[j];
    }
  }
  return max_value;
}

// Index `value * inverse + offset` truncated toward zero and clamped to [0, top]: the rounding
// of the reference quantizers (offset carries the +0.5).
uint8_t truncate_level(float scaled, int top) {
  if (!(scaled > 0.0f)) return 0;  // also NaN
  if (scaled >= static_cast<float>(top)) return static_cast<uint8_t>(top);
  return static_cast<uint8_t>(scaled);
}

// round(x) half away from zero, clamped to int8 (NaN → 0).
int8_t round_to_int8(float scaled) {
  if (!(std::fabs(scaled) <= 127.0f))
    return scaled > 0.0f ? int8_t{127} : (scaled < 0.0f ? int8_t{-127} : int8_t{0});
  return static_cast<int8_t>(std::round(scaled));
}

uint32_t load_u32(const uint8_t* bytes) {
  uint32_t value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

void store_u32(uint8_t* bytes, uint32_t value) { std::memcpy(bytes, &value, sizeof value); }

}  // namespace

// Q4_0: x = d * (q - 8), q in 0..15; d = max / -8 where max is the value of largest magnitude
// (sign kept), so that the extreme value maps exactly to q = 0.
void dequantize_row_q4_0(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ4_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    for (int j = 0; j < kHalf; ++j) {
      out[j] = d * static_cast<float>((block[b].qs[j] & 0x0f) - 8);
      out[j + kHalf] = d * static_cast<float>((block[b].qs[j] >> 4) - 8);
    }
  }
}

void quantize_row_q4_0(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ4_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    const float d = signed_absolute_max(values, kQK) / -8.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    block[b].d = f32_to_f16(d);
    for (int j = 0; j < kHalf; ++j) {
      const uint8_t lo = truncate_level(values[j] * inverse + 8.5f, 15);
      const uint8_t hi = truncate_level(values[j + kHalf] * inverse + 8.5f, 15);
      block[b].qs[j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

// Q4_1: x = d * q + m, q in 0..15; m = min, d = (max - min) / 15.
void dequantize_row_q4_1(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ4_1*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    const float m = f16_to_f32(block[b].m);
    for (int j = 0; j < kHalf; ++j) {
      out[j] = static_cast<float>(block[b].qs[j] & 0x0f) * d + m;
      out[j + kHalf] = static_cast<float>(block[b].qs[j] >> 4) * d + m;
    }
  }
}

void quantize_row_q4_1(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ4_1*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    const auto [min, max] = std::minmax_element(values, values + kQK);
    const float d = (*max - *min) / 15.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    block[b].d = f32_to_f16(d);
    block[b].m = f32_to_f16(*min);
    for (int j = 0; j < kHalf; ++j) {
      const uint8_t lo = truncate_level((values[j] - *min) * inverse + 0.5f, 15);
      const uint8_t hi = truncate_level((values[j + kHalf] - *min) * inverse + 0.5f, 15);
      block[b].qs[j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

// Q5_0: x = d * (q - 16), q in 0..31; d = max / -16 (max of largest magnitude, sign kept).
void dequantize_row_q5_0(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ5_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    const uint32_t high_bits = load_u32(block[b].qh);
    for (int j = 0; j < kHalf; ++j) {
      const int lo = (block[b].qs[j] & 0x0f) | static_cast<int>((high_bits >> j) & 1u) << 4;
      const int hi = (block[b].qs[j] >> 4) | static_cast<int>((high_bits >> (j + kHalf)) & 1u) << 4;
      out[j] = d * static_cast<float>(lo - 16);
      out[j + kHalf] = d * static_cast<float>(hi - 16);
    }
  }
}

void quantize_row_q5_0(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ5_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    const float d = signed_absolute_max(values, kQK) / -16.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    block[b].d = f32_to_f16(d);
    uint32_t high_bits = 0;
    for (int j = 0; j < kHalf; ++j) {
      const uint8_t lo = truncate_level(values[j] * inverse + 16.5f, 31);
      const uint8_t hi = truncate_level(values[j + kHalf] * inverse + 16.5f, 31);
      block[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | (hi & 0x0f) << 4);
      high_bits |= static_cast<uint32_t>(lo >> 4) << j;
      high_bits |= static_cast<uint32_t>(hi >> 4) << (j + kHalf);
    }
    store_u32(block[b].qh, high_bits);
  }
}

// Q5_1: x = d * q + m, q in 0..31; m = min, d = (max - min) / 31.
void dequantize_row_q5_1(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ5_1*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    const float m = f16_to_f32(block[b].m);
    const uint32_t high_bits = load_u32(block[b].qh);
    for (int j = 0; j < kHalf; ++j) {
      const int lo = (block[b].qs[j] & 0x0f) | static_cast<int>((high_bits >> j) & 1u) << 4;
      const int hi = (block[b].qs[j] >> 4) | static_cast<int>((high_bits >> (j + kHalf)) & 1u) << 4;
      out[j] = static_cast<float>(lo) * d + m;
      out[j + kHalf] = static_cast<float>(hi) * d + m;
    }
  }
}

void quantize_row_q5_1(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ5_1*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    const auto [min, max] = std::minmax_element(values, values + kQK);
    const float d = (*max - *min) / 31.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    block[b].d = f32_to_f16(d);
    block[b].m = f32_to_f16(*min);
    uint32_t high_bits = 0;
    for (int j = 0; j < kHalf; ++j) {
      const uint8_t lo = truncate_level((values[j] - *min) * inverse + 0.5f, 31);
      const uint8_t hi = truncate_level((values[j + kHalf] - *min) * inverse + 0.5f, 31);
      block[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | (hi & 0x0f) << 4);
      high_bits |= static_cast<uint32_t>(lo >> 4) << j;
      high_bits |= static_cast<uint32_t>(hi >> 4) << (j + kHalf);
    }
    store_u32(block[b].qh, high_bits);
  }
}

// Q8_0: x = d * q, q in -127..127, d = max|x| / 127 (q rounded half away from zero).
void dequantize_row_q8_0(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ8_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    for (int j = 0; j < kQK; ++j) out[j] = d * static_cast<float>(block[b].qs[j]);
  }
}

void quantize_row_q8_0(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ8_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    float max_abs = 0.0f;
    for (int j = 0; j < kQK; ++j) max_abs = std::max(max_abs, std::fabs(values[j]));
    const float d = max_abs / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    block[b].d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) block[b].qs[j] = round_to_int8(values[j] * inverse);
  }
}

// Q8_1: Q8_0 plus s = d * sum(q), which lets a dot product with a Q4_1/Q5_1 row fold the
// minimum in with one multiply per block. s uses the unrounded d, as llama.cpp's kernels expect.
void dequantize_row_q8_1(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ8_1*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    for (int j = 0; j < kQK; ++j) out[j] = d * static_cast<float>(block[b].qs[j]);
  }
}

void quantize_row_q8_1(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ8_1*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    float max_abs = 0.0f;
    for (int j = 0; j < kQK; ++j) max_abs = std::max(max_abs, std::fabs(values[j]));
    const float d = max_abs / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      block[b].qs[j] = round_to_int8(values[j] * inverse);
      sum += block[b].qs[j];
    }
    block[b].d = f32_to_f16(d);
    block[b].s = f32_to_f16(static_cast<float>(sum) * d);
  }
}

}  // namespace sinter::reference
