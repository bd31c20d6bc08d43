// AVX-512 row kernels: 16 values per vector; the tails, and 16 values holding a NaN, go to the
// reference (VCVTPS2PH keeps a NaN's payload, the reference writes the one quiet NaN 0x7e00).
#include <immintrin.h>

#include "backend/cpu/row_kernels.h"

namespace sinter::cpu {
namespace {

void to_f16(const float* in, void* out, int64_t n) {
  const QuantizeRowFn reference = dtype_traits(DType::F16).quantize;
  auto* o = static_cast<uint8_t*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(in + i);
    if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
      reference(in + i, o + 2 * i, 16);
      continue;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 2 * i),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  reference(in + i, o + 2 * i, n - i);
}

// The 8 partial sums of row_kernels.h's order in one vector, 8 values at a time.
double sum_squares(const float* x, int64_t n) {
  __m512d partial = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    partial = _mm512_add_pd(partial, _mm512_cvtps_pd(_mm256_mul_ps(v, v)));
  }
  alignas(64) double s[8];
  _mm512_store_pd(s, partial);
  return combine_sum_squares(s, x, i, n);
}

}  // namespace

RowKernels row_kernels_avx512() { return RowKernels{to_f16, sum_squares}; }

}  // namespace sinter::cpu
