// AVX-512 (F, BW, VL, DQ + F16C) vector traits: the per-ISA primitives that the kernel family
// templates under simd/ are written over (one 512-bit register: 16 floats or 16 int32), with the
// same names and meanings as simd/isa_avx2.h. Internal linkage (anonymous namespace): code
// compiled with AVX-512 flags is never linked into a generic caller. Include only from files
// compiled with AVX-512 flags.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "backend/cpu/exp_polynomial.h"
#include "backend/cpu/simd/intrinsics.h"

namespace sinter::cpu::simd {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  using F = __m512;
  using I = __m512i;
  using Mask = __mmask16;

  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }  // a·b + c, one rounding
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F abs(F v) { return _mm512_abs_ps(v); }
  static F round_trunc(F v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  // a + b where `where` holds, a elsewhere (a masked add: a's own bits, −0 kept).
  static F add_where(F a, Mask where, F b) { return _mm512_mask_add_ps(a, where, a, b); }
  static Mask ge(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static F or_(F a, F b) { return _mm512_or_ps(a, b); }
  static F and_(F a, F b) { return _mm512_and_ps(a, b); }
  // Bit j set where lane j of a equals b (ordered).
  static unsigned eq_bits(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static bool any_nan(F v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0; }

  // Transposes the 16×16 matrix whose row a is r[a]: afterwards r[b] holds column b (r[b][a] =
  // the old r[a][b]). Four rounds of 16 shuffles: pairs of values, pairs of pairs (each 128-bit
  // lane then holds a 4×4 block), then the 128-bit lanes twice.
  static void transpose(F (&r)[kLanes]) {
    F t[kLanes];
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    // u[4i + m], 128-bit lane k: column 4k + m of rows 4i .. 4i + 3.
    for (int i = 0; i < 16; i += 4) {
      const __m512d t0 = _mm512_castps_pd(t[i]), t1 = _mm512_castps_pd(t[i + 1]);
      const __m512d t2 = _mm512_castps_pd(t[i + 2]), t3 = _mm512_castps_pd(t[i + 3]);
      r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
      r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
      r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
      r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
    // Column 4k + m is lane k of u[m], u[4 + m], u[8 + m], u[12 + m].
    for (int m = 0; m < 4; ++m) {
      t[m] = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x44);      // lanes 0, 1 of u[m], u[4 + m]
      t[4 + m] = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xee);  // lanes 2, 3
      t[8 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x44);
      t[12 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xee);
    }
    for (int m = 0; m < 4; ++m) {
      r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
      r[4 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd);
      r[8 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0x88);
      r[12 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0xdd);
    }
  }

  // Horizontal reductions.
  static float reduce_max(F v) { return _mm512_reduce_max_ps(v); }
  static int32_t reduce_add(I v) { return _mm512_reduce_add_epi32(v); }

  // Tails: the lanes of the `remaining` values left (all 16 when at least 16 are).
  static Mask tail_mask(int64_t remaining) {
    return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1);
  }
  static F load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }  // zeros elsewhere
  static void store(float* p, Mask m, F v) { _mm512_mask_storeu_ps(p, m, v); }
  // Writes the first `lanes` lanes of v (1 to kLanes).
  static void store_lanes(float* out, F v, int lanes) {
    if (lanes == kLanes) {
      _mm512_storeu_ps(out, v);
    } else {
      _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << lanes) - 1), v);
    }
  }

  // Integers.
  static I zero_i() { return _mm512_setzero_si512(); }
  static I add_i(I a, I b) { return _mm512_add_epi32(a, b); }
  static I min_i(I a, int32_t b) { return _mm512_min_epi32(a, _mm512_set1_epi32(b)); }
  static I to_int_trunc(F v) { return _mm512_cvttps_epi32(v); }
  static I to_int_nearest(F v) { return _mm512_cvtps_epi32(v); }  // ties to even (MXCSR default)
  static F as_float(I v) { return _mm512_castsi512_ps(v); }
  static I as_int(F v) { return _mm512_castps_si512(v); }
  // kLanes int32 (values in −128..127) → kLanes int8.
  static void store_i8(int8_t* out, I v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v));
  }

  // F16 and BF16.
  static F load_f16(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static F load_bf16(const uint8_t* p) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  // Rounded to nearest even; a NaN keeps its payload (VCVTPS2PH).
  static void store_f16(uint8_t* p, F v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static F f16_round_trip(F v) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // The reference's BF16 rounding of x's bits to the top 16 (ties to even; NaN quieted), widened.
  static F bf16_round_trip(F v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i abs = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(0x7f800000));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
    const __m512i quiet = _mm512_or_si512(bits, _mm512_set1_epi32(64 << 16));
    const __m512i top = _mm512_mask_blend_epi32(nan, rounded, quiet);
    return _mm512_castsi512_ps(_mm512_and_si512(top, _mm512_set1_epi32(static_cast<int32_t>(0xffff0000u))));
  }

  // e^x in every lane (exp_polynomial.h); VSCALEFPS applies 2^n, so inputs far below zero
  // underflow to 0 and inputs above ~88.7 overflow to +inf as they should. The clamps only keep n
  // finite (NaN stays NaN: they take x as their second operand, which MINPS/MAXPS return when it
  // is NaN).
  static F exp(F x) {
    using namespace exp_poly;
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(200.0f), x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
    __m512 p = _mm512_set1_ps(kP0);
    for (float c : {kP1, kP2, kP3, kP4, kP5}) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    const __m512 e = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(e, n);
  }

  // Σ double(x[i]·x[i]) of 8 values into 8 double partial sums (row_kernels.h's order): one
  // 8-double vector.
  struct SumSquares8 {
    __m512d partial = _mm512_setzero_pd();
    void add(const float* x) {
      const __m256 v = _mm256_loadu_ps(x);
      partial = _mm512_add_pd(partial, _mm512_cvtps_pd(_mm256_mul_ps(v, v)));
    }
    void store(double* s) const { _mm512_storeu_pd(s, partial); }
  };
};

}  // namespace
}  // namespace sinter::cpu::simd
