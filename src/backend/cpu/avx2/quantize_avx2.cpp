// AVX2 activation rounding into the planar layout: the same bits as the reference quantizers
// (quantize_row_q8_0 / q8_1 / q8_k, f32_to_f16, f32_to_bf16), tested against them.
#include "backend/cpu/avx2/avx2_common.h"
#include "backend/cpu/quantize_column_loop.h"

namespace sinter::cpu::avx2 {
namespace {

inline __m256 abs_ps(__m256 v) {
  return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}

inline float reduce_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int32_t reduce_add(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// std::round: to nearest, halves away from zero (s − trunc(s) is exact).
inline __m256 round_half_away(__m256 s) {
  const __m256 t = _mm256_round_ps(s, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = abs_ps(_mm256_sub_ps(s, t));
  const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(s, _mm256_set1_ps(-0.0f)));
  return _mm256_add_ps(t, _mm256_and_ps(up, one));
}

inline float f16_round_trip(float v) {
  return _mm_cvtss_f32(
      _mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
}

// Eight int32 → eight int8 (values already in −127..127).
inline void store_i8x8(int8_t* out, __m256i v) {
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i w8 = _mm_packs_epi16(w16, w16);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), w8);
}

// Q8_0/Q8_1: d = max|x| / 127, q = round(x / d) halves away from zero. Returns Σq of the block.
inline int32_t quantize_block32(const float* x, int8_t* q, float* d_rounded, float* d_exact) {
  __m256 v[4];
  __m256 max_abs = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    max_abs = _mm256_max_ps(max_abs, abs_ps(v[i]));
  }
  const float d = reduce_max(max_abs) / 127.0f;
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  const __m256 inv = _mm256_set1_ps(inverse);
  const __m256 limit = _mm256_set1_ps(127.0f);
  __m256i sum = _mm256_setzero_si256();
  for (int i = 0; i < 4; ++i) {
    const __m256 s = _mm256_min_ps(
        _mm256_max_ps(_mm256_mul_ps(v[i], inv), _mm256_sub_ps(_mm256_setzero_ps(), limit)), limit);
    const __m256i qi = _mm256_cvttps_epi32(round_half_away(s));
    store_i8x8(q + 8 * i, qi);
    sum = _mm256_add_epi32(sum, qi);
  }
  *d_rounded = f16_round_trip(d);
  *d_exact = d;
  return reduce_add(sum);
}

// Q8_K: the value of largest magnitude (the first, on ties) maps to −127; q = nearest (ties to
// even) of x·(−127 / that value), at most 127; d = 1 / (−127 / value).
void quantize_q8_k(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                   uint8_t* column) {
  auto* q = reinterpret_cast<int8_t*>(column);
  auto* d = reinterpret_cast<float*>(column + layout.scale_offset);
  auto* sums = reinterpret_cast<int32_t*>(column + layout.sum_offset);
  const int per_block = format.sum_group > 0 ? 256 / format.sum_group : 0;
  for (int64_t b = 0; b < layout.n / 256; ++b) {
    const float* xb = x + 256 * b;
    int8_t* qb = q + 256 * b;
    __m256 max_abs = _mm256_setzero_ps();
    for (int i = 0; i < 256; i += 8) max_abs = _mm256_max_ps(max_abs, abs_ps(_mm256_loadu_ps(xb + i)));
    const float amax = reduce_max(max_abs);
    if (!(amax > 0.0f)) {
      std::memset(qb, 0, 256);
      d[b] = 0.0f;
      for (int g = 0; g < per_block; ++g) sums[b * per_block + g] = 0;
      continue;
    }
    float max_value = 0.0f;
    for (int i = 0; i < 256; i += 8) {
      const int hit = _mm256_movemask_ps(
          _mm256_cmp_ps(abs_ps(_mm256_loadu_ps(xb + i)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
      if (hit != 0) {
        max_value = xb[i + __builtin_ctz(static_cast<unsigned>(hit))];
        break;
      }
    }
    const float inverse = -127.0f / max_value;
    const __m256 inv = _mm256_set1_ps(inverse);
    int32_t group16[16];
    for (int i = 0; i < 16; ++i) {
      __m256i sum = _mm256_setzero_si256();
      for (int h = 0; h < 2; ++h) {
        const __m256i v =
            _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * i + 8 * h), inv));  // ties to even
        const __m256i clamped = _mm256_min_epi32(v, _mm256_set1_epi32(127));
        store_i8x8(qb + 16 * i + 8 * h, clamped);
        sum = _mm256_add_epi32(sum, clamped);
      }
      group16[i] = reduce_add(sum);
    }
    d[b] = 1.0f / inverse;
    for (int g = 0; g < per_block; ++g) {
      const int span = format.sum_group / 16;
      int32_t total = 0;
      for (int j = 0; j < span; ++j) total += group16[g * span + j];
      sums[b * per_block + g] = total * format.sum_scale;
    }
  }
}

// Applies `round` to 8 floats at a time; the tail through masked loads and stores.
template <class Round>
void round_floats(const float* x, int64_t n, float* out, Round round) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) _mm256_storeu_ps(out + k, round(_mm256_loadu_ps(x + k)));
  if (k < n) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(n - k)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(out + k, mask, round(_mm256_maskload_ps(x + k, mask)));
  }
}

// F16: round to nearest even (F16C), widened back.
void round_f16(const float* x, int64_t n, float* out) {
  round_floats(x, n, out, [](__m256 v) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  });
}

// BF16: the reference's integer rounding to the top 16 bits (ties to even; NaN stays NaN).
void round_bf16(const float* x, int64_t n, float* out) {
  round_floats(x, n, out, [](__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i abs = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));  // both non-negative
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(64 << 16));
    const __m256i top = _mm256_blendv_epi8(rounded, quiet, nan);
    return _mm256_castsi256_ps(_mm256_and_si256(top, _mm256_set1_epi32(static_cast<int32_t>(0xffff0000u))));
  });
}

}  // namespace

void quantize_column(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                     uint8_t* column) {
  quantize_column_loop<quantize_block32, quantize_q8_k, round_f16, round_bf16, f16_round_trip>(
      x, format, layout, column);
}

}  // namespace sinter::cpu::avx2
