// Activation rounding into the planar layout (kernels.h), the block operations written once over
// an ISA's vector traits V (simd/isa_*.h) and handed to quantize_column_loop.h: the same bits as
// the reference quantizers (quantize_row_q8_0 / q8_1 / q8_k, f32_to_f16, f32_to_bf16), tested
// against them. Every step is exact or lane-wise, so the vector width does not change a bit (the
// maxima and integer sums below do not depend on the order they are taken in).
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/quantize_column_loop.h"
#include "backend/cpu/simd/intrinsics.h"

namespace sinter::cpu::simd {
namespace {

// std::round: to nearest, halves away from zero (s − trunc(s) is exact).
template <class V>
typename V::F round_half_away(typename V::F s) {
  const typename V::F t = V::round_trunc(s);
  const auto up = V::ge(V::abs(V::sub(s, t)), V::set1(0.5f));
  const typename V::F one = V::or_(V::set1(1.0f), V::and_(s, V::set1(-0.0f)));
  return V::add_where(t, up, one);
}

inline float f16_round_trip(float v) {
  return _mm_cvtss_f32(
      _mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
}

// Q8_0/Q8_1: d = max|x| / 127, q = round(x / d) halves away from zero (|x·(1/d)| ≤ 127 up to
// rounding, which the reference clamps; std::round of a value in (127, 127.5) is 127 too).
// Returns Σq of the block.
template <class V>
int32_t quantize_block32(const float* x, int8_t* q, float* d_rounded, float* d_exact) {
  constexpr int kVectors = 32 / V::kLanes;
  typename V::F v[kVectors];
  typename V::F max_abs = V::zero();  // max(0, a) = a for every |x|, NaN included
  for (int i = 0; i < kVectors; ++i) {
    v[i] = V::load(x + V::kLanes * i);
    max_abs = V::max(max_abs, V::abs(v[i]));
  }
  const float d = V::reduce_max(max_abs) / 127.0f;
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  const typename V::F inv = V::set1(inverse);
  const typename V::F limit = V::set1(127.0f);
  typename V::I sum = V::zero_i();
  for (int i = 0; i < kVectors; ++i) {
    const typename V::F s = V::min(V::max(V::mul(v[i], inv), V::sub(V::zero(), limit)), limit);
    const typename V::I qi = V::to_int_trunc(round_half_away<V>(s));
    V::store_i8(q + V::kLanes * i, qi);
    sum = V::add_i(sum, qi);
  }
  *d_rounded = f16_round_trip(d);
  *d_exact = d;
  return V::reduce_add(sum);
}

// Q8_K: the value of largest magnitude (the first, on ties) maps to −127; q = nearest (ties to
// even) of x·(−127 / that value), at most 127; d = 1 / (−127 / value).
template <class V>
void quantize_q8_k(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                   uint8_t* column) {
  constexpr int kL = V::kLanes;
  auto* q = reinterpret_cast<int8_t*>(column);
  auto* d = reinterpret_cast<float*>(column + layout.scale_offset);
  auto* sums = reinterpret_cast<int32_t*>(column + layout.sum_offset);
  const int per_block = format.sum_group > 0 ? 256 / format.sum_group : 0;
  for (int64_t b = 0; b < layout.n / 256; ++b) {
    const float* xb = x + 256 * b;
    int8_t* qb = q + 256 * b;
    typename V::F max_abs = V::zero();
    for (int i = 0; i < 256; i += kL) max_abs = V::max(max_abs, V::abs(V::load(xb + i)));
    const float amax = V::reduce_max(max_abs);
    if (!(amax > 0.0f)) {
      std::memset(qb, 0, 256);
      d[b] = 0.0f;
      for (int g = 0; g < per_block; ++g) sums[b * per_block + g] = 0;
      continue;
    }
    float max_value = 0.0f;
    for (int i = 0; i < 256; i += kL) {
      const unsigned hit = V::eq_bits(V::abs(V::load(xb + i)), V::set1(amax));
      if (hit != 0) {
        max_value = xb[i + __builtin_ctz(hit)];
        break;
      }
    }
    const float inverse = -127.0f / max_value;
    const typename V::F inv = V::set1(inverse);
    int32_t group16[16];  // Σq of each 16 values
    for (int i = 0; i < 16; ++i) {
      typename V::I sum = V::zero_i();
      for (int h = 0; h < 16; h += kL) {
        const typename V::I v = V::to_int_nearest(V::mul(V::load(xb + 16 * i + h), inv));  // ties to even
        const typename V::I clamped = V::min_i(v, 127);
        V::store_i8(qb + 16 * i + h, clamped);
        sum = V::add_i(sum, clamped);
      }
      group16[i] = V::reduce_add(sum);
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

// Applies `round` (F → F, lane-wise) to kLanes floats at a time; the tail through masks.
template <class V, class Round>
void round_floats(const float* x, int64_t n, float* out, Round round) {
  int64_t k = 0;
  for (; k + V::kLanes <= n; k += V::kLanes) V::store(out + k, round(V::load(x + k)));
  if (k < n) {
    const typename V::Mask mask = V::tail_mask(n - k);
    V::store(out + k, mask, round(V::load(x + k, mask)));
  }
}

// F16: round to nearest even (F16C), widened back. BF16: the reference's integer rounding.
template <class V>
void round_f16(const float* x, int64_t n, float* out) {
  round_floats<V>(x, n, out, V::f16_round_trip);
}
template <class V>
void round_bf16(const float* x, int64_t n, float* out) {
  round_floats<V>(x, n, out, V::bf16_round_trip);
}

template <class V>
void quantize_column_of(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                        uint8_t* column) {
  quantize_column_loop<quantize_block32<V>, quantize_q8_k<V>, round_f16<V>, round_bf16<V>, f16_round_trip>(
      x, format, layout, column);
}

}  // namespace
}  // namespace sinter::cpu::simd
