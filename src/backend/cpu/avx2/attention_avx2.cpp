// AVX2 attention inner loop: 8 values per vector, scalar tails; F16 widened with VCVTPH2PS.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_loop.h"
#include "backend/cpu/simd/isa_avx2.h"

namespace sinter::cpu {
namespace {

using V = simd::Avx2;

void widen(DType type, const uint8_t* row, float* out, int64_t n) {
  int64_t i = 0;
  if (type == DType::F16) {
    for (; i + 8 <= n; i += 8) {
      _mm256_storeu_ps(out + i,
                       _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i))));
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

// 8 lanes → 4: the low half plus the high half.
inline __m128 fold_halves(__m256 acc) {
  return _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
}

// The sum of acc's 8 lanes in a fixed order, (l0 + l2) + (l1 + l3) of the folded halves: dot's.
inline float sum_in_dot_order(__m256 acc) {
  __m128 lo = fold_halves(acc);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

// The same sums of 4 accumulators at once, the lanes transposed.
inline __m128 sums_in_dot_order(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  __m128 l0 = fold_halves(a0), l1 = fold_halves(a1), l2 = fold_halves(a2), l3 = fold_halves(a3);
  _MM_TRANSPOSE4_PS(l0, l1, l2, l3);  // l_k = lane k of the 4 sums
  return _mm_add_ps(_mm_add_ps(l0, l2), _mm_add_ps(l1, l3));
}

float dot(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  float sum = sum_in_dot_order(acc);  // then the tail
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// dot(q, row) of 8 rows at once (n a multiple of 8): 8 independent fma chains instead of one
// whose latency the FMA units waited on; the lanes of the 8 sums reduced by transposes in
// the order dot uses, so each result is dot's bit for bit.
void dot8(const float* q, const float* rows, int64_t n, float* out) {
  __m256 acc[8];
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 qv = _mm256_loadu_ps(q + i);
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(rows + r * n + i), acc[r]);
  }
#pragma GCC unroll 2
  for (int quad = 0; quad < 2; ++quad) {
    _mm_storeu_ps(out + 4 * quad,
                  sums_in_dot_order(acc[4 * quad], acc[4 * quad + 1], acc[4 * quad + 2], acc[4 * quad + 3]));
  }
}

float exp_shifted(float* x, float shift, int64_t n) {
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = V::exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(shift)));
    _mm256_storeu_ps(x + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (i < n) {
    const __m256i m = V::tail_mask(n - i);
    const __m256 e = V::exp(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), _mm256_set1_ps(shift)));
    _mm256_maskstore_ps(x + i, m, e);
    sum = _mm256_add_ps(sum, _mm256_and_ps(e, _mm256_castsi256_ps(m)));
  }
  return sum_in_dot_order(sum);
}

void scale(float* x, float factor, int64_t n) {
  const __m256 f = _mm256_set1_ps(factor);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), f));
  for (; i < n; ++i) x[i] *= factor;
}

// x *= factor; returns the maximum of x (a NaN is passed over, as std::max(max, NaN) does).
float scale_max(float* x, float factor, int64_t n) {
  const __m256 f = _mm256_set1_ps(factor);
  __m256 m = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), f);
    _mm256_storeu_ps(x + i, v);
    m = _mm256_max_ps(v, m);  // MAXPS gives its second operand when either is NaN
  }
  float result;
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  result = _mm_cvtss_f32(h);
  for (; i < n; ++i) {
    x[i] *= factor;
    result = std::max(result, x[i]);
  }
  return result;
}

// out += Σ_j weights[j] · rows[j·n ..]: 32 values of out at a time stay in 4 registers over the
// cells (4 independent FMA chains), then 8 at a time, then the tail.
void accumulate(float* out, const float* rows, const float* weights, int64_t count, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 acc[4];
    for (int u = 0; u < 4; ++u) acc[u] = _mm256_loadu_ps(out + i + 8 * u);
    for (int64_t j = 0; j < count; ++j) {
      const __m256 w = _mm256_set1_ps(weights[j]);
      for (int u = 0; u < 4; ++u)
        acc[u] = _mm256_fmadd_ps(_mm256_loadu_ps(rows + j * n + i + 8 * u), w, acc[u]);
    }
    for (int u = 0; u < 4; ++u) _mm256_storeu_ps(out + i + 8 * u, acc[u]);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 acc = _mm256_loadu_ps(out + i);
    for (int64_t j = 0; j < count; ++j) {
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(rows + j * n + i), _mm256_set1_ps(weights[j]), acc);
    }
    _mm256_storeu_ps(out + i, acc);
  }
  for (; i < n; ++i) {
    for (int64_t j = 0; j < count; ++j) out[i] = std::fma(rows[j * n + i], weights[j], out[i]);
  }
}

