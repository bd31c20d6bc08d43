// AVX-512 attention inner loop: 16 values per vector, masked tails; F16 widened with VCVTPH2PS,
// BF16 by shifting into the top half of each float.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_loop.h"

namespace sinter::cpu {
namespace {

__mmask16 tail_mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1);
}

void widen(DType type, const uint8_t* row, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    __m512 v;
    if (type == DType::F16) {
      v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * i));
    } else if (type == DType::BF16) {
      v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + 2 * i)), 16));
    } else {
      v = _mm512_maskz_loadu_ps(m, row + 4 * i);
    }
    _mm512_mask_storeu_ps(out + i, m, v);
  }
}

float dot(const float* a, const float* b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// sum = sum * rescale + row * weight
void update(float* sum, const float* row, float rescale, float weight, int64_t n) {
  const __m512 r = _mm512_set1_ps(rescale);
  const __m512 w = _mm512_set1_ps(weight);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 s = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, sum + i), r);
    _mm512_mask_storeu_ps(sum + i, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row + i), w, s));
  }
}

struct Ops {
  static void widen(DType type, const uint8_t* row, float* out, int64_t n) { sinter::cpu::widen(type, row, out, n); }
  static float dot(const float* a, const float* b, int64_t n) { return sinter::cpu::dot(a, b, n); }
  static void update(float* sum, const float* row, float rescale, float weight, int64_t n) {
    sinter::cpu::update(sum, row, rescale, weight, n);
  }
};

}  // namespace

AttendGroupFn attend_group_avx512() { return attend_group_loop<Ops>; }

}  // namespace sinter::cpu
