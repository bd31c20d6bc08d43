// F32 vector helpers with AVX2 + FMA for the attention and activation files under
// src/backend/cpu/avx2/: tail masks and e^x on 8 floats. Internal linkage: code compiled with
// AVX2 flags is never linked into a generic caller.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/exp_polynomial.h"

namespace sinter::cpu {
namespace {

// The lanes of the `remaining` values left (1 to 8), for VMASKMOVPS loads and stores.
inline __m256i tail_mask8(int64_t remaining) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// e^x in every lane (exp_polynomial.h); 2^n is built in the exponent bits, so inputs below
// the smallest normal result give 0 and inputs above the largest give +inf (NaN stays NaN: the
// clamps take x as their second operand, which MINPS/MAXPS return when it is NaN).
inline __m256 exp8(__m256 x) {
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

}  // namespace
}  // namespace sinter::cpu
