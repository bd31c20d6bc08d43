// AVX-512 VNNI products of the K-quants (Q4_K, Q5_K, Q6_K) with Q8_K activation columns, on
// 16-row packed groups (docs/KERNELS.md). Per group of 32 (Q4_K/Q5_K) or 16 (Q6_K) values:
// VPDPBUSD sums of unsigned levels times activation bytes (starting from the column's −32·Σx for
// Q6_K), times the row's integer scale, summed over the super-block in int32 — the reference's
// exact integer sums; then one fma chain per row and column over super-blocks.
#include "backend/cpu/avx512/avx512_common.h"

namespace sinter::cpu::avx512 {
namespace {

// Calls f(g) for the groups g = 0 .. Count − 1 of a super-block in order. For tiles of few columns
// (generation) g is a constant (std::integral_constant) in a fully unrolled sequence, so that each
// group's offsets, nibble half and shifts fold away: with a run-time g the compiler kept ~15
// scalar instructions of offset and branch per level register, which halved Q6_K's rate from L2.
// Tiles of many columns amortize that over their columns and keep the loop, whose code fits the
// micro-op cache (unrolled, 8 columns measured slower).
constexpr int kUnrollColumns = 1;
template <int Count, int N, class F>
inline void over_super_block_groups(F&& f) {
  if constexpr (N <= kUnrollColumns) {
    [&]<int... G>(std::integer_sequence<int, G...>) { (f(std::integral_constant<int, G>{}), ...); }
    (std::make_integer_sequence<int, Count>{});
  } else {
    for (int g = 0; g < Count; ++g) f(g);
  }
}

constexpr size_t kQ4KRecord = 2368, kQ5KRecord = 2880, kQ6KRecord = 3360;

// Q4_K/Q5_K group g (values 32g..32g+31): slice 8·(g/2) + t, low nibbles for even g, high for odd;
// Q5_K adds bit g of the qh slice t as the fifth bit.
template <bool kFifth>
inline void k_levels(const uint8_t* rec, int g, __m512i* w) {
  const uint8_t* qs = rec + (kFifth ? 832 : 320) + 64 * 8 * (g / 2);
  const __m512i low = _mm512_set1_epi8(0x0f);
  for (int t = 0; t < 8; ++t) {
    const __m512i v = _mm512_loadu_si512(qs + 64 * t);
    w[t] = (g % 2 == 0) ? _mm512_and_si512(v, low) : _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
    if constexpr (kFifth) {
      const __m512i h = _mm512_loadu_si512(rec + 320 + 64 * t);
      const __m512i at4 = g <= 4 ? _mm512_slli_epi16(h, 4 - g) : _mm512_srli_epi16(h, g - 4);
      w[t] = _mm512_or_si512(w[t], _mm512_and_si512(at4, _mm512_set1_epi8(0x10)));
    }
  }
}

// The minimums' term of a super-block, Σ_g minimum[g]·Σx[g] per row, by VPDPWSSD over pairs of
// groups (4 per column) instead of a VPMULLD per group and column (2 uops each on Intel). The
// minimums (u8 at rec + 192 + 16g, one per row) are interleaved once per record, so that each
// row lane holds (minimum[2j], minimum[2j + 1]) as int16; a column's int32 sums (|Σx| ≤ 32·128)
// pack into int16 pairs. The integer sum is the same, so the bits are.
struct MinimumPairs {
  __m512i m[4];
  explicit MinimumPairs(const uint8_t* rec) {
    for (int j = 0; j < 4; ++j) {
      const __m128i even = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + 192 + 32 * j));
      const __m128i odd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + 192 + 32 * j + 16));
      m[j] =
          _mm512_cvtepu8_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(even, odd), _mm_unpacklo_epi8(even, odd)));
    }
  }
  __m512i dot(const int32_t* sums) const {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sums));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sums + 4));
    const __m512i pairs = _mm512_zextsi128_si512(_mm_packs_epi32(lo, hi));  // int32 j: (Σ2j, Σ2j+1)
    __m512i sum = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j)
      sum = _mm512_dpwssd_epi32(sum, m[j], _mm512_permutexvar_epi32(_mm512_set1_epi32(j), pairs));
    return sum;
  }
};

