// Ternary types (BitNet b1.58 style): every value is d·t with t in {-1, 0, 1}.
//
// TQ2_0 stores t + 1 in 2 bits: value 128·h + 32·p + m (half h, plane p = 0..3, m = 0..31) in
// bits 2p..2p+1 of qs[32·h + m].
// TQ1_0 packs five trits a byte as a fixed-point fraction: a byte b holding trits t0..t4 (t0 most
// significant) is ceil(n·256 / 243) with n = Σ (t_k + 1)·3^(4-k), so trit k is recovered as
// ((b·3^k mod 256)·3) >> 8. qs[0..31] hold values 0..159 (trit k of byte m is value 32k + m),
// qs[32..47] values 160..239 (trit k of byte m is value 160 + 16k + m), and qh[0..3] values
// 240..255 with four trits each (trit k of byte m is value 240 + 4k + m; the fifth trit is 0).
#include <algorithm>
#include <cmath>

#include "tensor/blocks.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

constexpr int kPowersOfThree[5] = {1, 3, 9, 27, 81};

int trit(uint8_t packed, int k) {
  const auto shifted = static_cast<uint8_t>(packed * kPowersOfThree[k]);  // mod 256
  return (shifted * 3) >> 8;                                              // 0..2
}

// Packs trits (0..2, most significant first) into one byte.
uint8_t pack_trits(const int* trits, int count) {
  int number = 0;
  for (int k = 0; k < count; ++k) number = number * 3 + trits[k];
  for (int k = count; k < 5; ++k) number *= 3;  // missing trailing trits are 0
  return static_cast<uint8_t>((number * 256 + 242) / 243);
}

struct TernaryScale {
  float d;
  float inverse;
};

// d = max|x|, so each value rounds to -1, 0 or 1 of it.
TernaryScale ternary_scale(const float* values) {
  float max_magnitude = 0.0f;
  for (int i = 0; i < kQKK; ++i) max_magnitude = std::max(max_magnitude, std::fabs(values[i]));
  return {max_magnitude, max_magnitude != 0.0f ? 1.0f / max_magnitude : 0.0f};
}

int ternary_digit(float value, float inverse) {
  const float scaled = value * inverse;
  if (std::isnan(scaled)) return 1;
  return static_cast<int>(std::lround(std::clamp(scaled, -1.0f, 1.0f))) + 1;
}

}  // namespace

void dequantize_row_tq1_0(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockTQ1_0*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    const float d = f16_to_f32(block[b].d);
    for (int k = 0; k < 5; ++k) {
      for (int m = 0; m < 32; ++m) out[32 * k + m] = static_cast<float>(trit(block[b].qs[m], k) - 1) * d;
      for (int m = 0; m < 16; ++m)
        out[160 + 16 * k + m] = static_cast<float>(trit(block[b].qs[32 + m], k) - 1) * d;
    }
    for (int k = 0; k < 4; ++k) {
      for (int m = 0; m < 4; ++m) out[240 + 4 * k + m] = static_cast<float>(trit(block[b].qh[m], k) - 1) * d;
    }
  }
}

void quantize_row_tq1_0(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockTQ1_0*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    const TernaryScale scale = ternary_scale(values);
    block[b].d = f32_to_f16(scale.d);
    int trits[5];
    for (int m = 0; m < 32; ++m) {
      for (int k = 0; k < 5; ++k) trits[k] = ternary_digit(values[32 * k + m], scale.inverse);
      block[b].qs[m] = pack_trits(trits, 5);
    }
    for (int m = 0; m < 16; ++m) {
      for (int k = 0; k < 5; ++k) trits[k] = ternary_digit(values[160 + 16 * k + m], scale.inverse);
      block[b].qs[32 + m] = pack_trits(trits, 5);
    }
    for (int m = 0; m < 4; ++m) {
      for (int k = 0; k < 4; ++k) trits[k] = ternary_digit(values[240 + 4 * k + m], scale.inverse);
      block[b].qh[m] = pack_trits(trits, 4);
    }
  }
}

void dequantize_row_tq2_0(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockTQ2_0*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, out += kQKK) {
    const float d = f16_to_f32(block[b].d);
    for (int i = 0; i < kQKK; ++i) {
      const int level = (block[b].qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
      out[i] = static_cast<float>(level - 1) * d;
    }
  }
}

void quantize_row_tq2_0(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockTQ2_0*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    const TernaryScale scale = ternary_scale(values);
    block[b].d = f32_to_f16(scale.d);
    for (int half = 0; half < 2; ++half) {
      for (int m = 0; m < 32; ++m) {
        int packed = 0;
        for (int p = 0; p < 4; ++p)
          packed |= ternary_digit(values[128 * half + 32 * p + m], scale.inverse) << (2 * p);
        block[b].qs[32 * half + m] = static_cast<uint8_t>(packed);
      }
    }
  }
}

}  // namespace sinter::reference
