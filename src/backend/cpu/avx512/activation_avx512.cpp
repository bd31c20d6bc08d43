// AVX-512 activation functions: 16 values per vector, a masked tail.
#include <immintrin.h>

#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/avx512/vec_math_avx512.h"

namespace sinter::cpu {
namespace {

void silu_row(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 x = _mm512_maskz_loadu_ps(m, gate + i);
    __m512 y = _mm512_div_ps(x, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
    if (up != nullptr) y = _mm512_mul_ps(y, _mm512_maskz_loadu_ps(m, up + i));
    _mm512_mask_storeu_ps(out + i, m, y);
  }
}

}  // namespace

SiluRowFn silu_row_avx512() { return silu_row; }

}  // namespace sinter::cpu
