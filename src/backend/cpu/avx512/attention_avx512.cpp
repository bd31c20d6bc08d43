// AVX-512 attention inner loop: 16 values per vector, masked tails; F16 widened with VCVTPH2PS,
// BF16 by shifting into the top half of each float; the scores of 16 cells summed across lanes
// together. One token over an F16 cache takes the direct forms (rows widened in registers).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_loop.h"
#include "backend/cpu/simd/intrinsics.h"
#include "backend/cpu/simd/isa_avx512.h"

namespace sinter::cpu {
namespace {

using V = simd::Avx512;

__m512 widen16(DType type, const uint8_t* row, __mmask16 m) {
  if (type == DType::F16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row));
  if (type == DType::BF16) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row)), 16));
  }
  return _mm512_maskz_loadu_ps(m, row);
}

void widen(DType type, const uint8_t* row, float* out, int64_t n) {
  const int64_t bytes = type == DType::F32 ? 4 : 2;
  int64_t i = 0;
  if (type == DType::F16) {  // the common case without masks
    for (; i + 16 <= n; i += 16) {
      _mm512_storeu_ps(out + i,
                       _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i))));
    }
  }
  for (; i < n; i += 16) {
    const __mmask16 m = V::tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m, widen16(type, row + bytes * i, m));
  }
}

// Lane j of the result = the sum of v[j]'s 16 lanes: a transposing tree (pairs within 128-bit
// lanes, then pairs of pairs, then across the four 128-bit lanes), 45 operations for 16 sums.
__m512 sum_across(const __m512* v) {
  __m512 t[8], u[4];
  for (int k = 0; k < 8; ++k) {
    t[k] =
        _mm512_add_ps(_mm512_unpacklo_ps(v[2 * k], v[2 * k + 1]), _mm512_unpackhi_ps(v[2 * k], v[2 * k + 1]));
  }
  for (int k = 0; k < 4; ++k) {
    const __m512d c = _mm512_castps_pd(t[2 * k]), d = _mm512_castps_pd(t[2 * k + 1]);
    u[k] =
        _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(c, d)), _mm512_castpd_ps(_mm512_unpackhi_pd(c, d)));
  }
  // u[k], 128-bit lane L: the lane-L sums of v[4k .. 4k + 3].
  const __m512 x01 =
      _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x88), _mm512_shuffle_f32x4(u[0], u[1], 0xdd));
  const __m512 x23 =
      _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x88), _mm512_shuffle_f32x4(u[2], u[3], 0xdd));
  return _mm512_add_ps(_mm512_shuffle_f32x4(x01, x23, 0x88), _mm512_shuffle_f32x4(x01, x23, 0xdd));
}

float exp_shifted(float* x, float shift, int64_t n) {
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = V::tail_mask(n - i);
    const __m512 e = V::exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_set1_ps(shift)));
    _mm512_mask_storeu_ps(x + i, m, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(m, e));
  }
  return _mm512_reduce_add_ps(sum);
}

void scale(float* x, float factor, int64_t n) {
  const __m512 f = _mm512_set1_ps(factor);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = V::tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), f));
  }
}

// x *= factor; returns the maximum of x (a NaN is passed over, as std::max(max, NaN) does).
float scale_max(float* x, float factor, int64_t n) {
  const __m512 f = _mm512_set1_ps(factor);
  __m512 m = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = V::tail_mask(n - i);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), f);
    _mm512_mask_storeu_ps(x + i, k, v);
    m = _mm512_mask_max_ps(m, k, v, m);  // MAXPS gives its second operand when either is NaN
  }
  return _mm512_reduce_max_ps(m);
}

// out += Σ_j weights[j] · rows[j·n ..]: up to 64 values of out stay in 4 registers over the
// cells (4 independent FMA chains).
void accumulate(float* out, const float* rows, const float* weights, int64_t count, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) {
    __mmask16 m[4];
    __m512 acc[4];
    for (int u = 0; u < 4; ++u) {
      m[u] = i + 16 * u < n ? V::tail_mask(n - i - 16 * u)
                            : static_cast<__mmask16>(0);  // all ones but at the end
      acc[u] = _mm512_maskz_loadu_ps(m[u], out + i + 16 * u);
    }
    for (int64_t j = 0; j < count; ++j) {
      const __m512 w = _mm512_set1_ps(weights[j]);
      const float* row = rows + j * n + i;
      for (int u = 0; u < 4; ++u)
        acc[u] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[u], row + 16 * u), w, acc[u]);
    }
    for (int u = 0; u < 4; ++u) _mm512_mask_storeu_ps(out + i + 16 * u, m[u], acc[u]);
  }
}

