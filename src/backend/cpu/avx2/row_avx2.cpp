// AVX2 (F16C) row kernels: 8 values per vector; the tails, and 8 values holding a NaN, go to the
// reference (VCVTPS2PH keeps a NaN's payload, the reference writes the one quiet NaN 0x7e00).
#include <immintrin.h>

#include "backend/cpu/row_kernels.h"

namespace sinter::cpu {
namespace {

void to_f16(const float* in, void* out, int64_t n) {
  const QuantizeRowFn reference = dtype_traits(DType::F16).quantize;
  auto* o = static_cast<uint8_t*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      reference(in + i, o + 2 * i, 8);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 2 * i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  reference(in + i, o + 2 * i, n - i);
}

// Partial sums 0..3 in `low`, 4..7 in `high` (row_kernels.h's order).
double sum_squares(const float* x, int64_t n) {
  __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 squares = _mm256_mul_ps(v, v);
    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(squares)));
    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(squares, 1)));
  }
  alignas(32) double s[8];
  _mm256_store_pd(s, low);
  _mm256_store_pd(s + 4, high);
  return combine_sum_squares(s, x, i, n);
}

}  // namespace

RowKernels row_kernels_avx2() { return RowKernels{to_f16, sum_squares}; }

}  // namespace sinter::cpu
