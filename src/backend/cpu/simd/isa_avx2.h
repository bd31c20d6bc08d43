// AVX2 (+ FMA, F16C) vector traits: the per-ISA primitives that the kernel family templates
// under simd/ are written over (one 256-bit register: 8 floats or 8 int32). Everything here has
// internal linkage (anonymous namespace), so code compiled with AVX2 flags can never be picked by
// the linker for a caller in a generic file. Include only from files compiled with AVX2 flags.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "backend/cpu/exp_polynomial.h"
#include "backend/cpu/simd/intrinsics.h"

namespace sinter::cpu::simd {
namespace {

struct Avx2 {
  static constexpr int kLanes = 8;
  using F = __m256;      // kLanes floats
  using I = __m256i;     // kLanes int32
  using Mask = __m256i;  // a lane mask for tails (all ones in the lanes taken)

  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }  // a·b + c, one rounding
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F abs(F v) { return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
  static F round_trunc(F v) { return _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  // a + (b where `where` holds, else +0)
  static F add_where(F a, F where, F b) { return _mm256_add_ps(a, _mm256_and_ps(where, b)); }
  static F ge(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static F or_(F a, F b) { return _mm256_or_ps(a, b); }
  static F and_(F a, F b) { return _mm256_and_ps(a, b); }
  // Bit j set where lane j of a equals b (ordered).
  static unsigned eq_bits(F a, F b) {
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)));
  }
  static bool any_nan(F v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0; }

  // Transposes the 8×8 matrix whose row a is r[a]: afterwards r[b] holds column b (r[b][a] = the
  // old r[a][b]). Pairs of values, pairs of pairs (each 128-bit half then holds a 4×4 block),
  // then the halves.
  static void transpose(F (&r)[kLanes]) {
    F t[kLanes];
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    // u[4i + m], half k: column 4k + m of rows 4i .. 4i + 3.
    for (int i = 0; i < 8; i += 4) {
      r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
      r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (int m = 0; m < 4; ++m) {
      t[m] = _mm256_permute2f128_ps(r[m], r[4 + m], 0x20);
      t[4 + m] = _mm256_permute2f128_ps(r[m], r[4 + m], 0x31);
    }
    for (int i = 0; i < 8; ++i) r[i] = t[i];
  }

  // Horizontal reductions.
  static float reduce_max(F v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }
  static int32_t reduce_add(I v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
  }

  // Tails: the lanes of the `remaining` values left (1 to kLanes).
  static Mask tail_mask(int64_t remaining) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static F load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }  // zeros elsewhere
  static void store(float* p, Mask m, F v) { _mm256_maskstore_ps(p, m, v); }
  // Writes the first `lanes` lanes of v (all at kLanes or more, none at 0 or fewer).
  static void store_lanes(float* out, F v, int lanes) {
    if (lanes >= 8) {
      _mm256_storeu_ps(out, v);
    } else if (lanes > 0) {
      _mm256_maskstore_ps(out, tail_mask(lanes), v);
    }
  }

  // Integers.
  static I zero_i() { return _mm256_setzero_si256(); }
  static I add_i(I a, I b) { return _mm256_add_epi32(a, b); }
  static I min_i(I a, int32_t b) { return _mm256_min_epi32(a, _mm256_set1_epi32(b)); }
  static I to_int_trunc(F v) { return _mm256_cvttps_epi32(v); }
  static I to_int_nearest(F v) { return _mm256_cvtps_epi32(v); }  // ties to even (MXCSR default)
  static F as_float(I v) { return _mm256_castsi256_ps(v); }
  static I as_int(F v) { return _mm256_castps_si256(v); }
  // kLanes int32 (values in −128..127) → kLanes int8.
  static void store_i8(int8_t* out, I v) {
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i w8 = _mm_packs_epi16(w16, w16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), w8);
  }

  // F16 and BF16.
  static F load_f16(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static F load_bf16(const uint8_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  // Rounded to nearest even; a NaN keeps its payload (VCVTPS2PH).
  static void store_f16(uint8_t* p, F v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static F f16_round_trip(F v) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // The reference's BF16 rounding of x's bits to the top 16 (ties to even; NaN quieted), widened.
  static F bf16_round_trip(F v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i abs = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));  // both non-negative
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(64 << 16));
    const __m256i top = _mm256_blendv_epi8(rounded, quiet, nan);
    return _mm256_castsi256_ps(_mm256_and_si256(top, _mm256_set1_epi32(static_cast<int32_t>(0xffff0000u))));
  }

  // e^x in every lane (exp_polynomial.h); 2^n is built in the exponent bits, so inputs below the
  // smallest normal result give 0 and inputs above the largest give +inf (NaN stays NaN: the
  // clamps take x as their second operand, which MINPS/MAXPS return when it is NaN).
  static F exp(F x) {
    using namespace exp_poly;
    const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(kMinNormalInput), _CMP_LT_OQ);
    const __m256 overflow = _mm256_cmp_ps(x, _mm256_set1_ps(kMaxInput), _CMP_GT_OQ);
    x = _mm256_max_ps(_mm256_set1_ps(kMinNormalInput), _mm256_min_ps(_mm256_set1_ps(kMaxInput), x));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
    __m256 p = _mm256_set1_ps(kP0);
    for (float c : {kP1, kP2, kP3, kP4, kP5}) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    const __m256 e = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    // 2^n for n in [-126, 128]: 2^128 (x near kMaxInput) is applied as 2^127 · 2.
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i top = _mm256_cmpgt_epi32(ni, _mm256_set1_epi32(127));
    const __m256i exponent =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, _mm256_and_si256(top, _mm256_set1_epi32(1))),
                                           _mm256_set1_epi32(127)),
                          23);
    __m256 result = _mm256_mul_ps(e, _mm256_castsi256_ps(exponent));
    result = _mm256_blendv_ps(result, _mm256_add_ps(result, result), _mm256_castsi256_ps(top));
    result = _mm256_blendv_ps(result, _mm256_set1_ps(__builtin_inff()), overflow);
    return _mm256_andnot_ps(underflow, result);
  }

  // Σ double(x[i]·x[i]) of 8 values into 8 double partial sums (row_kernels.h's order): two
  // 4-double vectors, partials 0..3 and 4..7.
  struct SumSquares8 {
    __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();
    void add(const float* x) {
      const __m256 v = _mm256_loadu_ps(x);
      const __m256 squares = _mm256_mul_ps(v, v);
      low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(squares)));
      high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(squares, 1)));
    }
    void store(double* s) const {
      _mm256_storeu_pd(s, low);
      _mm256_storeu_pd(s + 4, high);
    }
  };
};

}  // namespace
}  // namespace sinter::cpu::simd
