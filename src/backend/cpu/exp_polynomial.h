// The constants of the vectorized exp used by the SIMD kernel files (attention weights): Cody-Waite
// range reduction x = n·ln 2 + r with |r| <= ln 2 / 2 (ln 2 split in two so that n·ln2_hi is
// exact), then e^r ≈ 1 + r + r²·P(r) with the degree-5 minimax polynomial of the Cephes
// library's expf (relative error about 1 ulp in F32), and 2^n applied to the exponent.
#pragma once

namespace sinter::cpu::exp_poly {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kP0 = 1.9875691500e-4f;  // r^5 coefficient of P ...
inline constexpr float kP1 = 1.3981999507e-3f;
inline constexpr float kP2 = 8.3334519073e-3f;
inline constexpr float kP3 = 4.1665795894e-2f;
inline constexpr float kP4 = 1.6666665459e-1f;
inline constexpr float kP5 = 5.0000001201e-1f;             // ... r^0 coefficient of P
inline constexpr float kMaxInput = 88.3762626647949f;      // e^x overflows above
inline constexpr float kMinNormalInput = -87.3365447504f;  // e^x is below F32's smallest normal

}  // namespace sinter::cpu::exp_poly
