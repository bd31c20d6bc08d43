// AVX2 attention inner loop: 8 values per vector, scalar tails; F16 widened with VCVTPH2PS.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_loop.h"

namespace sinter::cpu {
namespace {

void widen(DType type, const uint8_t* row, float* out, int64_t n) {
  int64_t i = 0;
  if (type == DType::F16) {
    for (; i + 8 <= n; i += 8) {
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i))));
    }
    for (; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, row + 2 * i, 2);
      out[i] = _cvtsh_ss(h);
    }
  } else if (type == DType::BF16) {
    for (; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, row + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(out + i, &bits, 4);
    }
  } else {
    std::memcpy(out, row, static_cast<size_t>(n) * sizeof(float));
  }
}

float dot(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  // Reduce 8 lanes in a fixed order, then the tail.
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  float sum = _mm_cvtss_f32(lo);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void update(float* sum, const float* row, float rescale, float weight, int64_t n) {
  const __m256 r = _mm256_set1_ps(rescale);
  const __m256 w = _mm256_set1_ps(weight);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(sum + i, _mm256_fmadd_ps(_mm256_loadu_ps(row + i), w, _mm256_mul_ps(_mm256_loadu_ps(sum + i), r)));
  }
  for (; i < n; ++i) sum[i] = std::fma(row[i], weight, sum[i] * rescale);
}

struct Ops {
  static void widen(DType type, const uint8_t* row, float* out, int64_t n) { sinter::cpu::widen(type, row, out, n); }
  static float dot(const float* a, const float* b, int64_t n) { return sinter::cpu::dot(a, b, n); }
  static void update(float* sum, const float* row, float rescale, float weight, int64_t n) {
    sinter::cpu::update(sum, row, rescale, weight, n);
  }
};

}  // namespace

AttendGroupFn attend_group_avx2() { return attend_group_loop<Ops>; }

}  // namespace sinter::cpu
