// Lattice ("i-quant") types, dequantization only: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M. Each 256-value super-block has one f16 scale d; groups of 8 (or 4) values are one grid
// point (iq_grids.h) chosen by index, with a sign bit per value (IQ1: one shift per 8 values).
// Sub-blocks of 32 values carry a small scale.
//
// Sinter does not quantize to these types: llama.cpp itself requires an importance matrix for
// most of them, and without one the result is far worse than the K-quants at similar size.
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/iq_grids.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

using iq::grid_byte;

constexpr int kSubBlock = 32;
constexpr int kSubBlocks = kQKK / kSubBlock;  // 8

uint32_t load_u32(const void* bytes) {
  uint32_t value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

uint16_t load_u16(const void* bytes) {
  uint16_t value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

// Writes 8 values: scale · grid magnitude, negated where bit j of `signs` is set.
void emit_signed_eight(uint64_t grid, uint8_t signs, float scale, float* out) {
  for (int j = 0; j < 8; ++j) {
    const float magnitude = scale * static_cast<float>(grid_byte(grid, j));
    out[j] = (signs >> j) & 1 ? -magnitude : magnitude;
  }
}

// Two 4-value grid points as one 8-value group.
uint64_t join_grids(uint32_t first, uint32_t second) { return first | static_cast<uint64_t>(second) << 32; }

}  // namespace

// IQ2_XXS: per 32 values, 8 bytes: four 8-bit grid indices, then a uint32 holding four 7-bit
// sign fields (bits 7l..7l+6 for group l) and a 4-bit scale in bits 28..31:
// x = d·(0.5 + scale)·0.25 · grid · sign.
void dequantize_row_iq2_xxs(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ2_XXS*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    const auto* bytes = reinterpret_cast<const uint8_t*>(block[b].qs);
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const uint8_t* indices = bytes + 8 * sub;
      const uint32_t signs_and_scale = load_u32(bytes + 8 * sub + 4);
      const float scale = d * (0.5f + static_cast<float>(signs_and_scale >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l, out += 8) {
        emit_signed_eight(iq::kIq2xxsGrid[indices[l]], iq::even_signs(signs_and_scale >> (7 * l)), scale,
                          out);
      }
    }
  }
}

// IQ2_XS: per 8 values a uint16: 9-bit grid index, 7-bit sign field; per 32 values a byte of two
// 4-bit scales (low nibble for the first 16 values).
void dequantize_row_iq2_xs(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ2_XS*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const float scales[2] = {d * (0.5f + static_cast<float>(block[b].scales[sub] & 0x0f)) * 0.25f,
                               d * (0.5f + static_cast<float>(block[b].scales[sub] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l, out += 8) {
        const uint16_t packed = load_u16(&block[b].qs[4 * sub + l]);
        emit_signed_eight(iq::kIq2xsGrid[packed & 511], iq::even_signs(packed >> 9), scales[l / 2], out);
      }
    }
  }
}

// IQ2_S: 10-bit grid indices (8 low bits in qs[0..31], 2 high bits per group in qh), explicit
// 8-bit signs in qs[32..63], two 4-bit scales per 32 values as in IQ2_XS.
void dequantize_row_iq2_s(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ2_S*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    const uint8_t* low_indices = block[b].qs;
    const uint8_t* signs = block[b].qs + kQKK / 8;
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const float scales[2] = {d * (0.5f + static_cast<float>(block[b].scales[sub] & 0x0f)) * 0.25f,
                               d * (0.5f + static_cast<float>(block[b].scales[sub] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l, out += 8) {
        const int index = low_indices[4 * sub + l] | ((block[b].qh[sub] >> (2 * l)) & 3) << 8;
        emit_signed_eight(iq::kIq2sGrid[index], signs[4 * sub + l], scales[l / 2], out);
      }
    }
  }
}

// IQ3_XXS: 8-bit indices into a grid of 4-value points (64 bytes), then per 32 values a uint32 of
// four 7-bit sign fields and a 4-bit scale: x = d·(0.5 + scale)·0.5 · grid · sign.
void dequantize_row_iq3_xxs(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ3_XXS*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    const uint8_t* indices = block[b].qs;
    const uint8_t* signs_and_scales = block[b].qs + kQKK / 4;
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const uint32_t packed = load_u32(signs_and_scales + 4 * sub);
      const float scale = d * (0.5f + static_cast<float>(packed >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l, out += 8) {
        const uint64_t grid = join_grids(iq::kIq3xxsGrid[indices[8 * sub + 2 * l]],
                                         iq::kIq3xxsGrid[indices[8 * sub + 2 * l + 1]]);
        emit_signed_eight(grid, iq::even_signs(packed >> (7 * l)), scale, out);
      }
    }
  }
}

