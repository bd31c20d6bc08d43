// AVX2 products of the K-quants (Q4_K, Q5_K, Q6_K) with Q8_K activation columns, on 16-row
// packed groups read as two halves of 8 rows (docs/KERNELS.md). Integer sums per group (int16
// pairs summed while they cannot overflow, then int32), times the row's integer scale, summed
// over the super-block in int32: the reference's exact integer sums; then one fma chain per row
// and column over super-blocks.
#include "backend/cpu/avx2/block_tile_avx2.h"

namespace sinter::cpu::avx2 {
namespace {

constexpr size_t kQ4KRecord = 2368, kQ5KRecord = 2880, kQ6KRecord = 3360;

// What block_gemm needs of a K-quant kernel: records of one 256-value super-block, prefetched
// one super-block ahead.
template <size_t kRecordBytes>
struct SuperBlock {
  static constexpr size_t kRecord = kRecordBytes;
  static constexpr int64_t kValues = 256;
  static constexpr size_t kPrefetchAhead = kRecordBytes;
};

// A super-block's term of each column's chain (the reference's order): acc += float(isum)·(d·d_x),
// then for the types with minimums acc −= float(msum)·(dmin·d_x). The record holds the rows' d
// lanes at 0 and dmin lanes at 32.
template <int N, bool kMinimum>
inline void add_super_block(const uint8_t* rec, int half, int64_t sb, const Column* x, const __m256i* isum,
                            const __m256i* msum, __m256* acc) {
  const __m256 d = load_f16x8(rec + 16 * half);
  for (int c = 0; c < N; ++c) {
    const __m256 dx = _mm256_set1_ps(x[c].d[sb]);
    acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_mul_ps(d, dx), acc[c]);
    if constexpr (kMinimum) {
      const __m256 dmin = load_f16x8(rec + 32 + 16 * half);
      acc[c] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[c]), _mm256_mul_ps(dmin, dx), acc[c]);
    }
  }
}

// The end of a step of the both-halves loops: the running sums exist here, in registers, and no
// instruction moves across. Without it gcc summed the groups' terms as a tree and started every
// group's loads and prefetches at the top of the record, holding the terms in ~240 stack slots.
inline void step_done(__m256i& a, __m256i& b) { asm volatile("" : "+x"(a), "+x"(b)); }
inline void step_done(__m256i& a, __m256i& b, __m256i& c, __m256i& d) {
  asm volatile("" : "+x"(a), "+x"(b), "+x"(c), "+x"(d));
}

// Q4_K/Q5_K group g (values 32g..32g+31), rows of one half: register t (values 4t..4t+3).
template <bool kFifth>
inline __m256i k_level(const uint8_t* rec, int half, int g, int t) {
  const uint8_t* qs = rec + (kFifth ? 832 : 320) + 64 * 8 * (g / 2) + 32 * half;
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i v = load256(qs + 64 * t);
  __m256i w = (g % 2 == 0) ? _mm256_and_si256(v, low) : _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  if constexpr (kFifth) {
    const __m256i h = load256(rec + 320 + 64 * t + 32 * half);
    const __m256i at4 = g <= 4 ? _mm256_slli_epi16(h, 4 - g) : _mm256_srli_epi16(h, g - 4);
    w = _mm256_or_si256(w, _mm256_and_si256(at4, _mm256_set1_epi8(0x10)));
  }
  return w;
}

// The minimums' term of Q4_K/Q5_K, Σ over the 8 groups of minimum[row][g]·Σx[g], for the rows
// of one half: VPMADDWD over pairs of groups instead of a VPMULLD per group. The minimums (u8 at
// rec + 192 + 16g + 8·half) are interleaved by pairs of groups once per record; a column's int32
// sums (|Σx| ≤ 32·128) pack into int16 pairs.
struct MinimumPairs {
  __m256i m[4];  // pair j: each row lane holds (minimum[2j], minimum[2j + 1]) as int16
  MinimumPairs(const uint8_t* rec, int half) {
    for (int j = 0; j < 4; ++j) {
      const __m128i even = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + 192 + 32 * j));
      const __m128i odd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rec + 192 + 32 * j + 16));
      m[j] = _mm256_cvtepu8_epi16(half == 0 ? _mm_unpacklo_epi8(even, odd) : _mm_unpackhi_epi8(even, odd));
    }
  }
  __m256i dot(const int32_t* sums) const {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums));
    const __m256i p = _mm256_packs_epi32(v, v);  // int32 elements: (Σ0,Σ1) (Σ2,Σ3) · · (Σ4,Σ5) (Σ6,Σ7) · ·
    constexpr int kElement[4] = {0, 1, 4, 5};
    __m256i sum = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j)
      sum = _mm256_add_epi32(
          sum, _mm256_madd_epi16(m[j], _mm256_permutevar8x32_epi32(p, _mm256_set1_epi32(kElement[j]))));
    return sum;
  }
};

