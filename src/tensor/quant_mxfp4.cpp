// MXFP4 (OCP microscaling): 32 values share an E8M0 exponent byte e; each value is a 4-bit E2M1
// number (sign, 2-bit exponent, 1-bit mantissa). Value j is the low nibble of qs[j] for j < 16
// and the high nibble of qs[j - 16] otherwise: x = 2^(e - 127) · e2m1(nibble). iq::kMxfp4Values
// holds the E2M1 values doubled, so the scale used with it is 2^(e - 128).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "tensor/blocks.h"
#include "tensor/iq_grids.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

uint8_t nearest_e2m1(float value, float scale) {
  uint8_t best = 0;
  float best_error = std::fabs(value);
  for (uint8_t i = 1; i < 16; ++i) {
    const float error = std::fabs(static_cast<float>(iq::kMxfp4Values[i]) * scale - value);
    if (error < best_error) {
      best = i;
      best_error = error;
    }
  }
  return best;
}

}  // namespace

void dequantize_row_mxfp4(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockMXFP4*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK) {
    const float scale = iq::mxfp4_half_scale(block[b].e);
    for (int j = 0; j < kQK / 2; ++j) {
      out[j] = static_cast<float>(iq::kMxfp4Values[block[b].qs[j] & 0x0f]) * scale;
      out[j + kQK / 2] = static_cast<float>(iq::kMxfp4Values[block[b].qs[j] >> 4]) * scale;
    }
  }
}

// The exponent puts the largest magnitude into the top binade of E2M1 (4..6, i.e. 8..12 in the
// doubled table): e = floor(log2 max|x|) - 2 + 127; since that saturates magnitudes above
// 6·2^(e-127), the next exponent is tried too and the one with the smaller squared error kept.
void quantize_row_mxfp4(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockMXFP4*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    float max_magnitude = 0.0f;
    for (int j = 0; j < kQK; ++j) max_magnitude = std::fmax(max_magnitude, std::fabs(values[j]));
    int exponent = 0;
    if (max_magnitude > 0.0f && std::isfinite(max_magnitude)) {
      exponent = static_cast<int>(std::floor(std::log2(max_magnitude))) - 2 + 127;
      exponent = exponent < 0 ? 0 : (exponent > 253 ? 253 : exponent);
    }
    float best_error = INFINITY;
    for (int candidate = exponent; candidate <= exponent + 1; ++candidate) {
      const float scale = iq::mxfp4_half_scale(static_cast<uint8_t>(candidate));
      uint8_t qs[kQK / 2];
      float error = 0.0f;
      for (int j = 0; j < kQK / 2; ++j) {
        const uint8_t lo = nearest_e2m1(values[j], scale);
        const uint8_t hi = nearest_e2m1(values[j + kQK / 2], scale);
        qs[j] = static_cast<uint8_t>(lo | hi << 4);
        const float lo_diff = static_cast<float>(iq::kMxfp4Values[lo]) * scale - values[j];
        const float hi_diff = static_cast<float>(iq::kMxfp4Values[hi]) * scale - values[j + kQK / 2];
        error += lo_diff * lo_diff + hi_diff * hi_diff;
      }
      if (candidate == exponent || error < best_error) {
        best_error = error;
        block[b].e = static_cast<uint8_t>(candidate);
        std::copy(qs, qs + kQK / 2, block[b].qs);
      }
    }
  }
}

}  // namespace sinter::reference
