// IEEE half (F16) and bfloat16 (BF16) conversions, scalar and exact.
//
// Rounding is round-to-nearest-even, as the F16C instructions and llama.cpp's files use, so a
// value converted here is bit-identical to one converted by hardware.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace sinter {

using f16_bits = uint16_t;   // raw IEEE binary16
using bf16_bits = uint16_t;  // raw bfloat16 (top half of a binary32)

constexpr float f16_to_f32(f16_bits h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;  // signed zero
    } else {
      // Subnormal half: normalize into a binary32 normal number.
      int shift = 0;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      bits = sign | static_cast<uint32_t>(127 - 15 - shift + 1) << 23 | mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;  // inf or NaN (payload kept)
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  return std::bit_cast<float>(bits);
}

constexpr f16_bits f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<f16_bits>(sign | 0x7e00u);  // NaN -> quiet NaN
  if (abs >= 0x477ff000u) return static_cast<f16_bits>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): value / 2^-24 rounded to nearest even integer.
    if (abs < 0x33000000u) return static_cast<f16_bits>(sign);  // below half the smallest subnormal
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24 for the exponents that reach here
    uint32_t result = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
    return static_cast<f16_bits>(sign | result);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  uint32_t result = ((abs >> 23) - 127 + 15) << 10 | ((abs >> 13) & 0x3ffu);
  const uint32_t remainder = abs & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u))) ++result;
  return static_cast<f16_bits>(sign | result);
}

constexpr float bf16_to_f32(bf16_bits h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

constexpr bf16_bits f32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16_bits>((bits >> 16) | 64u);  // quiet NaN
  return static_cast<bf16_bits>((bits + (0x7fffu + ((bits >> 16) & 1u))) >> 16);
}

// Little-endian loads from unaligned bytes (GGUF payloads are little-endian; x86 is too).
inline float load_f16(const void* p) {
  f16_bits h;
  std::memcpy(&h, p, sizeof h);
  return f16_to_f32(h);
}

}  // namespace sinter