// The rows of a block as dots_pass and accumulate_held read them: widened into the scratch, or an F16 cache's
// own rows widened in registers (the same values; masked lanes are zeros in both).
struct WidenedRows {
  const float* rows;
  int64_t n;
  __m512 load(int64_t j, int64_t i) const { return _mm512_loadu_ps(rows + j * n + i); }
  __m512 load(int64_t j, int64_t i, __mmask16 m) const { return _mm512_maskz_loadu_ps(m, rows + j * n + i); }
};
struct CachedF16Rows {
  const uint8_t* const* rows;
  __m512 load(int64_t j, int64_t i) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[j] + 2 * i)));
  }
  __m512 load(int64_t j, int64_t i, __mmask16 m) const {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, rows[j] + 2 * i));
  }
};

// accumulate for H heads at once (H ≤ 4): each of the block's value rows is loaded once for all
// of them, 64 values at a time (H × 4 accumulators and 4 row registers). Per head and lane the
// sums are the same, in the same order, as accumulate's.
template <int H, class Rows>
void accumulate_held(float* out, int64_t out_stride, const Rows& rows, const float* weights,
                     int64_t weight_stride, int64_t count, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) {
    __mmask16 m[4];
    __m512 acc[H][4];
    for (int u = 0; u < 4; ++u) {
      m[u] = i + 16 * u < n ? V::tail_mask(n - i - 16 * u) : static_cast<__mmask16>(0);
      for (int h = 0; h < H; ++h) acc[h][u] = _mm512_maskz_loadu_ps(m[u], out + h * out_stride + i + 16 * u);
    }
    for (int64_t j = 0; j < count; ++j) {
      __m512 r[4];
      for (int u = 0; u < 4; ++u) r[u] = rows.load(j, i + 16 * u, m[u]);
      for (int h = 0; h < H; ++h) {
        const __m512 w = _mm512_set1_ps(weights[h * weight_stride + j]);
        for (int u = 0; u < 4; ++u) acc[h][u] = _mm512_fmadd_ps(r[u], w, acc[h][u]);
      }
    }
    for (int u = 0; u < 4; ++u) {
      for (int h = 0; h < H; ++h) _mm512_mask_storeu_ps(out + h * out_stride + i + 16 * u, m[u], acc[h][u]);
    }
  }
}

void accumulate_heads(float* out, int64_t out_stride, int32_t heads, const float* rows, const float* weights,
                      int64_t weight_stride, int64_t count, int64_t n) {
  for_head_quads(heads, [&]<int H>(int32_t h) {
    accumulate_held<H>(out + h * out_stride, out_stride, WidenedRows{rows, n}, weights + h * weight_stride,
                       weight_stride, count, n);
  });
}

// Ops::accumulate_direct: accumulate_heads over an F16 cache's own rows.
void accumulate_direct(float* out, int64_t out_stride, int32_t heads, const uint8_t* const* rows,
                       const float* weights, int64_t weight_stride, int64_t count, int64_t n) {
  for_head_quads(heads, [&]<int H>(int32_t h) {
    accumulate_held<H>(out + h * out_stride, out_stride, CachedF16Rows{rows}, weights + h * weight_stride,
                       weight_stride, count, n);
  });
}