// IQ3_S: 9-bit indices into a grid of 4-value points (8 low bits in qs, the ninth in qh: bit k
// of qh[sub] for the k-th point of sub-block sub), explicit signs, and a 4-bit scale per 32
// values (low nibble of scales[sub / 2] for even sub): x = d·(1 + 2·scale) · grid · sign.
void dequantize_row_iq3_s(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ3_S*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const int nibble = (block[b].scales[sub / 2] >> (4 * (sub % 2))) & 0x0f;
      const float scale = d * static_cast<float>(1 + 2 * nibble);
      const uint8_t high = block[b].qh[sub];
      for (int l = 0; l < 4; ++l, out += 8) {
        const int first = block[b].qs[8 * sub + 2 * l] | ((high >> (2 * l)) & 1) << 8;
        const int second = block[b].qs[8 * sub + 2 * l + 1] | ((high >> (2 * l + 1)) & 1) << 8;
        const uint64_t grid = join_grids(iq::kIq3sGrid[first], iq::kIq3sGrid[second]);
        emit_signed_eight(grid, block[b].signs[4 * sub + l], scale, out);
      }
    }
  }
}

// IQ1_S: per 32 values a uint16 qh: bits 0..11 the high 3 bits of four 11-bit grid indices,
// bits 12..14 a 3-bit scale, bit 15 the sign of the shift:
// x = d·(2·scale + 1) · (grid ± 0.125), grid values in {-1, 0, 1}.
void dequantize_row_iq1_s(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ1_S*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const uint16_t high = load_u16(&block[b].qh[sub]);
      const float scale = d * static_cast<float>(2 * ((high >> 12) & 7) + 1);
      const float delta = high & 0x8000 ? -iq::kIq1Delta : iq::kIq1Delta;
      for (int l = 0; l < 4; ++l, out += 8) {
        const int index = block[b].qs[4 * sub + l] | ((high >> (3 * l)) & 7) << 8;
        const uint64_t grid = iq::kIq1sGrid[index];
        for (int j = 0; j < 8; ++j) {
          out[j] = scale * (static_cast<float>(static_cast<int8_t>(grid_byte(grid, j))) + delta);
        }
      }
    }
  }
}

// IQ1_M: no separate d: the f16 super-block scale is spread over the top nibbles of the four
// uint16 words of `scales` (word 0 holds bits 0..3). Each word also holds, for two sub-blocks
// of 32, two 3-bit scales each (one per 16 values: bits 6·(sub % 2) and 6·(sub % 2) + 3). Per
// 8 values, a nibble of qh has the high 3 bits of the 11-bit grid index and the shift's sign.
void dequantize_row_iq1_m(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ1_M*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    uint16_t words[4];
    std::memcpy(words, block[b].scales, sizeof words);
    const auto scale_bits = static_cast<f16_bits>((words[0] >> 12) | ((words[1] >> 8) & 0x00f0) |
                                                  ((words[2] >> 4) & 0x0f00) | (words[3] & 0xf000));
    const float d = f16_to_f32(scale_bits);
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      const uint16_t word = words[sub / 2];
      const int shift = 6 * (sub % 2);
      const float scales[2] = {d * static_cast<float>(2 * ((word >> shift) & 7) + 1),
                               d * static_cast<float>(2 * ((word >> (shift + 3)) & 7) + 1)};
      for (int l = 0; l < 4; ++l, out += 8) {
        const uint8_t nibble = (block[b].qh[2 * sub + l / 2] >> (4 * (l % 2))) & 0x0f;
        const int index = block[b].qs[4 * sub + l] | (nibble & 7) << 8;
        const float delta = nibble & 8 ? -iq::kIq1Delta : iq::kIq1Delta;
        const uint64_t grid = iq::kIq1sGrid[index];
        for (int j = 0; j < 8; ++j) {
          out[j] = scales[l / 2] * (static_cast<float>(static_cast<int8_t>(grid_byte(grid, j))) + delta);
        }
      }
    }
  }
}

}  // namespace sinter::reference
