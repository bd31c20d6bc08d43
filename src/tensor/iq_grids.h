// Format constants of the non-linear types (IQ*, MXFP4): lattice grids and value tables.
//
// These numbers are the formats' definitions (as ggml fixes them): a GGUF block of these types
// holds indices into them, so they cannot be chosen differently.
#pragma once

#include <bit>
#include <cstdint>

namespace sinter::iq {

// Grids (iq_grids.cpp): entry i packs the magnitudes of 8 (uint64) or 4 (uint32) values, the
// first value in the lowest byte.
extern const uint64_t kIq2xxsGrid[256];
extern const uint64_t kIq2xsGrid[512];
extern const uint64_t kIq2sGrid[1024];
extern const uint32_t kIq3xxsGrid[256];
extern const uint32_t kIq3sGrid[512];
extern const uint64_t kIq1sGrid[2048];  // bytes are int8 -1, 0, +1

// Byte j (0 = lowest) of a packed grid entry.
constexpr uint8_t grid_byte(uint64_t entry, int j) { return static_cast<uint8_t>(entry >> (8 * j)); }

// IQ2_XXS, IQ2_XS and IQ3_XXS store the signs of 8 values in 7 bits: the eighth sign is implied
// by an even number of negative values. Bit j of the result is the sign of value j.
constexpr uint8_t even_signs(uint32_t seven_bits) {
  const uint32_t bits = seven_bits & 127u;
  return static_cast<uint8_t>(bits | (std::popcount(bits) & 1u) << 7);
}

// IQ1_S and IQ1_M shift every grid value by ±delta (the sign is a stored bit).
constexpr float kIq1Delta = 0.125f;

// IQ4_NL and IQ4_XS: the 16 non-linear levels a 4-bit index selects (sorted ascending).
constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

// MXFP4: the E2M1 values times two (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives); the shared
// E8M0 exponent is halved to compensate.
constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// The scale that goes with kMxfp4Values for exponent byte e: 2^(e - 128) as a float, exact for
// every e (e = 0 and 1 give subnormals).
inline float mxfp4_half_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

}  // namespace sinter::iq
