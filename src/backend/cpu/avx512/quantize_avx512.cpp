// AVX-512 activation rounding into the planar layout: the same bits as the reference quantizers
// (quantize_row_q8_0 / q8_1 / q8_k, f32_to_f16, f32_to_bf16), tested against them.
#include "backend/cpu/avx512/avx512_common.h"
#include "backend/cpu/quantize_column_loop.h"

namespace sinter::cpu::avx512 {
namespace {

// std::round: to nearest, halves away from zero (s − trunc(s) is exact).
inline __m512 round_half_away(__m512 s) {
  const __m512 t = _mm512_roundscale_ps(s, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(s, t));
  const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
  const __m512 one = _mm512_or_ps(_mm512_set1_ps(1.0f), _mm512_and_ps(s, _mm512_set1_ps(-0.0f)));
  return _mm512_mask_add_ps(t, up, t, one);
}

inline float f16_round_trip(float v) {
  return _mm_cvtss_f32(
      _mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
}

// Q8_0/Q8_1: d = max|x| / 127, q = round(x / d) halves away from zero (|x·(1/d)| ≤ 127 up to
// rounding, which the reference clamps; std::round of a value in (127, 127.5) is 127 too).
// Returns Σq of the block.
inline int32_t quantize_block32(const float* x, int8_t* q, float* d_rounded, float* d_exact) {
  const __m512 x0 = _mm512_loadu_ps(x);
  const __m512 x1 = _mm512_loadu_ps(x + 16);
  const float max_abs = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
  const float d = max_abs / 127.0f;
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  const __m512 inv = _mm512_set1_ps(inverse);
  const __m512 limit = _mm512_set1_ps(127.0f);
  const __m512 s0 = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x0, inv), -limit), limit);
  const __m512 s1 = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x1, inv), -limit), limit);
  const __m512i q0 = _mm512_cvttps_epi32(round_half_away(s0));
  const __m512i q1 = _mm512_cvttps_epi32(round_half_away(s1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(q0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(q1));
  *d_rounded = f16_round_trip(d);
  *d_exact = d;
  return _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
}

// Q8_K: the value of largest magnitude (the first, on ties) maps to −127; q = nearest (ties to
// even) of x·(−127 / that value), at most 127; d = 1 / (−127 / value).
void quantize_q8_k(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                   uint8_t* column) {
  auto* q = reinterpret_cast<int8_t*>(column);
  auto* d = reinterpret_cast<float*>(column + layout.scale_offset);
  auto* sums = reinterpret_cast<int32_t*>(column + layout.sum_offset);
  const int per_group = format.sum_group > 0 ? 256 / format.sum_group : 0;
  for (int64_t b = 0; b < layout.n / 256; ++b) {
    const float* xb = x + 256 * b;
    int8_t* qb = q + 256 * b;
    __m512 max_abs = _mm512_setzero_ps();
    for (int i = 0; i < 256; i += 16)
      max_abs = _mm512_max_ps(max_abs, _mm512_abs_ps(_mm512_loadu_ps(xb + i)));
    const float amax = _mm512_reduce_max_ps(max_abs);
    if (!(amax > 0.0f)) {
      std::memset(qb, 0, 256);
      d[b] = 0.0f;
      for (int g = 0; g < per_group; ++g) sums[b * per_group + g] = 0;
      continue;
    }
    float max_value = 0.0f;
    for (int i = 0; i < 256; i += 16) {
      const __mmask16 hit =
          _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(xb + i)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (hit != 0) {
        max_value = xb[i + __builtin_ctz(hit)];
        break;
      }
    }
    const float inverse = -127.0f / max_value;
    const __m512 inv = _mm512_set1_ps(inverse);
    __m512i group_sums[16];
    for (int i = 0; i < 16; ++i) {
      const __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb + 16 * i), inv));  // ties to even
      const __m512i clamped = _mm512_min_epi32(v, _mm512_set1_epi32(127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qb + 16 * i), _mm512_cvtepi32_epi8(clamped));
      group_sums[i] = clamped;
    }
    d[b] = 1.0f / inverse;
    for (int g = 0; g < per_group; ++g) {
      const int span = format.sum_group / 16;
      __m512i acc = group_sums[g * span];
      for (int j = 1; j < span; ++j) acc = _mm512_add_epi32(acc, group_sums[g * span + j]);
      sums[b * per_group + g] = _mm512_reduce_add_epi32(acc) * format.sum_scale;
    }
  }
}

// F16: round to nearest even (F16C), widened back. BF16: the reference's integer rounding.
void round_f16(const float* x, int64_t n, float* out) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + k), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_storeu_ps(out + k, _mm512_cvtph_ps(h));
  }
  for (; k < n; ++k) out[k] = f16_round_trip(x[k]);
}

inline __m512i bf16_round_bits(__m512i bits) {
  const __m512i abs = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  const __m512i quiet = _mm512_or_si512(bits, _mm512_set1_epi32(64 << 16));
  const __m512i top = _mm512_mask_blend_epi32(nan, rounded, quiet);
  return _mm512_and_si512(top, _mm512_set1_epi32(static_cast<int32_t>(0xffff0000u)));
}

void round_bf16(const float* x, int64_t n, float* out) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(x + k));
    _mm512_storeu_ps(out + k, _mm512_castsi512_ps(bf16_round_bits(bits)));
  }
  if (k < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - k)) - 1);
    const __m512i bits = _mm512_castps_si512(_mm512_maskz_loadu_ps(mask, x + k));
    _mm512_mask_storeu_ps(out + k, mask, _mm512_castsi512_ps(bf16_round_bits(bits)));
  }
}

}  // namespace

void quantize_column(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                     uint8_t* column) {
  quantize_column_loop<quantize_block32, quantize_q8_k, round_f16, round_bf16, f16_round_trip>(
      x, format, layout, column);
}

}  // namespace sinter::cpu::avx512
