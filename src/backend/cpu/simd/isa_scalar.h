// One-lane "vector" traits for the generic level: the members of simd/isa_avx2.h that the
// recurrent kernels use (simd/recurrent_impl.h), on a single float with std::fma and std::exp,
// so that the generic level runs the same template as the SIMD levels, one row or channel at a
// time. No intrinsics: include from any file.
#pragma once

#include <cmath>
#include <cstdint>

namespace sinter::cpu::simd {
namespace {

struct Scalar {
  static constexpr int kLanes = 1;
  using F = float;
  using Mask = bool;

  static F zero() { return 0.0f; }
  static F set1(float v) { return v; }
  static F broadcast(const float* p) { return *p; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F fma(F a, F b, F c) { return std::fma(a, b, c); }  // a·b + c, one rounding
  static F exp(F x) { return std::exp(x); }
  static void transpose(F (&/*r*/)[kLanes]) {}

  // Tails: a single lane is always whole.
  static Mask tail_mask(int64_t remaining) { return remaining > 0; }
  static F load(const float* p, Mask m) { return m ? *p : 0.0f; }
  static void store(float* p, Mask m, F v) {
    if (m) *p = v;
  }
};

}  // namespace
}  // namespace sinter::cpu::simd