template <bool kFifth>
struct ScaleMinK : SuperBlock<(kFifth ? kQ5KRecord : kQ4KRecord)> {
  static constexpr int kPrefetchSteps = 8;
  template <int N>
  static void add(const uint8_t* rec, int half, int64_t sb, const Column* x, __m256* acc,
                  PrefetchShare ahead) {
    // The minimums' term: with few columns a VPMULLD per group and column; with more, the
    // interleaving of MinimumPairs pays (one core, per record: 1 column 118 vs 127 cycles,
    // 4 columns 340 vs 303).
    constexpr bool kPairedMinimums = N > 2;
    __m256i isum[N], msum[N];
    for (int c = 0; c < N; ++c) isum[c] = msum[c] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 8; ++g) {
      ahead.step<kPrefetchSteps>(g);
      const __m256i scale = as_pair_scale(load_u8x8_as_i32(rec + 64 + 16 * g + 8 * half));
      if constexpr (kFifth) {
        // Q5_K: register by register over the columns, so that one register of levels is live,
        // not 8; the int16 pairs of 4 registers at a time (levels ≤ 31). One core, per
        // half-record: 1 column 178 -> 159 cycles, 4 columns 412 -> 396. (Q4_K measured slower
        // this way at 4 columns, 300 -> 316 or 363: gcc spilled more.)
        __m256i pairs[N];
#pragma GCC unroll 8
        for (int t = 0; t < 8; ++t) {
          const __m256i w = k_level<true>(rec, half, g, t);
          for (int c = 0; c < N; ++c) {
            const __m256i p = _mm256_maddubs_epi16(w, broadcast_i32(x[c].q + 256 * sb + 32 * g + 4 * t));
            pairs[c] = t % 4 == 0 ? p : _mm256_add_epi16(pairs[c], p);
            if (t % 4 == 3) isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(pairs[c], scale));
          }
        }
      } else {
        __m256i w[8];
        for (int t = 0; t < 8; ++t) w[t] = k_level<false>(rec, half, g, t);
        for (int c = 0; c < N; ++c) {  // levels ≤ 15: the int16 pairs of all eight registers fit
          const int8_t* xq = x[c].q + 256 * sb + 32 * g;
          __m256i a = _mm256_maddubs_epi16(w[0], broadcast_i32(xq));
          for (int t = 1; t < 8; ++t)
            a = _mm256_add_epi16(a, _mm256_maddubs_epi16(w[t], broadcast_i32(xq + 4 * t)));
          isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(a, scale));
        }
      }
      if constexpr (!kPairedMinimums) {
        const __m256i minimum = load_u8x8_as_i32(rec + 192 + 16 * g + 8 * half);
        for (int c = 0; c < N; ++c)
          msum[c] = _mm256_add_epi32(msum[c],
                                     _mm256_mullo_epi32(minimum, _mm256_set1_epi32(x[c].sums[8 * sb + g])));
      }
    }
    if constexpr (kPairedMinimums) {
      const MinimumPairs minimum(rec, half);
      for (int c = 0; c < N; ++c) msum[c] = minimum.dot(x[c].sums + 8 * sb);
    }
    add_super_block<N, true>(rec, half, sb, x, isum, msum, acc);
  }

  // Generation's one column, both halves per group, register by register: each activation word
  // is broadcast once for the two halves, and ~12 registers are live. (Run as add per half, gcc
  // hoisted the super-block's 64 activation words out of the loop over the halves into stack
  // slots: ~260 stack accesses per record.) One core, 2048 × 8192 from L3: Q4_K 15–17 -> 21–25
  // GB/s, from memory alike. Q5_K keeps add per half: from L3 +5 %, from memory 10 -> 7–9.
  static void add_both(const uint8_t* rec, int64_t sb, const Column& x, __m256 (*acc)[1],
                       PrefetchShare ahead) requires(!kFifth) {
    __m256i isum[2], msum[2];  // per half
    for (int h = 0; h < 2; ++h) isum[h] = msum[h] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 8; ++g) {
      __m256i pairs[2];
#pragma GCC unroll 8
      for (int t = 0; t < 8; ++t) {
        if (t % 4 == 0) ahead.step<2 * kPrefetchSteps>(2 * g + t / 4);  // as many lines per step as add
        const __m256i xb = broadcast_i32(x.q + 256 * sb + 32 * g + 4 * t);
        for (int h = 0; h < 2; ++h) {
          // Levels ≤ 15: the int16 pairs of all eight registers fit.
          const __m256i p = _mm256_maddubs_epi16(k_level<false>(rec, h, g, t), xb);
          pairs[h] = t == 0 ? p : _mm256_add_epi16(pairs[h], p);
          if (t == 7) {
            const __m256i scale = as_pair_scale(load_u8x8_as_i32(rec + 64 + 16 * g + 8 * h));
            isum[h] = _mm256_add_epi32(isum[h], _mm256_madd_epi16(pairs[h], scale));
          }
        }
        step_done(pairs[0], pairs[1]);
      }
      const __m256i sums = _mm256_set1_epi32(x.sums[8 * sb + g]);
      for (int h = 0; h < 2; ++h)
        msum[h] =
            _mm256_add_epi32(msum[h], _mm256_mullo_epi32(load_u8x8_as_i32(rec + 192 + 16 * g + 8 * h), sums));
      step_done(isum[0], isum[1], msum[0], msum[1]);
    }
    for (int h = 0; h < 2; ++h) add_super_block<1, true>(rec, h, sb, &x, &isum[h], &msum[h], acc[h]);
  }
};

