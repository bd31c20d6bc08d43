// AVX2 activation functions: 8 values per vector, a masked tail.
#include <immintrin.h>

#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/avx2/vec_math_avx2.h"

namespace sinter::cpu {
namespace {

__m256 silu8(__m256 x) {
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

void silu_row(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 y = silu8(_mm256_loadu_ps(gate + i));
    if (up != nullptr) y = _mm256_mul_ps(y, _mm256_loadu_ps(up + i));
    _mm256_storeu_ps(out + i, y);
  }
  if (i < n) {
    const __m256i m = tail_mask8(n - i);
    __m256 y = silu8(_mm256_maskload_ps(gate + i, m));
    if (up != nullptr) y = _mm256_mul_ps(y, _mm256_maskload_ps(up + i, m));
    _mm256_maskstore_ps(out + i, m, y);
  }
}

}  // namespace

SiluRowFn silu_row_avx2() { return silu_row; }

}  // namespace sinter::cpu