template <bool kFifth, int N>
void tile_scale_min(const uint8_t* group, int64_t super_blocks, const uint8_t* columns,
                    const ColumnLayout& layout, float* dst, int64_t dst_stride, int lanes) {
  constexpr size_t kRecord = kFifth ? kQ5KRecord : kQ4KRecord;
  const uint8_t* col_base[N];
  for (int c = 0; c < N; ++c) col_base[c] = columns + static_cast<size_t>(c) * layout.bytes;
  __m512 acc[N];
  for (int c = 0; c < N; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < super_blocks; ++sb) {
    const uint8_t* rec = group + static_cast<size_t>(sb) * kRecord;
    __m512i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm512_setzero_si512();
    over_super_block_groups<8, N>([&](auto g) {
      prefetch_step<kRecord, 8>(rec + kRecord, g);  // the next super-block, a share per group
      __m512i w[8];
      k_levels<kFifth>(rec, g, w);
      const __m512i scale = load_u8x16_as_i32(rec + 64 + 16 * g);
      for (int c = 0; c < N; ++c) {
        const Column x(col_base[c], layout);
        const int8_t* xq = x.q + 256 * sb + 32 * g;
        __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
        for (int t = 0; t < 8; t += 2) {
          s0 = _mm512_dpbusd_epi32(s0, w[t], broadcast_i32(xq + 4 * t));
          s1 = _mm512_dpbusd_epi32(s1, w[t + 1], broadcast_i32(xq + 4 * t + 4));
        }
        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), scale));
      }
    });
    const __m512 d = load_f16x16(rec), dmin = load_f16x16(rec + 32);
    const MinimumPairs minimum(rec);
    for (int c = 0; c < N; ++c) {
      const Column x(col_base[c], layout);
      const __m512 dx = _mm512_set1_ps(x.d[sb]);
      const __m512i msum = minimum.dot(x.sums + 8 * sb);
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, dx), acc[c]);
      acc[c] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(dmin, dx), acc[c]);
    }
  }
  for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride, acc[c], lanes);
}

// Q6_K group g (values 16g..16g+15): registers T = 4g..4g+3; low 4 bits from ql slice T (low
// nibble) or T − 32 (high nibble), top 2 bits from bits 2s of qh slice T % 16, s = T / 16.
inline void q6_levels(const uint8_t* rec, int g, __m512i* w) {
  const uint8_t* ql = rec + 288;
  const uint8_t* qh = rec + 288 + 2048;
  const __m512i low = _mm512_set1_epi8(0x0f);
  const __m512i top = _mm512_set1_epi8(0x30);
  for (int i = 0; i < 4; ++i) {
    const int slice = 4 * g + i;
    const __m512i l =
        slice < 32 ? _mm512_and_si512(_mm512_loadu_si512(ql + 64 * slice), low)
                   : _mm512_and_si512(_mm512_srli_epi16(_mm512_loadu_si512(ql + 64 * (slice - 32)), 4), low);
    const __m512i h = _mm512_loadu_si512(qh + 64 * (slice % 16));
    const int s = slice / 16;
    const __m512i at4 = s == 0   ? _mm512_slli_epi16(h, 4)
                        : s == 1 ? _mm512_slli_epi16(h, 2)
                        : s == 2 ? h
                                 : _mm512_srli_epi16(h, 2);
    w[i] = _mm512_ternarylogic_epi32(l, at4, top, 0xf8);  // l | (at4 & top)
  }
}