// Q6_K group g (values 16g..16g+15): registers T = 4g..4g+3 (see the AVX-512 kernel).
inline void q6_levels(const uint8_t* rec, int half, int g, __m256i* w) {
  const uint8_t* ql = rec + 288 + 32 * half;
  const uint8_t* qh = rec + 288 + 2048 + 32 * half;
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i top = _mm256_set1_epi8(0x30);
  for (int i = 0; i < 4; ++i) {
    const int slice = 4 * g + i;
    const __m256i l = slice < 32
                          ? _mm256_and_si256(load256(ql + 64 * slice), low)
                          : _mm256_and_si256(_mm256_srli_epi16(load256(ql + 64 * (slice - 32)), 4), low);
    const __m256i h = load256(qh + 64 * (slice % 16));
    const int s = slice / 16;
    const __m256i at4 = s == 0   ? _mm256_slli_epi16(h, 4)
                        : s == 1 ? _mm256_slli_epi16(h, 2)
                        : s == 2 ? h
                                 : _mm256_srli_epi16(h, 2);
    w[i] = _mm256_or_si256(l, _mm256_and_si256(at4, top));
  }
}

// Q6_K group g's term for the 8 rows of one half and one column: scale · (Σ level·x − 32·Σx),
// given the group's levels w, activation broadcasts xb and the column's −32·Σx. Levels ≤ 63: two
// int16 pairs at a time (2 · 2·63·128 < 2^15).
inline __m256i q6_group_term(const __m256i* w, const __m256i* xb, __m256i offset, __m256i scale) {
  const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(w[0], xb[0]), _mm256_maddubs_epi16(w[1], xb[1]));
  const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(w[2], xb[2]), _mm256_maddubs_epi16(w[3], xb[3]));
  return _mm256_mullo_epi32(_mm256_add_epi32(_mm256_add_epi32(widen_pairs(a), widen_pairs(b)), offset),
                            scale);
}

