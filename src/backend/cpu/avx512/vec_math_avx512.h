// F32 vector helpers with AVX-512 for the attention and activation files under
// src/backend/cpu/avx512/: tail masks and e^x on 16 floats. Internal linkage: code compiled with
// AVX-512 flags is never linked into a generic caller.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/exp_polynomial.h"

namespace sinter::cpu {
namespace {

// The lanes of the `remaining` values left (all 16 when at least 16 are).
inline __mmask16 tail_mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1);
}

// e^x in every lane (exp_polynomial.h); VSCALEFPS applies 2^n, so inputs far below zero
// underflow to 0 and inputs above ~88.7 overflow to +inf as they should. The clamps only keep n
// finite (NaN stays NaN: they take x as their second operand, which MINPS/MAXPS return when it
// is NaN).
inline __m512 exp16(__m512 x) {
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

}  // namespace
}  // namespace sinter::cpu