template <int N>
void tile_q6_k(const uint8_t* group, int64_t super_blocks, const uint8_t* columns, const ColumnLayout& layout,
               float* dst, int64_t dst_stride, int lanes) {
  const uint8_t* col_base[N];
  for (int c = 0; c < N; ++c) col_base[c] = columns + static_cast<size_t>(c) * layout.bytes;
  __m512 acc[N];
  for (int c = 0; c < N; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < super_blocks; ++sb) {
    const uint8_t* rec = group + static_cast<size_t>(sb) * kQ6KRecord;
    __m512i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm512_setzero_si512();
    over_super_block_groups<16, N>([&](auto g) {
      prefetch_step<kQ6KRecord, 16>(rec + kQ6KRecord, g);  // the next super-block, a share per group
      __m512i w[4];
      q6_levels(rec, g, w);
      const __m512i scale = load_i8x16_as_i32(rec + 32 + 16 * g);
      for (int c = 0; c < N; ++c) {
        const Column x(col_base[c], layout);
        const int8_t* xq = x.q + 256 * sb + 16 * g;
        __m512i s0 = _mm512_set1_epi32(x.sums[16 * sb + g]);  // −32·Σx of the group
        __m512i s1 = _mm512_setzero_si512();
        s0 = _mm512_dpbusd_epi32(s0, w[0], broadcast_i32(xq));
        s1 = _mm512_dpbusd_epi32(s1, w[1], broadcast_i32(xq + 4));
        s0 = _mm512_dpbusd_epi32(s0, w[2], broadcast_i32(xq + 8));
        s1 = _mm512_dpbusd_epi32(s1, w[3], broadcast_i32(xq + 12));
        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), scale));
      }
    });
    const __m512 d = load_f16x16(rec);
    for (int c = 0; c < N; ++c) {
      const Column x(col_base[c], layout);
      acc[c] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, _mm512_set1_ps(x.d[sb])), acc[c]);
    }
  }
  for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride, acc[c], lanes);
}

constexpr size_t kQ2KRecord = 1344, kQ3KRecord = 1824, kIQ4XSRecord = 2208;

// Q2_K/Q3_K group g (values 16g..16g+15): the 2-bit planes of slices 8h + 4·(g % 2) + i at bits
// 2p, h = g / 8, p = (g % 8) / 2 (value 128h + 32p + l sits in byte l of half h).
inline __m512i two_bits(const uint8_t* slices, int g, int i) {
  const int h = g / 8, p = (g % 8) / 2;
  const __m512i v = _mm512_loadu_si512(slices + 64 * (8 * h + 4 * (g % 2) + i));
  return _mm512_and_si512(_mm512_srli_epi16(v, 2 * p), _mm512_set1_epi8(3));
}

template <int N>
void tile_q2_k(const uint8_t* group, int64_t super_blocks, const uint8_t* columns, const ColumnLayout& layout,
               float* dst, int64_t dst_stride, int lanes) {
  const uint8_t* col_base[N];
  for (int c = 0; c < N; ++c) col_base[c] = columns + static_cast<size_t>(c) * layout.bytes;
  __m512 acc[N];
  for (int c = 0; c < N; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < super_blocks; ++sb) {
    const uint8_t* rec = group + static_cast<size_t>(sb) * kQ2KRecord;
    __m512i isum[N], msum[N];
    for (int c = 0; c < N; ++c) isum[c] = msum[c] = _mm512_setzero_si512();
    over_super_block_groups<16, N>([&](auto g) {
      prefetch_step<kQ2KRecord, 16>(rec + kQ2KRecord, g);  // the next super-block, a share per group
      __m512i w[4];
      for (int i = 0; i < 4; ++i) w[i] = two_bits(rec + 320, g, i);
      const __m512i packed = load_u8x16_as_i32(rec + 64 + 16 * g);
      const __m512i scale = _mm512_and_si512(packed, _mm512_set1_epi32(15));
      const __m512i minimum = _mm512_srli_epi32(packed, 4);
      for (int c = 0; c < N; ++c) {
        const Column x(col_base[c], layout);
        const int8_t* xq = x.q + 256 * sb + 16 * g;
        __m512i s0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[0], broadcast_i32(xq));
        __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[1], broadcast_i32(xq + 4));
        s0 = _mm512_dpbusd_epi32(s0, w[2], broadcast_i32(xq + 8));
        s1 = _mm512_dpbusd_epi32(s1, w[3], broadcast_i32(xq + 12));
        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), scale));
        msum[c] =
            _mm512_add_epi32(msum[c], _mm512_mullo_epi32(minimum, _mm512_set1_epi32(x.sums[16 * sb + g])));
      }
    });
    const __m512 d = load_f16x16(rec), dmin = load_f16x16(rec + 32);
    for (int c = 0; c < N; ++c) {
      const Column x(col_base[c], layout);
      const __m512 dx = _mm512_set1_ps(x.d[sb]);
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, dx), acc[c]);
      acc[c] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[c]), _mm512_mul_ps(dmin, dx), acc[c]);
    }
  }
  for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride, acc[c], lanes);
}