struct Q6K : SuperBlock<kQ6KRecord> {
  static constexpr int kPrefetchSteps = 16;
  template <int N>
  static void add(const uint8_t* rec, int half, int64_t sb, const Column* x, __m256* acc,
                  PrefetchShare ahead) {
    __m256i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 16; ++g) {
      ahead.step<kPrefetchSteps>(g);
      __m256i w[4];
      q6_levels(rec, half, g, w);
      const __m256i scale = load_i8x8_as_i32(rec + 32 + 16 * g + 8 * half);
      for (int c = 0; c < N; ++c) {
        const int8_t* xq = x[c].q + 256 * sb + 16 * g;
        __m256i xb[4];
        for (int i = 0; i < 4; ++i) xb[i] = broadcast_i32(xq + 4 * i);
        isum[c] = _mm256_add_epi32(
            isum[c], q6_group_term(w, xb, _mm256_set1_epi32(x[c].sums[16 * sb + g]), scale));  // − 32·Σx
      }
    }
    add_super_block<N, false>(rec, half, sb, x, isum, nullptr, acc);
  }

  // Generation's one column, both halves per group (see ScaleMinK::add_both). One core,
  // 2048 × 8192 from L3: 9–10 -> 10–11 GB/s; from memory alike.
  static void add_both(const uint8_t* rec, int64_t sb, const Column& x, __m256 (*acc)[1],
                       PrefetchShare ahead) {
    __m256i isum[2];  // per half
    for (int h = 0; h < 2; ++h) isum[h] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 16; ++g) {
      const int8_t* xq = x.q + 256 * sb + 16 * g;
      __m256i xb[4];
      for (int i = 0; i < 4; ++i) xb[i] = broadcast_i32(xq + 4 * i);
      const __m256i offset = _mm256_set1_epi32(x.sums[16 * sb + g]);  // − 32·Σx
      for (int h = 0; h < 2; ++h) {
        ahead.step<2 * kPrefetchSteps>(2 * g + h);  // as many lines per step as add
        __m256i w[4];
        q6_levels(rec, h, g, w);
        isum[h] = _mm256_add_epi32(isum[h],
                                   q6_group_term(w, xb, offset, load_i8x8_as_i32(rec + 32 + 16 * g + 8 * h)));
      }
      step_done(isum[0], isum[1]);
    }
    for (int h = 0; h < 2; ++h) add_super_block<1, false>(rec, h, sb, &x, &isum[h], nullptr, acc[h]);
  }
};

constexpr size_t kQ2KRecord = 1344, kQ3KRecord = 1824, kIQ4XSRecord = 2208;

// Q2_K/Q3_K group g (values 16g..16g+15): the 2-bit planes of slices 8h + 4·(g % 2) + i at bits
// 2p, h = g / 8, p = (g % 8) / 2.
inline __m256i two_bits(const uint8_t* slices, int half, int g, int i) {
  const int h = g / 8, p = (g % 8) / 2;
  const __m256i v = load256(slices + 64 * (8 * h + 4 * (g % 2) + i) + 32 * half);
  return _mm256_and_si256(_mm256_srli_epi16(v, 2 * p), _mm256_set1_epi8(3));
}

// Σ of 4 registers of small unsigned levels (≤ 7) times activation bytes, in int16 pairs.
inline __m256i dot4_pairs(const __m256i* w, const int8_t* xq) {
  __m256i p = _mm256_maddubs_epi16(w[0], broadcast_i32(xq));
  for (int i = 1; i < 4; ++i) p = _mm256_add_epi16(p, _mm256_maddubs_epi16(w[i], broadcast_i32(xq + 4 * i)));
  return p;
}

struct Q2K : SuperBlock<kQ2KRecord> {
  static constexpr int kPrefetchSteps = 16;
  template <int N>
  static void add(const uint8_t* rec, int half, int64_t sb, const Column* x, __m256* acc,
                  PrefetchShare ahead) {
    __m256i isum[N], msum[N];
    for (int c = 0; c < N; ++c) isum[c] = msum[c] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 16; ++g) {
      ahead.step<kPrefetchSteps>(g);
      __m256i w[4];
      for (int i = 0; i < 4; ++i) w[i] = two_bits(rec + 320, half, g, i);
      const __m256i packed = load_u8x8_as_i32(rec + 64 + 16 * g + 8 * half);
      const __m256i scale = as_pair_scale(_mm256_and_si256(packed, _mm256_set1_epi32(15)));
      const __m256i minimum = _mm256_srli_epi32(packed, 4);
      for (int c = 0; c < N; ++c) {
        const __m256i pairs = dot4_pairs(w, x[c].q + 256 * sb + 16 * g);
        isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(pairs, scale));
        msum[c] =
            _mm256_add_epi32(msum[c], _mm256_mullo_epi32(minimum, _mm256_set1_epi32(x[c].sums[16 * sb + g])));
      }
    }
    add_super_block<N, true>(rec, half, sb, x, isum, msum, acc);
  }
};