// Value rows as accumulate_held reads them: widened ones in the scratch (`n` floats apart), or
// an F16 cache's own rows (one pointer per cell), widened in registers where they are used.
struct WidenedRows {
  const float* rows;
  int64_t n;
  __m256 load(int64_t j, int64_t i) const { return _mm256_loadu_ps(rows + j * n + i); }
  float at(int64_t j, int64_t i) const { return rows[j * n + i]; }
};
struct CachedF16Rows {
  const uint8_t* const* rows;
  __m256 load(int64_t j, int64_t i) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j] + 2 * i)));
  }
  float at(int64_t j, int64_t i) const {
    uint16_t h;
    std::memcpy(&h, rows[j] + 2 * i, 2);
    return _cvtsh_ss(h);
  }
};

// accumulate for H heads at once (H ≤ 4): each value row is loaded once for all of them, 16
// values at a time (H × 2 accumulators and 2 row registers), then 8, then one. Per head and
// value the products are added in the same order, with the same fused operation, as accumulate.
template <int H, class Rows>
void accumulate_held(float* out, int64_t out_stride, const Rows& rows, const float* weights,
                     int64_t weight_stride, int64_t count, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 acc[H][2];
    for (int h = 0; h < H; ++h) {
      for (int u = 0; u < 2; ++u) acc[h][u] = _mm256_loadu_ps(out + h * out_stride + i + 8 * u);
    }
    for (int64_t j = 0; j < count; ++j) {
      const __m256 r0 = rows.load(j, i), r1 = rows.load(j, i + 8);
      for (int h = 0; h < H; ++h) {
        const __m256 w = _mm256_set1_ps(weights[h * weight_stride + j]);
        acc[h][0] = _mm256_fmadd_ps(r0, w, acc[h][0]);
        acc[h][1] = _mm256_fmadd_ps(r1, w, acc[h][1]);
      }
    }
    for (int h = 0; h < H; ++h) {
      for (int u = 0; u < 2; ++u) _mm256_storeu_ps(out + h * out_stride + i + 8 * u, acc[h][u]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    __m256 acc[H];
    for (int h = 0; h < H; ++h) acc[h] = _mm256_loadu_ps(out + h * out_stride + i);
    for (int64_t j = 0; j < count; ++j) {
      const __m256 r = rows.load(j, i);
      for (int h = 0; h < H; ++h)
        acc[h] = _mm256_fmadd_ps(r, _mm256_set1_ps(weights[h * weight_stride + j]), acc[h]);
    }
    for (int h = 0; h < H; ++h) _mm256_storeu_ps(out + h * out_stride + i, acc[h]);
  }
  for (; i < n; ++i) {
    for (int h = 0; h < H; ++h) {
      float& o = out[h * out_stride + i];
      for (int64_t j = 0; j < count; ++j) o = std::fma(rows.at(j, i), weights[h * weight_stride + j], o);
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

// out[h·kCellBlock + r] = q_h · row r for H heads (queries n apart) and R cached F16 rows (n a
// multiple of 8): each 8 values of a row are widened once, in a register, for all H heads,
// with H·R independent fma chains. Per head and row the same fma chain and lane sum as dot8's.
template <int H, int R>
void dots_held_f16(const float* q, int64_t n, const uint8_t* const* rows, float* out) {
  __m256 acc[H][R];
  for (int h = 0; h < H; ++h) {
    for (int r = 0; r < R; ++r) acc[h][r] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < n; i += 8) {
    __m256 qv[H];
    for (int h = 0; h < H; ++h) qv[h] = _mm256_loadu_ps(q + h * n + i);
    for (int r = 0; r < R; ++r) {
      const __m256 k = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r] + 2 * i)));
      for (int h = 0; h < H; ++h) acc[h][r] = _mm256_fmadd_ps(qv[h], k, acc[h][r]);
    }
  }
  // Sum t is head t / R's score of row t % R; each lane is stored where it goes (a copy through
  // a stack array was read back in one load across two stores, which cannot be forwarded).
  const auto score = [&](int t) { return out + (t / R) * kCellBlock + t % R; };
  constexpr int kSums = H * R;
  int t = 0;
  for (; t + 4 <= kSums; t += 4) {
    const __m128 v = sums_in_dot_order(acc[t / R][t % R], acc[(t + 1) / R][(t + 1) % R],
                                       acc[(t + 2) / R][(t + 2) % R], acc[(t + 3) / R][(t + 3) % R]);
    if constexpr (R % 4 == 0) {
      _mm_storeu_ps(score(t), v);
    } else if constexpr (R == 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(score(t)), v);
      _mm_storeh_pi(reinterpret_cast<__m64*>(score(t + 2)), v);
    } else {
      _mm_store_ss(score(t), v);
      _mm_store_ss(score(t + 1), _mm_shuffle_ps(v, v, 1));
      _mm_store_ss(score(t + 2), _mm_shuffle_ps(v, v, 2));
      _mm_store_ss(score(t + 3), _mm_shuffle_ps(v, v, 3));
    }
  }
  for (; t < kSums; ++t) *score(t) = sum_in_dot_order(acc[t / R][t % R]);
}