// Q3_K levels as unsigned q + 4 (two bits, plus 4 where the hmask bit 4h + p of byte l is set);
// the column's sums hold −4·Σx per 16 values.
inline __m512i q3_levels(const uint8_t* rec, int g, int i) {
  const int h = g / 8, p = (g % 8) / 2;
  const __m512i hm = _mm512_loadu_si512(rec + 1312 + 64 * (4 * (g % 2) + i));
  const int shift = 4 * h + p - 2;  // bit 4h + p to bit 2
  const __m512i at2 = shift >= 0 ? _mm512_srli_epi16(hm, static_cast<unsigned>(shift))
                                 : _mm512_slli_epi16(hm, static_cast<unsigned>(-shift));
  return _mm512_ternarylogic_epi32(two_bits(rec + 288, g, i), at2, _mm512_set1_epi8(4), 0xf8);  // a | (b & c)
}

template <int N>
void tile_q3_k(const uint8_t* group, int64_t super_blocks, const uint8_t* columns, const ColumnLayout& layout,
               float* dst, int64_t dst_stride, int lanes) {
  const uint8_t* col_base[N];
  for (int c = 0; c < N; ++c) col_base[c] = columns + static_cast<size_t>(c) * layout.bytes;
  __m512 acc[N];
  for (int c = 0; c < N; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < super_blocks; ++sb) {
    const uint8_t* rec = group + static_cast<size_t>(sb) * kQ3KRecord;
    __m512i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm512_setzero_si512();
    over_super_block_groups<16, N>([&](auto g) {
      prefetch_step<kQ3KRecord, 16>(rec + kQ3KRecord, g);  // the next super-block, a share per group
      __m512i w[4];
      for (int i = 0; i < 4; ++i) w[i] = q3_levels(rec, g, i);
      const __m512i scale = load_i8x16_as_i32(rec + 32 + 16 * g);
      for (int c = 0; c < N; ++c) {
        const Column x(col_base[c], layout);
        const int8_t* xq = x.q + 256 * sb + 16 * g;
        __m512i s0 = _mm512_set1_epi32(x.sums[16 * sb + g]);  // −4·Σx of the group
        __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[1], broadcast_i32(xq + 4));
        s0 = _mm512_dpbusd_epi32(s0, w[0], broadcast_i32(xq));
        s0 = _mm512_dpbusd_epi32(s0, w[2], broadcast_i32(xq + 8));
        s1 = _mm512_dpbusd_epi32(s1, w[3], broadcast_i32(xq + 12));
        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), scale));
      }
    });
    const __m512 d = load_f16x16(rec);
    for (int c = 0; c < N; ++c) {
      const Column x(col_base[c], layout);
      acc[c] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, _mm512_set1_ps(x.d[sb])), acc[c]);
    }
  }
  for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride, acc[c], lanes);
}