// out[h·kCellBlock + j] = q_h · row j for H heads (queries n apart), 16 rows at a time: each
// row's 16-value pieces are loaded (an F16 cache's widened in a register) once for the H heads,
// whose queries stay in registers when n = 16·V (V > 0; V = 0: any n, the last piece masked, the
// queries read as they are used). Per head and row one fma chain from zero and one sum_across,
// whatever H and the rows' form, so the direct scores are bit for bit the widened ones. `ahead`
// (when given) is asked for the next block's rows one row at a time.
template <int H, int V, class Rows>
void dots_pass(const float* q, int64_t n, const Rows& rows, int32_t count, float* out,
               const RowsAhead* ahead) {
  __m512 qv[H][V > 0 ? V : 1];
  if constexpr (V > 0) {
    for (int h = 0; h < H; ++h) {
      for (int u = 0; u < V; ++u) qv[h][u] = _mm512_loadu_ps(q + h * n + 16 * u);
    }
  }
  for (int32_t j = 0; j < count; j += 16) {
    __m512 v[H][16];
    const int32_t here = std::min<int32_t>(16, count - j);
    for (int32_t r = 0; r < 16; ++r) {
      __m512 acc[H];
      for (int h = 0; h < H; ++h) acc[h] = _mm512_setzero_ps();
      if (r < here) {
        if (ahead != nullptr) ahead->ask(j + r, j + r + 1);
        if constexpr (V > 0) {
          for (int u = 0; u < V; ++u) {
            const __m512 k = rows.load(j + r, 16 * u);
            for (int h = 0; h < H; ++h) acc[h] = _mm512_fmadd_ps(qv[h][u], k, acc[h]);
          }
        } else {
          for (int64_t i = 0; i < n; i += 16) {
            const __mmask16 m = V::tail_mask(n - i);
            const __m512 k = rows.load(j + r, i, m);
            for (int h = 0; h < H; ++h)
              acc[h] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + h * n + i), k, acc[h]);
          }
        }
      }
      for (int h = 0; h < H; ++h) v[h][r] = acc[h];
    }
    for (int h = 0; h < H; ++h)
      _mm512_mask_storeu_ps(out + h * kCellBlock + j, V::tail_mask(here), sum_across(v[h]));
  }
}

// Heads `G` at a time (4; 2 for n = 128, whose 8 query registers per head would not fit four),
// with the queries held for the common head sizes 64 and 128.
template <class Rows>
void dots_heads(const float* q, int32_t heads, int64_t n, const Rows& rows, int32_t count, float* out,
                const RowsAhead* ahead) {
  const auto pass = [&]<int H>(int32_t h) {
    const RowsAhead* asks = h == 0 ? ahead : nullptr;  // the first pass asks for the next rows
    if (n == 64) {
      dots_pass<H, 4>(q + h * n, n, rows, count, out + h * kCellBlock, asks);
    } else if (n == 128) {
      if constexpr (H <= 2) dots_pass<H, 8>(q + h * n, n, rows, count, out + h * kCellBlock, asks);
    } else {
      dots_pass<H, 0>(q + h * n, n, rows, count, out + h * kCellBlock, asks);
    }
  };
  if (n == 128) {
    for_head_groups<2>(heads, pass);
  } else {
    for_head_groups<4>(heads, pass);
  }
}

// out[j] = q · rows[j·n ..] for j < count (one head over the widened block).
void dots(const float* q, const float* rows, int64_t count, int64_t n, float* out) {
  dots_heads(q, 1, n, WidenedRows{rows, n}, static_cast<int32_t>(count), out, nullptr);
}

// Ops::dots_direct: the scores of the heads over `count` cached F16 rows (attention_loop.h),
// out [heads][kCellBlock].
void dots_direct(const float* q, int32_t heads, int64_t n, const uint8_t* const* rows, int32_t count,
                 float* out, const RowsAhead& ahead) {
  dots_heads(q, heads, n, CachedF16Rows{rows}, count, out, &ahead);
}

// The operations attention_loop.h is instantiated with (constant function pointers: calls
// through them compile to direct calls).
struct Ops {
  static constexpr auto widen = sinter::cpu::widen;
  static constexpr auto dots = sinter::cpu::dots;
  static constexpr auto exp_shifted = sinter::cpu::exp_shifted;
  static constexpr auto scale = sinter::cpu::scale;
  static constexpr auto scale_max = sinter::cpu::scale_max;
  static constexpr auto accumulate = sinter::cpu::accumulate;
  static constexpr auto accumulate_heads = sinter::cpu::accumulate_heads;
  static constexpr auto dots_direct = sinter::cpu::dots_direct;
  static constexpr auto accumulate_direct = sinter::cpu::accumulate_direct;
};

}  // namespace

AttendGroupFn attend_group_avx512() { return attend_group_loop<Ops>; }

}  // namespace sinter::cpu
