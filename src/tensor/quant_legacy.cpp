// The 32-value block types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/reference.h"

namespace sinter::reference {

// Q4_0: x = d * (q - 8), q in 0..15; d = max / -8 where max is the value of largest magnitude
// (sign kept), so that the extreme value maps exactly to q = 0.
void dequantize_row_q4_0(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockQ4_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float d = f16_to_f32(block[b].d);
    for (int j = 0; j < kQK / 2; ++j) {
      out[j] = d * static_cast<float>((block[b].qs[j] & 0x0f) - 8);
      out[j + kQK / 2] = d * static_cast<float>((block[b].qs[j] >> 4) - 8);
    }
  }
}

void quantize_row_q4_0(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockQ4_0*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    float max_abs = 0.0f;
    float max_value = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(values[j]) > max_abs) {
        max_abs = std::fabs(values[j]);
        max_value = values[j];
      }
    }
    const float d = max_value / -8.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    block[b].d = f32_to_f16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const auto lo = static_cast<uint8_t>(std::min(15.0f, std::floor(values[j] * inverse + 8.5f)));
      const auto hi =
          static_cast<uint8_t>(std::min(15.0f, std::floor(values[j + kQK / 2] * inverse + 8.5f)));
      block[b].qs[j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

// Q8_0: x = d * q, q in -127..127, d = max|x| / 127.
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
    for (int j = 0; j < kQK; ++j) block[b].qs[j] = static_cast<int8_t>(std::lround(values[j] * inverse));
  }
}

}  // namespace sinter::reference