// IQ4_XS group g (values 32g..32g+31): slices 4g..4g+3, low nibbles then high nibbles, looked up
// as table value + 128; the column's sums hold −128·Σx per 32 values.
template <int N>
void tile_iq4_xs(const uint8_t* group, int64_t super_blocks, const uint8_t* columns,
                 const ColumnLayout& layout, float* dst, int64_t dst_stride, int lanes) {
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, -127, -115, -103, -90, -75, -59, -39, -15));
  const __m512i low = _mm512_set1_epi8(0x0f);
  const uint8_t* col_base[N];
  for (int c = 0; c < N; ++c) col_base[c] = columns + static_cast<size_t>(c) * layout.bytes;
  __m512 acc[N];
  for (int c = 0; c < N; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < super_blocks; ++sb) {
    const uint8_t* rec = group + static_cast<size_t>(sb) * kIQ4XSRecord;
    __m512i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm512_setzero_si512();
    over_super_block_groups<8, N>([&](auto g) {
      prefetch_step<kIQ4XSRecord, 8>(rec + kIQ4XSRecord, g);  // the next super-block, a share per group
      __m512i w[8];
      for (int i = 0; i < 4; ++i) {
        const __m512i v = _mm512_loadu_si512(rec + 160 + 64 * (4 * g + i));
        w[i] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low));
        w[4 + i] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
      }
      const __m512i scale = load_i8x16_as_i32(rec + 32 + 16 * g);
      for (int c = 0; c < N; ++c) {
        const Column x(col_base[c], layout);
        const int8_t* xq = x.q + 256 * sb + 32 * g;
        __m512i s0 = _mm512_set1_epi32(x.sums[8 * sb + g]);  // −128·Σx of the group
        __m512i s1 = _mm512_setzero_si512();
        for (int t = 0; t < 8; t += 2) {
          s0 = _mm512_dpbusd_epi32(s0, w[t], broadcast_i32(xq + 4 * t));
          s1 = _mm512_dpbusd_epi32(s1, w[t + 1], broadcast_i32(xq + 4 * t + 4));
        }
        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), scale));
      }
    });
    const __m512 d = load_f16x16(rec);
    for (int c = 0; c < N; ++c) {
      const Column x(col_base[c], layout);
      acc[c] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, _mm512_set1_ps(x.d[sb])), acc[c]);
    }
  }
  for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride, acc[c], lanes);
}

template <class Tile>
void over_groups(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
                 const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride,
                 Tile tile_fn) {
  for (int64_t g = group_begin; g < group_end; ++g) {
    const uint8_t* group = w.data + static_cast<size_t>(g) * w.group_bytes;
    const int lanes = static_cast<int>(min64(kGroupRows, w.n_out - g * kGroupRows));
    over_columns<8>(column_count, [&]<int N>(int64_t c) {
      tile_fn.template operator()<N>(group, w.n_in / 256, columns + static_cast<size_t>(c) * layout.bytes,
                                     layout, dst + c * dst_stride + g * kGroupRows, dst_stride, lanes);
    });
  }
}

}  // namespace

void gemm_q4_k(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  over_groups(w, gb, ge, x, l, m, dst, stride,
              []<int N>(auto... args) { tile_scale_min<false, N>(args...); });
}
void gemm_q5_k(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  over_groups(w, gb, ge, x, l, m, dst, stride, []<int N>(auto... args) { tile_scale_min<true, N>(args...); });
}
void gemm_q6_k(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  over_groups(w, gb, ge, x, l, m, dst, stride, []<int N>(auto... args) { tile_q6_k<N>(args...); });
}

void gemm_q2_k(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  over_groups(w, gb, ge, x, l, m, dst, stride, []<int N>(auto... args) { tile_q2_k<N>(args...); });
}
void gemm_q3_k(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  over_groups(w, gb, ge, x, l, m, dst, stride, []<int N>(auto... args) { tile_q3_k<N>(args...); });
}
void gemm_iq4_xs(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
                 int64_t m, float* dst, int64_t stride) {
  over_groups(w, gb, ge, x, l, m, dst, stride, []<int N>(auto... args) { tile_iq4_xs<N>(args...); });
}

}  // namespace sinter::cpu::avx512