// Q3_K levels as unsigned q + 4; the column's sums hold −4·Σx per 16 values.
inline __m256i q3_levels(const uint8_t* rec, int half, int g, int i) {
  const int h = g / 8, p = (g % 8) / 2;
  const __m256i hm = load256(rec + 1312 + 64 * (4 * (g % 2) + i) + 32 * half);
  const int shift = 4 * h + p - 2;  // bit 4h + p to bit 2
  const __m256i at2 = shift >= 0 ? _mm256_srli_epi16(hm, shift) : _mm256_slli_epi16(hm, -shift);
  return _mm256_or_si256(two_bits(rec + 288, half, g, i), _mm256_and_si256(at2, _mm256_set1_epi8(4)));
}

struct Q3K : SuperBlock<kQ3KRecord> {
  static constexpr int kPrefetchSteps = 16;
  template <int N>
  static void add(const uint8_t* rec, int half, int64_t sb, const Column* x, __m256* acc,
                  PrefetchShare ahead) {
    __m256i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 16; ++g) {
      ahead.step<kPrefetchSteps>(g);
      __m256i w[4];
      for (int i = 0; i < 4; ++i) w[i] = q3_levels(rec, half, g, i);
      const __m256i scale = load_i8x8_as_i32(rec + 32 + 16 * g + 8 * half);
      for (int c = 0; c < N; ++c) {
        const __m256i sum = _mm256_add_epi32(widen_pairs(dot4_pairs(w, x[c].q + 256 * sb + 16 * g)),
                                             _mm256_set1_epi32(x[c].sums[16 * sb + g]));  // − 4·Σx
        isum[c] = _mm256_add_epi32(isum[c], _mm256_mullo_epi32(sum, scale));
      }
    }
    add_super_block<N, false>(rec, half, sb, x, isum, nullptr, acc);
  }
};

// IQ4_XS group g: table values (signed) × activations with the sign trick, each register's int16
// pairs widened at once, times the scale (the column's −128·Σx sums are for the unsigned VNNI
// form and unused here).
struct IQ4XS : SuperBlock<kIQ4XSRecord> {
  static constexpr int kPrefetchSteps = 8;
  template <int N>
  static void add(const uint8_t* rec, int half, int64_t sb, const Column* x, __m256* acc,
                  PrefetchShare ahead) {
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    const __m256i low = _mm256_set1_epi8(0x0f);
    __m256i isum[N];
    for (int c = 0; c < N; ++c) isum[c] = _mm256_setzero_si256();
#pragma GCC unroll 16  // g must be a constant: the level extraction depends on it
    for (int g = 0; g < 8; ++g) {
      ahead.step<kPrefetchSteps>(g);
      __m256i w[8];
      for (int i = 0; i < 4; ++i) {
        const __m256i v = load256(rec + 160 + 64 * (4 * g + i) + 32 * half);
        w[i] = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
        w[4 + i] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
      }
      const __m256i scale = as_pair_scale(load_i8x8_as_i32(rec + 32 + 16 * g + 8 * half));
      for (int c = 0; c < N; ++c) {
        const int8_t* xq = x[c].q + 256 * sb + 32 * g;
        for (int t = 0; t < 8; ++t) {  // each int16 pair times the scale as it is widened
          const __m256i p =
              _mm256_maddubs_epi16(_mm256_abs_epi8(w[t]), _mm256_sign_epi8(broadcast_i32(xq + 4 * t), w[t]));
          isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(p, scale));
        }
      }
    }
    add_super_block<N, false>(rec, half, sb, x, isum, nullptr, acc);
  }
};

}  // namespace

SINTER_DEFINE_ISA_GEMM(gemm_q4_k, block_gemm<ScaleMinK<false>>)
SINTER_DEFINE_ISA_GEMM(gemm_q5_k, block_gemm<ScaleMinK<true>>)
SINTER_DEFINE_ISA_GEMM(gemm_q6_k, block_gemm<Q6K>)

SINTER_DEFINE_ISA_GEMM(gemm_q2_k, block_gemm<Q2K>)
SINTER_DEFINE_ISA_GEMM(gemm_q3_k, block_gemm<Q3K>)
SINTER_DEFINE_ISA_GEMM(gemm_iq4_xs, block_gemm<IQ4XS>)

}  // namespace sinter::cpu::avx2