// Ops::dots_direct: the scores of the heads over `count` cached F16 rows (attention_loop.h),
// the heads in fours, each four's 8 / H rows at a time (8 accumulators), then one; the first
// four asks for as many rows ahead as it uses.
void dots_direct(const float* q, int32_t heads, int64_t n, const uint8_t* const* rows, int32_t count,
                 float* out, const RowsAhead& ahead) {
  for_head_quads(heads, [&]<int H>(int32_t h) {
    constexpr int R = H == 3 ? 2 : 8 / H;
    int32_t j = 0;
    for (; j + R <= count; j += R) {
      if (h == 0) ahead.ask(j, j + R);
      dots_held_f16<H, R>(q + h * n, n, rows + j, out + h * kCellBlock + j);
    }
    for (; j < count; ++j) {
      if (h == 0) ahead.ask(j, j + 1);
      dots_held_f16<H, 1>(q + h * n, n, rows + j, out + h * kCellBlock + j);
    }
  });
}

// Ops::accumulate_direct: accumulate_heads over cached F16 rows.
void accumulate_direct(float* out, int64_t out_stride, int32_t heads, const uint8_t* const* rows,
                       const float* weights, int64_t weight_stride, int64_t count, int64_t n) {
  for_head_quads(heads, [&]<int H>(int32_t h) {
    accumulate_held<H>(out + h * out_stride, out_stride, CachedF16Rows{rows}, weights + h * weight_stride,
                       weight_stride, count, n);
  });
}

struct Ops {
  static void widen(DType type, const uint8_t* row, float* out, int64_t n) {
    sinter::cpu::widen(type, row, out, n);
  }
  static void dots(const float* q, const float* rows, int64_t count, int64_t n, float* out) {
    int64_t j = 0;
    if (n % 8 == 0) {
      for (; j + 8 <= count; j += 8) dot8(q, rows + j * n, n, out + j);
    }
    for (; j < count; ++j) out[j] = sinter::cpu::dot(q, rows + j * n, n);
  }
  static float exp_shifted(float* x, float shift, int64_t n) { return sinter::cpu::exp_shifted(x, shift, n); }
  static void scale(float* x, float factor, int64_t n) { sinter::cpu::scale(x, factor, n); }
  static float scale_max(float* x, float factor, int64_t n) { return sinter::cpu::scale_max(x, factor, n); }
  static void accumulate(float* out, const float* rows, const float* weights, int64_t count, int64_t n) {
    sinter::cpu::accumulate(out, rows, weights, count, n);
  }
  static void accumulate_heads(float* out, int64_t out_stride, int32_t heads, const float* rows,
                               const float* weights, int64_t weight_stride, int64_t count, int64_t n) {
    sinter::cpu::accumulate_heads(out, out_stride, heads, rows, weights, weight_stride, count, n);
  }
  static void dots_direct(const float* q, int32_t heads, int64_t n, const uint8_t* const* rows, int32_t count,
                          float* out, const RowsAhead& ahead) {
    sinter::cpu::dots_direct(q, heads, n, rows, count, out, ahead);
  }
  static void accumulate_direct(float* out, int64_t out_stride, int32_t heads, const uint8_t* const* rows,
                                const float* weights, int64_t weight_stride, int64_t count, int64_t n) {
    sinter::cpu::accumulate_direct(out, out_stride, heads, rows, weights, weight_stride, count, n);
  }
};

}  // namespace

AttendGroupFn attend_group_avx2() { return attend_group_loop<Ops>; }

}  // namespace sinter::cpu
