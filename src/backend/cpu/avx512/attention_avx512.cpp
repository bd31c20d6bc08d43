// AVX-512 attention inner loop: 16 values per vector, masked tails; F16 widened with VCVTPH2PS,
// BF16 by shifting into the top half of each float.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_kernels.h"

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

void attend_group(const AttentionGroupArgs& a) {
  float* row = a.scratch;
  float* max_score = row + std::max(a.head_dim, a.head_dim_v) + 16;
  float* total = max_score + a.heads;
  for (int32_t h = 0; h < a.heads; ++h) {
    max_score[h] = -INFINITY;
    total[h] = 0.0f;
    std::memset(a.out + h * a.head_dim_v, 0, static_cast<size_t>(a.head_dim_v) * sizeof(float));
  }
  float scores[kMaxGroupHeads];
  for (int32_t j = 0; j < a.cell_count; ++j) {
    const int64_t cell = a.cells[j];
    if (j + 1 < a.cell_count) {  // the next rows are scattered: ask for them early
      _mm_prefetch(reinterpret_cast<const char*>(a.keys + a.cells[j + 1] * a.key_stride), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(a.values + a.cells[j + 1] * a.value_stride), _MM_HINT_T0);
    }
    widen(a.cache_type, a.keys + cell * a.key_stride, row, a.head_dim);
    for (int32_t h = 0; h < a.heads; ++h) {
      float s = dot(a.queries + h * a.head_dim, row, a.head_dim) * a.scale;
      if (a.softcap != 0.0f) s = a.softcap * std::tanh(s / a.softcap);
      scores[h] = s;
    }
    widen(a.cache_type, a.values + cell * a.value_stride, row, a.head_dim_v);
    for (int32_t h = 0; h < a.heads; ++h) {
      float rescale = 1.0f, weight = 1.0f;
      if (scores[h] > max_score[h]) {
        rescale = std::exp(max_score[h] - scores[h]);
        max_score[h] = scores[h];
      } else {
        weight = std::exp(scores[h] - max_score[h]);
      }
      update(a.out + h * a.head_dim_v, row, rescale, weight, a.head_dim_v);
      total[h] = total[h] * rescale + weight;
    }
  }
  for (int32_t h = 0; h < a.heads; ++h) {
    const float inverse = total[h] == 0.0f ? 0.0f : 1.0f / total[h];
    update(a.out + h * a.head_dim_v, a.out + h * a.head_dim_v, inverse, 0.0f, a.head_dim_v);
  }
}

}  // namespace

AttendGroupFn attend_group_avx512() { return attend_group; }

}  // namespace sinter::cpu
